#include "lesson/server.hpp"

#include <arpa/inet.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include <libwebsockets.h>

#include "lesson/guard.hpp"
#include "lesson/protocol.hpp"
#include "lesson/site.hpp"

namespace headsplit::lesson {

namespace {

using Message = std::shared_ptr<const std::string>;

constexpr int kSocketSendBuffer = 64 * 1024;
constexpr unsigned short kMaxRequestHeadBytes = 16 * 1024;
// What a connection may send, counted in the kernel's bytes received (TCP_INFO): control
// frames (pings) never reach the callback, so only these bytes bound them. A student's page
// sends a few short messages a minute; the teacher's up to 200 a second, each under 4 KiB.
constexpr double kStudentBytesPerSecond = 32 * 1024, kStudentBytesBurst = 128 * 1024;
constexpr double kTeacherBytesPerSecond = 1024 * 1024, kTeacherBytesBurst = 2 * 1024 * 1024;
constexpr double kBytesCheckSeconds = 0.2;

std::uint64_t bytes_received(lws* wsi) {
    tcp_info ti{};
    socklen_t len = sizeof ti;
    if (::getsockopt(lws_get_socket_fd(wsi), IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return 0;
    return ti.tcpi_bytes_received;
}

// A browser sends each message as one frame, which may reach the callback in a few pieces.
constexpr double kFramesPerMessage = 4;

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One WebSocket connection, from its handshake to its close.
struct Session {
    std::uint64_t id = 0;
    lws* wsi = nullptr;
    std::optional<Role> role;
    std::string address;           // the peer's IP address
    bool student_counted = false;  // counted in the class and its address's seats (left on close)
    std::deque<Message> out;
    bool stats_dirty = false;
    bool closing = false;  // send what is queued, then close with close_status
    lws_close_status close_status = LWS_CLOSE_STATUS_NORMAL;
    std::string rx;  // the message being received, fragment by fragment
    TokenBucket bucket{kStudentMessagesPerSecond, kStudentMessagesPerSecond};
    // Every frame, or piece of one, the callback is given: empty continuation frames carry no
    // message yet cost as much to take.
    TokenBucket frames{kFramesPerMessage * kStudentMessagesPerSecond, kFramesPerMessage * kStudentMessagesPerSecond};
    std::vector<unsigned char> scratch;  // LWS_PRE + the message being written
    std::uint64_t bytes_seen = 0;        // the kernel's count of bytes received, when last looked at
    TokenBucket bytes{kStudentBytesPerSecond, kStudentBytesBurst};
};

// What libwebsockets keeps per connection (HTTP or WebSocket): a pointer to our session.
struct PerSession {
    Session* session;
};

struct Command {
    enum class Kind { TeacherMessage, Stop } kind;
    std::string text;
};

// A request header as sent (at most 512 bytes), or empty when it was not sent.
std::optional<std::string> header(lws* wsi, lws_token_indexes token) {
    const int n = lws_hdr_total_length(wsi, token);
    if (n <= 0) return std::nullopt;
    char buf[513];
    if (n >= static_cast<int>(sizeof buf)) return std::string(512, '?');
    const int got = lws_hdr_copy(wsi, buf, sizeof buf, token);
    return std::string(buf, got > 0 ? static_cast<std::size_t>(got) : 0);
}

// The answer to a CONNECT, written at once (a few hundred bytes fit any socket's buffer).
void refuse_connect(lws* wsi) {
    static const std::string body = "the lesson serves its page with GET and HEAD only; CONNECT is not served\n";
    const std::string reply = "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Type: text/plain; "
                              "charset=utf-8\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    std::vector<unsigned char> buf(LWS_PRE + reply.size());
    std::memcpy(buf.data() + LWS_PRE, reply.data(), reply.size());
    lws_write(wsi, buf.data() + LWS_PRE, reply.size(), LWS_WRITE_RAW);
}

// Why the port could not be had, by binding it ourselves (libwebsockets only says it failed),
// with `advice` on choosing another; empty when it can be had.
std::string listen_problem(const std::string& bind, int port, const std::string& advice) {
    const std::string where =
        (bind.empty() ? std::string("every interface") : bind) + (port ? " port " + std::to_string(port) : std::string());
    const bool v6 = bind.find(':') != std::string::npos;
    const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    int err = 0;
    if (fd >= 0) {
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_storage sa{};
        socklen_t sa_len = 0;
        bool parsed = true;
        if (v6) {
            auto* s6 = reinterpret_cast<sockaddr_in6*>(&sa);
            s6->sin6_family = AF_INET6;
            s6->sin6_port = htons(static_cast<std::uint16_t>(port));
            parsed = ::inet_pton(AF_INET6, bind.c_str(), &s6->sin6_addr) == 1;
            sa_len = sizeof *s6;
            // A link-local address is one per network interface, and a bind without the
            // interface is refused (EINVAL), whatever the port.
            if (parsed && IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) {
                ::close(fd);
                return "cannot listen on " + bind + ": a link-local address (fe80::/10) is only reachable through " +
                       "one network interface, which --bind cannot name; give another address of this machine, or " +
                       "leave --bind out for every interface";
            }
        } else {
            auto* s4 = reinterpret_cast<sockaddr_in*>(&sa);
            s4->sin_family = AF_INET;
            s4->sin_port = htons(static_cast<std::uint16_t>(port));
            s4->sin_addr.s_addr = htonl(INADDR_ANY);
            if (!bind.empty()) parsed = ::inet_pton(AF_INET, bind.c_str(), &s4->sin_addr) == 1;
            sa_len = sizeof *s4;
        }
        if (!parsed) {
            ::close(fd);
            return "--bind " + bind + " is not an IP address; give one of this machine's addresses (e.g. 127.0.0.1) or leave --bind out for every interface";
        }
        if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sa_len) != 0) err = errno;
        ::close(fd);
    }
    if (fd >= 0 && err == 0) return {};
    if (err == EADDRINUSE)
        return "cannot listen on " + where + ": the port is in use; " + advice;
    if (err == EADDRNOTAVAIL)
        return "cannot listen on " + where + ": " + bind + " is not an address of this machine; leave --bind out for every interface";
    if (err == EACCES)
        return "cannot listen on " + where + ": ports below 1024 need privileges; " + advice;
    return "cannot listen on " + where + (err ? std::string(": ") + std::strerror(err) : std::string()) + "; " + advice;
}

}  // namespace

struct Server::Impl {
    ServerOptions options;
    std::string join_code = make_join_code(), teacher_secret = make_teacher_secret();
    lws_context* context = nullptr;
    lws_vhost* vhost = nullptr;
    int port = 0;
    std::thread thread;
    lws_protocols protocols[2]{};

