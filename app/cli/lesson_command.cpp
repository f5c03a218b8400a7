#include "cli/lesson_command.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <GLFW/glfw3.h>

#include "headsplit/engine/config.hpp"
#include "headsplit/io/terminal.hpp"
#include "cli/lesson_link.hpp"
#include "cli/options.hpp"
#include "gui/model/lesson.hpp"

namespace headsplit::app {

void LessonCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand(
        "lesson", "serve the page and a live lesson on this network: students follow the teacher's steps in their browsers");
    cmd->add_option("--port", port, "the port to listen on (default 8080; 0: any free port)");
    cmd->add_option("--bind", bind, "listen on this address of the machine only (default: every interface)");
    cmd->add_option("--max-students", max_students, "the class's size; the next student is told it is full (default 300)");
    cmd->add_option("--seats-per-address", seats_per_address,
                    "students from one network address, at most (default 60: a classroom behind one NAT shares one)");
    cmd->add_option("--site", site, "the page's site folder to serve (default: build-web/site from make web, or the installed one)");
    cmd->add_flag("--https", https,
                  "serve HTTPS and wss:// with a self-signed certificate kept in the user's data folder: students' "
                  "browsers run the threaded page once they accept it");
    cmd->add_flag("--no-window", no_window, "no teacher window: drive from the teacher's address in a browser");
    // The teacher window's options: the configuration, its size and text, --screenshot.
    window.add_to(*cmd);
    cmd->callback([] {});
}

int LessonCommand::run() {
    LessonSettings settings;
    settings.port = static_cast<int>(parse_count("--port", port, 0, 65535));
    settings.max_students = static_cast<int>(parse_count("--max-students", max_students, 1, 10000));
    settings.seats_per_address = static_cast<int>(parse_count("--seats-per-address", seats_per_address, 1, 10000));
    settings.bind = bind;
    settings.site = site;
    settings.https = https;
    if (!bind.empty()) {
        in6_addr any{};
        if (::inet_pton(AF_INET, bind.c_str(), &any) != 1 && ::inet_pton(AF_INET6, bind.c_str(), &any) != 1)
            throw ConfigError("--bind " + bind + " is not an IP address; give one of this machine's addresses (e.g. 127.0.0.1) or leave --bind out for every interface");
    }
    find_site(site);  // no page: refused before anything starts
    gui::GuiOptions g;
    if (!no_window) {
        g = window.options();
        g.present = true;  // the window is the teacher's console
        const char* x11 = std::getenv("DISPLAY");
        const char* wayland = std::getenv("WAYLAND_DISPLAY");
        if (!(x11 && *x11) && !(wayland && *wayland))
            throw ConfigError("no display for the teacher window (DISPLAY is not set); run it in the desktop session, or use --no-window and drive from the teacher address");
        // Opened before the lesson starts: its addresses are printed only for a lesson that runs.
        static std::string glfw_error;
        glfwSetErrorCallback([](int, const char* what) { glfw_error = what ? what : ""; });
        if (!glfwInit())
            throw ConfigError("cannot open the teacher window (" + terminal_text(glfw_error) +
                              "); run it in the desktop session, or use --no-window and drive from the teacher address");
    }

    // Every student holds a WebSocket and, while the page loads, a few HTTP connections: raise
    // the soft limit on open files (often 1024) towards the hard one before listening.
    rlimit files{};
    const rlim_t wanted = static_cast<rlim_t>(16) * static_cast<rlim_t>(settings.max_students) + 256;
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < wanted) {
        files.rlim_cur = files.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, files.rlim_max);
        ::setrlimit(RLIMIT_NOFILE, &files);
    }

    // SIGINT and SIGTERM: without the window, waited for here (every thread started below
    // inherits the mask); with it, they close the window as its close button does.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    if (no_window) pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    else close_window_on_signals();
    signal(SIGPIPE, SIG_IGN);

    const std::string query = no_window ? std::string() : gui::lesson_query(g.config, g.step, true);
    gui::LessonStart started = start_lesson(settings, query);
    std::cout << "teacher: " << started.teacher_url << "\nstudent: " << started.student_url << "\n";
    if (!started.certificate.empty()) std::cout << "certificate: " << terminal_text(started.certificate) << "\n";
    std::cout << std::flush;
    if (!started.other_addresses.empty()) {
        std::cerr << "headsplit lesson: this machine is also reachable at";
        for (const std::string& a : started.other_addresses) std::cerr << " " << a;
        std::cerr << " (give students the address on the room's network)\n";
    } else if ((bind.empty() || bind == "0.0.0.0" || bind == "::") && lan_addresses().empty()) {
        std::cerr << "headsplit lesson: no network address found besides this machine's own (127.0.0.1); students on other machines cannot join\n";
    }
    if (no_window) {
        // Threads that started before the mask above (the engine's, OpenBLAS's) may take the
        // signal instead of this wait; the link's handler then marks it (lesson_interrupted()),
        // looked at between waits.
        const timespec tick{0, 200 * 1000 * 1000};
        while (!lesson_interrupted() && sigtimedwait(&stop_signals, nullptr, &tick) < 0) {
        }
        started.link->end();
        std::cerr << "headsplit lesson: ended; every student was told\n";
        return 0;
    }
    g.lesson = std::move(started);
    LessonSettings again = settings;  // "start a live lesson" after ending this one: the same address
    g.lesson_starter = lesson_starter(again);
    g.lesson_port = settings.port;
    const int code = gui::run_gui(g);
    g.lesson.link.reset();
    std::cerr << "headsplit lesson: ended; every student was told\n";
    return code;
}

}  // namespace headsplit::app
