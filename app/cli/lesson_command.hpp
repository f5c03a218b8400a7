#pragma once
// `headsplit lesson`: serves the page and the live lesson on the room's network, prints the
// teacher's and the students' addresses, and opens the window in presenter mode as the
// teacher's console until it is closed (--no-window: serves until SIGINT or SIGTERM).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/gui_command.hpp"

namespace headsplit::app {

struct LessonCommand {
    std::string port = "8080", bind, max_students = "300", seats_per_address = "60", site;
    bool no_window = false;
    bool https = false;
    GuiCommand window;  // the teacher window's options

    void add_to(CLI::App& parent);
    int run();
};

}  // namespace headsplit::app
