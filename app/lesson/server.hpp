#pragma once
// The live lesson's server: one libwebsockets context on its own service thread, one vhost
// that serves the site folder over HTTP (or HTTPS, given a certificate) and the lesson's
// WebSocket at /lesson.
//
// A student connects to ws://HOST:PORT/lesson?lesson=CODE, the teacher to
// ws://HOST:PORT/lesson?teacher=SECRET (the query strings of the two printed page addresses;
// wss:// over HTTPS).
// Every connection gets the current state at once; the teacher's messages change it and every
// connection gets the new state, in order. Other threads talk to the service thread only
// through a locked queue and lws_cancel_service().
//
// A connection's outgoing messages wait in its own queue; one that holds more than
// max_backlog messages belongs to a client that stopped reading, and that connection is
// dropped (counted as dropped_slow) so that it holds no memory and no one waits for it.
//
// Before the code is read, a handshake whose Origin is not the page's own is refused, and so
// is an address locked for its wrong codes; a student past its address's seats is refused
// after the class's limit (lesson/guard.hpp). Each refusal says why in one line.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "lesson/guard.hpp"

namespace headsplit::lesson {

struct ServerOptions {
    std::string bind;         // an address of this machine; empty: every interface
    int port = 8080;          // 0: any free port
    int max_students = 300;
    // A student's seats from one network address, at most (lesson/guard.hpp).
    int seats_per_address = kDefaultSeatsPerAddress;
    std::string site;         // the site folder (site_root() of it)
    std::string query;        // the lesson's first state: a page address's query
    std::size_t max_backlog = 256;
    // HTTPS and wss:// with this certificate and key (PEM files); both empty: plain HTTP.
    std::string tls_cert, tls_key;
    // How to choose another port, said after why this one cannot be had.
    std::string port_advice = "choose another with --port N, or --port 0 for any free port";
};

class Server {
public:
    // Listens, makes the join code and the teacher's secret, and starts the service thread.
    // Throws std::runtime_error with one line naming the bad value when it cannot listen.
    explicit Server(ServerOptions options);
    ~Server();  // stop()
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    int port() const;
    const std::string& join_code() const;
    const std::string& teacher_secret() const;

    // A teacher's message, as if the teacher's page had sent it (any thread).
    void post_teacher_message(std::string json);
    // The latest stats message, as the teacher's connection gets it (the class, the answers,
    // the refusals), and a version that goes up each time it changes (any thread). The
    // service thread publishes it whenever the class or the lesson changes.
    struct Stats {
        std::uint64_t version = 0;
        std::string json;
    };
    Stats latest_stats() const;
    // Tells every connection {"type":"ended"}, closes them (waiting at most a few seconds for
    // the slow ones) and ends the service thread (any thread but the service thread; again: nothing).
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace headsplit::lesson
