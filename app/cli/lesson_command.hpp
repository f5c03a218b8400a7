#pragma once
// `headsplit lesson`: serves the page and the live lesson on the room's network, prints the
// teacher's and the students' addresses, and serves until SIGINT or SIGTERM.
#include <string>

#include <CLI/CLI.hpp>

namespace headsplit::app {

struct LessonCommand {
    std::string port = "8080", bind, max_students = "300", site;
    bool no_window = false;

    void add_to(CLI::App& parent);
    int run() const;
};

// The site folder to serve: `given` when set, else the page's build beside the source tree,
// else the installed package's. Throws ConfigError naming what would work.
std::string find_site(const std::string& given);

}  // namespace headsplit::app
