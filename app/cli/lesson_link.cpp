#include "cli/lesson_link.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>

#include <csignal>
#include <exception>
#include <filesystem>
#include <utility>

#include "cli/options.hpp"
#include "lesson/certificate.hpp"
#include "lesson/qr.hpp"
#include "lesson/server.hpp"
#include "lesson/site.hpp"

namespace headsplit::app {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_stop_signal(int) { g_interrupted = 1; }

void set_stop_handler(struct sigaction* before_int, struct sigaction* before_term) {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, before_int);
    ::sigaction(SIGTERM, &sa, before_term);
}

// SIGINT and SIGTERM close the window while a lesson runs, however it was started: the
// students are told it ended. The first link takes the signals, the last one gone gives them
// back to the handlers they had (a window with no lesson ends on Ctrl+C as before).
struct StopSignals {
    int links = 0;
    struct sigaction before_int {}, before_term {};

    void hold() {
        if (links++ == 0) set_stop_handler(&before_int, &before_term);
    }
    void release() {
        if (--links > 0) return;
        ::sigaction(SIGINT, &before_int, nullptr);
        ::sigaction(SIGTERM, &before_term, nullptr);
    }
};
StopSignals g_stop_signals;  // the window's thread only

// The window's link: posts go to the server's queue, stats come from its latest snapshot.
class ServerLink : public gui::LessonLink {
public:
    explicit ServerLink(lesson::ServerOptions o) : server_(std::move(o)) { g_stop_signals.hold(); }
    ~ServerLink() override { g_stop_signals.release(); }
    ServerLink(const ServerLink&) = delete;
    ServerLink& operator=(const ServerLink&) = delete;
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

std::string find_site(const std::string& given) {
    namespace fs = std::filesystem;
    if (!given.empty()) {
        const std::string root = lesson::site_root(given);
        if (root.empty() || root == "/")
            throw ConfigError("--site " + given + " is not a folder with the page; give the folder make web writes (build-web/site)");
        std::error_code ec;
        if (!fs::is_regular_file(fs::path(root) / "index.html", ec))
            throw ConfigError("--site " + given + " has no index.html; give the folder make web writes (build-web/site)");
        return root;
    }
    std::vector<fs::path> places;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) places.push_back(exe.parent_path().parent_path() / "share" / "headsplit" / "site");
    places.push_back(fs::path(HEADSPLIT_SOURCE_DIR) / "build-web" / "site");
    for (const fs::path& dir : places)
        if (fs::is_regular_file(dir / "index.html", ec)) return lesson::site_root(dir.string());
    std::string looked;
    for (const fs::path& dir : places) looked += (looked.empty() ? "" : " and ") + dir.lexically_normal().string();
    throw ConfigError("no page to serve (looked in " + looked + "); build it with make web, or give --site DIR");
}

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

void close_window_on_signals() { set_stop_handler(nullptr, nullptr); }

bool lesson_interrupted() { return g_interrupted != 0; }

gui::LessonStart start_lesson(const LessonSettings& s, const std::string& query) {
    lesson::ServerOptions o;
    o.port = s.port;
    o.max_students = s.max_students;
    o.seats_per_address = s.seats_per_address;
    o.bind = every_interface(s.bind) ? std::string() : s.bind;
    o.site = find_site(s.site);
    o.query = query;
    o.port_advice = s.port_advice;
    gui::LessonStart out;
    if (s.https) {
        // Every LAN address, bound or not, so that the same certificate serves either way.
        std::vector<std::string> names = lan_addresses();
        if (!every_interface(s.bind)) names.push_back(s.bind);
        const std::string folder = s.certificate_folder.empty() ? lesson::certificate_folder() : s.certificate_folder;
        const lesson::Certificate cert = lesson::lesson_certificate(folder, names);
        o.tls_cert = cert.cert_path;
        o.tls_key = cert.key_path;
        out.certificate = cert.cert_path + " SHA-256 " + cert.fingerprint +
                          (cert.made ? cert.replaced.empty() ? " (made now)" : " (made now: " + one_line(cert.replaced) + ")"
                                     : " (kept from an earlier lesson)");
    }
    auto link = std::make_shared<ServerLink>(o);
    const lesson::Server& server = link->server();

    const std::vector<std::string> lan = every_interface(s.bind) ? lan_addresses() : std::vector<std::string>{};
    const std::string teacher_host = every_interface(s.bind) ? "127.0.0.1" : url_host(s.bind);
    const std::string student_host = every_interface(s.bind) ? (lan.empty() ? "127.0.0.1" : lan.front()) : url_host(s.bind);
    const std::string port = std::to_string(server.port());
    out.join_code = server.join_code();
    const std::string scheme = s.https ? "https://" : "http://";
    out.teacher_url = scheme + teacher_host + ":" + port + "/?lesson=" + server.join_code() + "&teacher=" + server.teacher_secret();
    out.student_url = scheme + student_host + ":" + port + "/?lesson=" + server.join_code();
    if (lan.size() > 1) out.other_addresses.assign(lan.begin() + 1, lan.end());
    const lesson::QrCode qr = lesson::make_qr(out.student_url);
    out.qr_size = qr.size;
    out.qr = qr.modules;
    out.link = std::move(link);
    out.interrupted = lesson_interrupted;
    return out;
}

gui::LessonStarter lesson_starter(LessonSettings s) {
    s.port_advice = "choose another in the Controls' lesson port field, or 0 for any free port";
    return [s](const std::string& query, int port) {
        try {
            LessonSettings here = s;
            here.port = port;
            return start_lesson(here, query);
        } catch (const std::exception& e) {
            gui::LessonStart failed;
            failed.error = one_line(e.what());
            return failed;
        }
    };
}

}  // namespace headsplit::app