    std::mutex mutex;  // guards commands and stopped
    std::deque<Command> commands;
    bool stopped = false;

    mutable std::mutex stats_mutex;  // guards stats
    Server::Stats stats;

    // Only the service thread touches what follows.
    Lesson lesson;
    AddressGuard guard;
    std::unordered_map<std::uint64_t, std::unique_ptr<Session>> sessions;
    std::uint64_t next_id = 1;
    bool stopping = false;
    double bytes_checked_s = 0;

    explicit Impl(ServerOptions o)
        : options(std::move(o)), lesson(options.query), guard(options.seats_per_address) {}

    static int callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, std::size_t len);
    int on_event(lws* wsi, lws_callback_reasons reason, PerSession* ps, void* in, std::size_t len);
    int serve_http(lws* wsi, const char* uri);
    void open_session(lws* wsi, PerSession* ps);
    int receive(Session& s, const void* in, std::size_t len);
    int handle(Session& s, const std::string& text);
    int write(Session& s);
    void close_session(Session& s);

    void enqueue(Session& s, Message m);
    // 0, for the callback to return; `message`: the refusal's line for the page.
    int refuse(Session& s, Refusal r, const std::string& message = {}, double retry_after_s = 0);
    bool admit_address(Session& s);
    void broadcast_state();
    void mark_stats();
    void publish_stats();
    void run_commands();
    void check_bytes();
    void run();
};

int Server::Impl::callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, std::size_t len) {
    lws_context* ctx = lws_get_context(wsi);
    auto* self = ctx ? static_cast<Impl*>(lws_context_user(ctx)) : nullptr;
    if (!self) return lws_callback_http_dummy(wsi, reason, user, in, len);
    return self->on_event(wsi, reason, static_cast<PerSession*>(user), in, len);
}

