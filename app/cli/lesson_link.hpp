#pragma once
// The teacher window's side of `headsplit lesson`: a lesson::Server behind the window's
// LessonLink, the addresses it is reached at, and its QR code.
#include <string>
#include <vector>

#include "gui/model/lesson.hpp"

namespace headsplit::app {

struct LessonSettings {
    std::string bind;  // empty, 0.0.0.0 or ::: every interface
    int port = 8080;   // 0: any free port
    int max_students = 300;
    int seats_per_address = 60;  // a student's seats from one network address, at most
    std::string site;  // --site as given ("": the page's build, or the installed one)
    // HTTPS and wss:// with the lesson's own certificate (lesson/certificate.hpp), kept in
    // `certificate_folder` ("": the user's data folder).
    bool https = false;
    std::string certificate_folder;
    // What to tell when the port cannot be had: how to choose another.
    std::string port_advice = "choose another with --port N, or --port 0 for any free port";
};

// The site folder to serve: `given` when set, else the page's build beside the source tree,
// else the installed package's. Throws ConfigError naming what would work.
std::string find_site(const std::string& given);

// The machine's IPv4 addresses other than loopback, of interfaces that are up, in their order.
std::vector<std::string> lan_addresses();

// Starts a lesson::Server whose first state is `query`, and says where: the teacher's and the
// students' addresses (the students' on the first LAN address when every interface is
// bound), the other LAN addresses, the student address's QR code; with `https`, the
// certificate that names this machine's addresses. Throws ConfigError (no site) or
// std::runtime_error (cannot listen, no certificate) with one line.
gui::LessonStart start_lesson(const LessonSettings& s, const std::string& query);

// From now on SIGINT and SIGTERM make every link start_lesson made say interrupted(): the
// window closes and the lesson ends as when it is closed; after its lesson has ended, the
// window still closes (its LessonStart::interrupted). While a link lives this holds anyway (a
// lesson started from the Controls); when the last one is gone, the handlers it replaced come
// back.
void close_window_on_signals();
// Whether SIGINT or SIGTERM came while a lesson's link held them.
bool lesson_interrupted();

// start_lesson for the window's "start a live lesson", on the port it is given: its failure
// is the start's error, a port that cannot be had told as the Controls' port field.
gui::LessonStarter lesson_starter(LessonSettings s);

}  // namespace headsplit::app
