#include "cli/lesson_command.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "headsplit/engine/config.hpp"
#include "cli/options.hpp"
#include "lesson/server.hpp"
#include "lesson/site.hpp"

namespace headsplit::app {

namespace {

// The machine's IPv4 addresses other than loopback, interfaces that are up, in their order.
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

std::string url_host(const std::string& address) {
    return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

bool every_interface(const std::string& bind) { return bind.empty() || bind == "0.0.0.0" || bind == "::"; }

}  // namespace

void LessonCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand(
        "lesson", "serve the page and a live lesson on this network: students follow the teacher's steps in their browsers");
    cmd->add_option("--port", port, "the port to listen on (default 8080; 0: any free port)");
    cmd->add_option("--bind", bind, "listen on this address of the machine only (default: every interface)");
    cmd->add_option("--max-students", max_students, "the class's size; the next student is told it is full (default 300)");
    cmd->add_option("--site", site, "the page's site folder to serve (default: build-web/site from make web, or the installed one)");
    cmd->add_flag("--no-window", no_window, "no teacher window: drive from the teacher's address in a browser");
    cmd->callback([] {});
}

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

int LessonCommand::run() const {
    if (!no_window)
        throw ConfigError("the teacher window for a lesson is not available yet; run headsplit lesson --no-window and drive from the teacher address");
    lesson::ServerOptions o;
    o.port = static_cast<int>(parse_count("--port", port, 0, 65535));
    o.max_students = static_cast<int>(parse_count("--max-students", max_students, 1, 10000));
    o.bind = bind;
    if (!bind.empty()) {
        in6_addr any{};
        if (::inet_pton(AF_INET, bind.c_str(), &any) != 1 && ::inet_pton(AF_INET6, bind.c_str(), &any) != 1)
            throw ConfigError("--bind " + bind + " is not an IP address; give one of this machine's addresses (e.g. 127.0.0.1) or leave --bind out for every interface");
    }
    if (bind == "0.0.0.0" || bind == "::") o.bind.clear();
    o.site = find_site(site);

    // Every student holds a WebSocket and, while the page loads, a few HTTP connections: raise
    // the soft limit on open files (often 1024) towards the hard one before listening.
    rlimit files{};
    const rlim_t wanted = static_cast<rlim_t>(16) * static_cast<rlim_t>(o.max_students) + 256;
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < wanted) {
        files.rlim_cur = files.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, files.rlim_max);
        ::setrlimit(RLIMIT_NOFILE, &files);
    }

    // SIGINT and SIGTERM are waited for here; every thread started below inherits the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    lesson::Server server(o);
    const std::vector<std::string> lan = every_interface(bind) ? lan_addresses() : std::vector<std::string>{};
    const std::string teacher_host = every_interface(bind) ? "127.0.0.1" : url_host(bind);
    const std::string student_host = every_interface(bind) ? (lan.empty() ? "127.0.0.1" : lan.front()) : url_host(bind);
    const std::string port_text = std::to_string(server.port());
    std::cout << "teacher: http://" << teacher_host << ":" << port_text << "/?lesson=" << server.join_code()
              << "&teacher=" << server.teacher_secret()
              << "\nstudent: http://" << student_host << ":" << port_text << "/?lesson=" << server.join_code() << std::endl;
    if (lan.size() > 1) {
        std::cerr << "headsplit lesson: this machine is also reachable at";
        for (std::size_t i = 1; i < lan.size(); ++i) std::cerr << " " << lan[i];
        std::cerr << " (give students the address on the room's network)\n";
    } else if (every_interface(bind) && lan.empty()) {
        std::cerr << "headsplit lesson: no network address found besides this machine's own (127.0.0.1); students on other machines cannot join\n";
    }
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
    std::cerr << "headsplit lesson: ended; every student was told\n";
    return 0;
}

}  // namespace headsplit::app