int Server::Impl::on_event(lws* wsi, lws_callback_reasons reason, PerSession* ps, void* in, std::size_t len) {
    switch (reason) {
    case LWS_CALLBACK_HTTP:
        return serve_http(wsi, static_cast<const char*>(in));
    case LWS_CALLBACK_HTTP_FILE_COMPLETION:
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
        // Only /lesson upgrades to a WebSocket.
        char uri[64];
        if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) <= 0) return 1;
        return std::strcmp(uri, "/lesson") == 0 ? 0 : 1;
    }
    case LWS_CALLBACK_ESTABLISHED:
        open_session(wsi, ps);
        return 0;
    case LWS_CALLBACK_RECEIVE:
        return ps && ps->session ? receive(*ps->session, in, len) : -1;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return ps && ps->session ? write(*ps->session) : 0;
    case LWS_CALLBACK_CLOSED:
        if (ps && ps->session) {
            close_session(*ps->session);
            ps->session = nullptr;
        }
        return 0;
    case LWS_CALLBACK_RAW_ADOPT:
        // A CONNECT request, handed over as a raw socket: a lesson is no proxy. Said, then closed.
        refuse_connect(wsi);
        return -1;
    case LWS_CALLBACK_RAW_RX:
        return -1;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        run_commands();
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, ps, in, len);
    }
}

int Server::Impl::serve_http(lws* wsi, const char* uri) {
    const bool get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
    const bool head = lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0;
    const auto file = (get || head) && uri ? resolve_site_file(options.site, uri) : std::nullopt;
    if (!file) {
        const unsigned status = get || head ? HTTP_STATUS_NOT_FOUND : HTTP_STATUS_METHOD_NOT_ALLOWED;
        if (lws_return_http_status(wsi, status, nullptr)) return -1;
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    }
    // The page's threads need cross-origin isolation where the browser allows it.
    unsigned char headers[512];
    unsigned char* p = headers;
    unsigned char* end = headers + sizeof headers;
    const std::pair<const char*, const char*> extra[] = {{"Cross-Origin-Opener-Policy:", "same-origin"},
                                                         {"Cross-Origin-Embedder-Policy:", "require-corp"},
                                                         {"X-Content-Type-Options:", "nosniff"},
                                                         {"Cache-Control:", "no-cache"}};
    for (const auto& [name, value] : extra)
        if (lws_add_http_header_by_name(wsi, reinterpret_cast<const unsigned char*>(name),
                                        reinterpret_cast<const unsigned char*>(value),
                                        static_cast<int>(std::strlen(value)), &p, end))
            return -1;
    const int n = lws_serve_http_file(wsi, file->path.c_str(), file->content_type, reinterpret_cast<const char*>(headers),
                                      static_cast<int>(p - headers));
    if (n < 0) return -1;
    if (n > 0 && lws_http_transaction_completed(wsi)) return -1;
    return 0;
}

void Server::Impl::open_session(lws* wsi, PerSession* ps) {
    auto owned = std::make_unique<Session>();
    Session& s = *owned;
    s.id = next_id++;
    s.wsi = wsi;
    sessions.emplace(s.id, std::move(owned));
    if (ps) ps->session = &s;

    std::map<std::string, std::string> params;
    char fragment[256];
    for (int i = 0; i < 16; ++i) {
        const int n = lws_hdr_copy_fragment(wsi, fragment, sizeof fragment, WSI_TOKEN_HTTP_URI_ARGS, i);
        if (n < 0) break;
        const std::string_view kv(fragment, static_cast<std::size_t>(n));
        const std::size_t eq = kv.find('=');
        if (eq != std::string_view::npos) params.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    if (stopping) {
        enqueue(s, std::make_shared<const std::string>(ended_json()));
        s.closing = true;
        s.close_status = LWS_CLOSE_STATUS_GOINGAWAY;
        return;
    }
    if (!admit_address(s)) return;
    const Admission a = admit(params, join_code, teacher_secret);
    if (!a.role) {
        guard.wrong_code(s.address, now_s());
        refuse(s, Refusal::WrongCode);
        return;
    }
    if (*a.role == Role::Student && lesson.connected() >= options.max_students) {
        lesson.refuse(Refusal::Full);
        mark_stats();
        enqueue(s, std::make_shared<const std::string>(full_json(options.max_students)));
        s.closing = true;
        s.close_status = static_cast<lws_close_status>(1013);  // "try again later" (RFC 6455 registry)
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 3);
        return;
    }
    if (*a.role == Role::Student && !guard.take_seat(s.address)) {
        refuse(s, Refusal::AddressFull,
               "the class already has " + std::to_string(guard.seats_per_address()) + " students from " + s.address +
                   ", the most one address may have; the teacher can allow more with --seats-per-address N");
        return;
    }
    s.role = a.role;
    s.bytes_seen = bytes_received(wsi);  // the handshake is not counted
    // A fixed send buffer (no autotuning) bounds what the kernel holds for a client that stops
    // reading, so that its backlog reaches max_backlog in our queue and is dropped there.
    const int send_buffer = kSocketSendBuffer;
    ::setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer);
    if (*a.role == Role::Teacher) {
        s.bucket = TokenBucket(kTeacherMessagesPerSecond, kTeacherMessagesPerSecond);
        s.frames = TokenBucket(kFramesPerMessage * kTeacherMessagesPerSecond, kFramesPerMessage * kTeacherMessagesPerSecond);
        s.bytes = TokenBucket(kTeacherBytesPerSecond, kTeacherBytesBurst);
        s.stats_dirty = true;
    } else {
        lesson.student_joined();
        s.student_counted = true;
        mark_stats();
    }
    enqueue(s, std::make_shared<const std::string>(lesson.state_json()));
}

