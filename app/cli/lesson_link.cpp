#include "cli/lesson_link.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>

#include <csignal>
#include <exception>
#include <utility>

#include "cli/lesson_command.hpp"
#include "cli/options.hpp"
#include "lesson/qr.hpp"
#include "lesson/server.hpp"

namespace headsplit::app {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_stop_signal(int) { g_interrupted = 1; }

// The window's link: posts go to the server's queue, stats come from its latest snapshot.
class ServerLink : public gui::LessonLink {
public:
    explicit ServerLink(lesson::ServerOptions o) : server_(std::move(o)) {}
    void post(const std::string& json) override { server_.post_teacher_message(json); }
    std::pair<std::uint64_t, std::string> stats() override {
        lesson::Server::Stats s = server_.latest_stats();
        return {s.version, std::move(s.json)};
    }
    void end() override { server_.stop(); }
    bool interrupted() const override { return g_interrupted != 0; }
    const lesson::Server& server() const { return server_; }

private:
    lesson::Server server_;
};

std::string url_host(const std::string& address) {
    return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

bool every_interface(const std::string& bind) { return bind.empty() || bind == "0.0.0.0" || bind == "::"; }

}  // namespace

std::vector<std::string> lan_addresses() {
    std::vector<std::string> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (const ifaddrs* a = list; a; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK))
            continue;
        char text[INET_ADDRSTRLEN];
        const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
        if (::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text)) out.emplace_back(text);
    }
    ::freeifaddrs(list);
    return out;
}

void close_window_on_signals() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
}

gui::LessonStart start_lesson(const LessonSettings& s, const std::string& query) {
    lesson::ServerOptions o;
    o.port = s.port;
    o.max_students = s.max_students;
    o.bind = every_interface(s.bind) ? std::string() : s.bind;
    o.site = find_site(s.site);
    o.query = query;
    auto link = std::make_shared<ServerLink>(o);
    const lesson::Server& server = link->server();

    gui::LessonStart out;
    const std::vector<std::string> lan = every_interface(s.bind) ? lan_addresses() : std::vector<std::string>{};
    const std::string teacher_host = every_interface(s.bind) ? "127.0.0.1" : url_host(s.bind);
    const std::string student_host = every_interface(s.bind) ? (lan.empty() ? "127.0.0.1" : lan.front()) : url_host(s.bind);
    const std::string port = std::to_string(server.port());
    out.join_code = server.join_code();
    out.teacher_url = "http://" + teacher_host + ":" + port + "/?lesson=" + server.join_code() + "&teacher=" + server.teacher_secret();
    out.student_url = "http://" + student_host + ":" + port + "/?lesson=" + server.join_code();
    if (lan.size() > 1) out.other_addresses.assign(lan.begin() + 1, lan.end());
    const lesson::QrCode qr = lesson::make_qr(out.student_url);
    out.qr_size = qr.size;
    out.qr = qr.modules;
    out.link = std::move(link);
    return out;
}

gui::LessonStarter lesson_starter(LessonSettings s) {
    return [s](const std::string& query) {
        try {
            return start_lesson(s, query);
        } catch (const std::exception& e) {
            gui::LessonStart failed;
            failed.error = one_line(e.what());
            return failed;
        }
    };
}

}  // namespace headsplit::app