// Before the code is read: the handshake's Origin, and the address's wrong codes so far.
bool Server::Impl::admit_address(Session& s) {
    char peer[128] = "";
    lws_get_peer_simple(s.wsi, peer, sizeof peer);
    s.address = peer;
    if (const auto origin = header(s.wsi, WSI_TOKEN_ORIGIN)) {
        const std::string host = header(s.wsi, WSI_TOKEN_HOST).value_or("");
        const std::string problem = origin_problem(*origin, host, !options.tls_cert.empty());
        if (!problem.empty()) {
            refuse(s, Refusal::Origin, problem);
            return false;
        }
    }
    if (const double wait = guard.locked_for(s.address, now_s()); wait > 0) {
        const long seconds = static_cast<long>(std::ceil(wait));
        refuse(s, Refusal::TooManyTries,
               "too many wrong codes from " + s.address + " lately; the next try is taken in " + std::to_string(seconds) +
                   " s",
               wait);
        return false;
    }
    return true;
}

int Server::Impl::receive(Session& s, const void* in, std::size_t len) {
    if (s.closing) return 0;  // its refusal is on the way; what follows is not read
    if (!s.frames.take(now_s())) return refuse(s, Refusal::RateLimited);
    if (lws_frame_is_binary(s.wsi)) return refuse(s, Refusal::Binary);
    if (s.rx.size() + len > kMaxMessageBytes) return refuse(s, Refusal::TooBig);
    s.rx.append(static_cast<const char*>(in), len);
    if (!lws_is_final_fragment(s.wsi) || lws_remaining_packet_payload(s.wsi) > 0) return 0;
    std::string text;
    text.swap(s.rx);
    if (!s.bucket.take(now_s())) return refuse(s, Refusal::RateLimited);
    return handle(s, text);
}

int Server::Impl::handle(Session& s, const std::string& text) {
    if (!s.role) return 0;
    const Incoming m = parse_message(text, *s.role);
    if (m.refusal) return refuse(s, *m.refusal);
    if (*s.role == Role::Teacher) {
        if (lesson.apply_teacher(m)) broadcast_state();
        return 0;
    }
    if (m.type == "join") {
        enqueue(s, std::make_shared<const std::string>(lesson.state_json()));
    } else if (m.type == "answer") {
        if (!lesson.answer(s.id, m.choice)) return refuse(s, Refusal::BadValue);
        mark_stats();
    } else if (m.type == "leave") {
        s.closing = true;
        s.close_status = LWS_CLOSE_STATUS_NORMAL;
        lws_callback_on_writable(s.wsi);
    }
    return 0;
}

int Server::Impl::refuse(Session& s, Refusal r, const std::string& message, double retry_after_s) {
    lesson.refuse(r);
    mark_stats();
    enqueue(s, std::make_shared<const std::string>(message.empty() ? refused_json(r)
                                                                   : refused_json(r, message, retry_after_s)));
    if (!refusal_closes(r)) return 0;
    s.closing = true;
    s.close_status = r == Refusal::TooBig        ? LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE
                     : r == Refusal::Binary      ? LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE
                     : r == Refusal::AddressFull ? static_cast<lws_close_status>(1013)
                                                 : LWS_CLOSE_STATUS_POLICY_VIOLATION;
    s.rx.clear();
    s.rx.shrink_to_fit();
    lws_set_timeout(s.wsi, PENDING_TIMEOUT_CLOSE_SEND, 3);
    return 0;
}

void Server::Impl::enqueue(Session& s, Message m) {
    if (s.out.size() >= options.max_backlog) {
        // A client that stopped reading: drop it rather than hold its backlog.
        if (!s.closing) lesson.dropped_slow();
        s.out.clear();
        s.closing = true;
        lws_set_timeout(s.wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
        mark_stats();
        return;
    }
    s.out.push_back(std::move(m));
    lws_callback_on_writable(s.wsi);
}

void Server::Impl::broadcast_state() {
    const Message m = std::make_shared<const std::string>(lesson.state_json());
    for (auto& [id, s] : sessions)
        if (s->role && !s->closing) enqueue(*s, m);
    mark_stats();
}

void Server::Impl::mark_stats() {
    publish_stats();
    for (auto& [id, s] : sessions)
        if (s->role == Role::Teacher && !s->closing && !s->stats_dirty) {
            s->stats_dirty = true;
            lws_callback_on_writable(s->wsi);
        }
}

void Server::Impl::publish_stats() {
    std::string json = lesson.stats_json(options.max_students);
    std::lock_guard<std::mutex> lock(stats_mutex);
    if (json == stats.json) return;
    stats.json = std::move(json);
    ++stats.version;
}

// One message per writable callback, as libwebsockets requires; the queue's messages first,
// then the teacher's latest stats.
int Server::Impl::write(Session& s) {
    Message m;
    if (!s.out.empty()) {
        m = std::move(s.out.front());
        s.out.pop_front();
    } else if (s.stats_dirty && !s.closing) {
        s.stats_dirty = false;
        m = std::make_shared<const std::string>(lesson.stats_json(options.max_students));
    } else if (s.closing) {
        lws_close_reason(s.wsi, s.close_status, nullptr, 0);
        return -1;
    } else {
        return 0;
    }
    s.scratch.resize(LWS_PRE + m->size());
    std::memcpy(s.scratch.data() + LWS_PRE, m->data(), m->size());
    if (lws_write(s.wsi, s.scratch.data() + LWS_PRE, m->size(), LWS_WRITE_TEXT) < static_cast<int>(m->size()))
        return -1;
    if (!s.out.empty() || s.stats_dirty || s.closing) lws_callback_on_writable(s.wsi);
    return 0;
}

void Server::Impl::close_session(Session& s) {
    if (s.student_counted) {
        lesson.student_left(s.id);
        guard.leave_seat(s.address);
        mark_stats();
    }
    sessions.erase(s.id);
}

void Server::Impl::run_commands() {
    std::deque<Command> todo;
    {
        std::lock_guard<std::mutex> lock(mutex);
        todo.swap(commands);
    }
    for (const Command& c : todo) {
        if (c.kind == Command::Kind::TeacherMessage) {
            const Incoming m = parse_message(c.text, Role::Teacher);
            if (!m.refusal && lesson.apply_teacher(m)) broadcast_state();
        } else if (!stopping) {
            stopping = true;
            const Message ended = std::make_shared<const std::string>(ended_json());
            for (auto& [id, s] : sessions) {
                if (!s->closing) {
                    s->out.clear();
                    enqueue(*s, ended);
                    s->closing = true;
                    s->close_status = LWS_CLOSE_STATUS_GOINGAWAY;
                }
                lws_set_timeout(s->wsi, PENDING_TIMEOUT_CLOSE_SEND, 2);
            }
        }
    }
}

// Every kBytesCheckSeconds at most: a connection that sent more than its bytes allow is
// refused as rate-limited (a flood of pings or of empty frames among them).
void Server::Impl::check_bytes() {
    const double now = now_s();
    if (now - bytes_checked_s < kBytesCheckSeconds) return;
    bytes_checked_s = now;
    for (auto& [id, s] : sessions) {
        if (!s->role || s->closing) continue;
        const std::uint64_t seen = bytes_received(s->wsi);
        if (seen < s->bytes_seen) continue;
        const double sent = static_cast<double>(seen - s->bytes_seen);
        s->bytes_seen = seen;
        if (s->bytes.take(now, sent)) continue;
        // Closed at once: while pings keep coming, libwebsockets answers them before it
        // would let the refusal be written.
        refuse(*s, Refusal::RateLimited);
        lws_set_timeout(s->wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
    }
}

void Server::Impl::run() {
    // Until stopped and every connection told and closed (each closes within its timeout).
    while (lws_service(context, 0) >= 0) {
        if (stopping && sessions.empty()) break;
        check_bytes();
    }
}

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
    Impl& d = *impl_;
    if (!valid_query(d.options.query))
        throw std::runtime_error("the lesson's first state is not a page address query: " + d.options.query);
    // libwebsockets' own log (stderr) only when asked for: HEADSPLIT_LESSON_LOG=1.
    const char* log = std::getenv("HEADSPLIT_LESSON_LOG");
    lws_set_log_level(log && *log == '1' ? LLL_ERR | LLL_WARN | LLL_NOTICE | LLL_INFO : 0, nullptr);
    d.protocols[0] = {};
    d.protocols[0].name = "headsplit-lesson";
    d.protocols[0].callback = &Impl::callback;
    d.protocols[0].per_session_data_size = sizeof(PerSession);
    d.protocols[0].rx_buffer_size = kMaxMessageBytes;

    const bool tls = !d.options.tls_cert.empty();
    lws_context_creation_info info{};
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | (tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
    info.user = &d;
    // A request's line and headers, at most (libwebsockets reads it per context, not per vhost):
    // a shared link of some kilobytes reaches the page, whose own checks then answer it.
    info.max_http_header_data = kMaxRequestHeadBytes;
    // libwebsockets waits for an address that is not (yet) this machine's; a lesson refuses it.
    if (!d.options.bind.empty()) {
        const std::string problem = listen_problem(d.options.bind, 0, d.options.port_advice);
        if (!problem.empty()) throw std::runtime_error(problem);
    }
    d.context = lws_create_context(&info);
    if (!d.context) throw std::runtime_error("cannot start the lesson's server (libwebsockets could not make its context)");

    lws_context_creation_info vinfo{};
    vinfo.port = d.options.port;
    vinfo.iface = d.options.bind.empty() ? nullptr : d.options.bind.c_str();
    vinfo.protocols = d.protocols;
    vinfo.vhost_name = "headsplit";
    if (!d.options.bind.empty() && d.options.bind.find(':') == std::string::npos)
        vinfo.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    if (tls) {
        // libwebsockets turns TLS on for a vhost only when its own options ask for it too.
        vinfo.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        vinfo.ssl_cert_filepath = d.options.tls_cert.c_str();
        vinfo.ssl_private_key_filepath = d.options.tls_key.c_str();
        // HTTP/1.1 only, as without TLS: the same headers and the same WebSocket upgrade.
        vinfo.alpn = "http/1.1";
    }
    d.vhost = lws_create_vhost(d.context, &vinfo);
    if (!d.vhost) {
        lws_context_destroy(d.context);
        d.context = nullptr;
        const std::string problem = listen_problem(d.options.bind, d.options.port, d.options.port_advice);
        if (problem.empty() && tls)
            throw std::runtime_error("cannot serve HTTPS with " + d.options.tls_cert + " and " + d.options.tls_key +
                                     " (libwebsockets could not load them); remove both, and the next lesson makes new ones");
        throw std::runtime_error(problem.empty() ? "cannot listen on port " + std::to_string(d.options.port) + "; " +
                                                       d.options.port_advice
                                                 : problem);
    }
    d.port = lws_get_vhost_listen_port(d.vhost);
    d.publish_stats();
    d.thread = std::thread([&d] { d.run(); });
}

Server::~Server() { stop(); }

int Server::port() const { return impl_->port; }
const std::string& Server::join_code() const { return impl_->join_code; }
const std::string& Server::teacher_secret() const { return impl_->teacher_secret; }

Server::Stats Server::latest_stats() const {
    std::lock_guard<std::mutex> lock(impl_->stats_mutex);
    return impl_->stats;
}

// The context is woken under the lock, and stop() marks it stopped under the same lock
// before destroying it: a message posted while the server stops is dropped, never sent to a
// destroyed context.
void Server::post_teacher_message(std::string json) {
    Impl& d = *impl_;
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.stopped) return;
    d.commands.push_back({Command::Kind::TeacherMessage, std::move(json)});
    lws_cancel_service(d.context);
}

void Server::stop() {
    Impl& d = *impl_;
    {
        std::lock_guard<std::mutex> lock(d.mutex);
        if (!d.context || d.stopped) return;
        d.stopped = true;
        d.commands.push_back({Command::Kind::Stop, {}});
        lws_cancel_service(d.context);
    }
    if (d.thread.joinable()) d.thread.join();
    lws_context_destroy(d.context);
    d.context = nullptr;
}

}  // namespace headsplit::lesson
