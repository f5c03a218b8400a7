#pragma once
// The live lesson as the teacher's window sees it: what the join card and the class's line
// show (the view), the link to the server that the window loop holds (an interface: the
// window and its panels never touch the network), and what the window posts when the
// teacher steps, changes the model, pauses, locks, asks the question and reveals it.
//
// Posts, all teacher messages of the lesson's protocol (app/lesson/protocol.hpp):
//   {"type":"set","query":Q}  Q: the configuration, the step and presenter mode as the page's
//                             address spells them (lesson_query); at most kLessonPostsPerSecond
//   {"type":"set","paused":b} / {"type":"set","locked":b}
//   {"type":"ask","prompt":..,"options":[..],"answer":k}  when the quiz asks a step
//   {"type":"reveal"}         when the teacher answers it (the quiz's reveal)
//   {"type":"close_question"} when the question goes unanswered (quiz off, another step)
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "headsplit/engine/config.hpp"

namespace headsplit::gui {

struct AppState;

constexpr double kLessonPostsPerSecond = 10;

// The class, from the server's latest stats message.
struct LessonClass {
    int connected = 0, max_students = 0, answered = 0;
    int question_id = 0;      // 0: no question open
    std::vector<int> counts;  // per option, once revealed
    int answer = -1;          // the right option, once revealed
};

// The window's side of a running lesson (the server behind it lives elsewhere).
class LessonLink {
public:
    virtual ~LessonLink() = default;
    // A teacher message (JSON text), from the window's thread.
    virtual void post(const std::string& json) = 0;
    // The latest stats message and its version (goes up when it changes; 0: none yet).
    virtual std::pair<std::uint64_t, std::string> stats() = 0;
    // Tells every student the lesson has ended and stops the server.
    virtual void end() = 0;
    // The lesson was told to end from outside the window (the terminal's Ctrl+C): the window
    // closes, which ends it.
    virtual bool interrupted() const { return false; }
};

// A lesson started, or why not.
struct LessonStart {
    std::shared_ptr<LessonLink> link;  // null: not started, `error` says why
    std::string error;
    std::string student_url, teacher_url, join_code;
    std::vector<std::string> other_addresses;  // the machine's other LAN addresses
    // Over HTTPS: where the lesson's certificate is and its SHA-256 fingerprint, one line.
    std::string certificate;
    int qr_size = 0;                           // the student URL's QR code: qr_size x qr_size
    std::vector<std::uint8_t> qr;              // modules, row by row, 1 dark (no quiet zone)
    // Whether the terminal's SIGINT or SIGTERM asked the window to close, while this lesson runs
    // and after it ends (the `lesson` command's window keeps the signals after its lesson).
    std::function<bool()> interrupted;
};
// Starts a lesson whose first state is `query`, listening on `port` (0: any free port).
using LessonStarter = std::function<LessonStart(const std::string& query, int port)>;

// The port a lesson started from the Controls listens on unless the teacher types another.
constexpr int kLessonPort = 8080;

// What the join card, the class's line and the histogram show, and what was last posted.
struct LessonView {
    bool can_start = false;  // the window was given a starter (not in the page)
    bool on = false;
    bool card = true;        // the join card is shown (J hides and shows it)
    bool strip_hovered = false;  // the mouse was over the corner line last frame: its buttons show
    bool paused = false, locked = false;
    bool start_requested = false, stop_requested = false;
    bool close_window = false;  // the lesson was interrupted from the terminal: the window closes
    std::function<bool()> interrupted;  // the last lesson's LessonStart::interrupted, kept after it ends
    int port = kLessonPort;     // the Controls' port field: where "start a live lesson" listens
    // A student's page following a teacher who locks exploring: its own stepping and changing
    // input (keys, clicks) is dropped before the frame sees it; `ignored` counts what was.
    bool held = false;
    int ignored = 0;
    std::string said;        // why the last start failed, or that the lesson ended
    std::string student_url, join_code;
    std::vector<std::string> other_addresses;
    int qr_size = 0;
    std::vector<std::uint8_t> qr;
    LessonClass cls;
    std::uint64_t stats_version = 0;

    // The question as posted: the quiz question it was (QuizState::questions), its options,
    // the right one, and whether it was revealed (the histogram shows at `shown_step`).
    std::uint64_t asked = 0;
    int asked_step = -1;
    std::vector<std::string> options;
    int answer = -1;
    bool revealed = false;

    std::string posted_query;
    bool posted_paused = false, posted_locked = false;
    double last_post = -1e9;
};

// The page-address query of `c` at `step` (presenter mode: `present`), as a shared link
// spells it: config_options without the backend (each student's page picks its own), then
// step and present.
std::string lesson_query(const Config& c, int step, bool present);

// The query the class follows now: the step on screen, or while the quiz waits for an
// answer, the last step shown (the step asked would give the answer away).
std::string lesson_query_now(const AppState& st);

// The messages to post this frame, in order; records them as posted in st.lesson.
std::vector<std::string> lesson_messages(AppState& st, double now);
// The question's part of them (ask, reveal, close_question), as the quiz asks and the teacher
// answers: the window's and the teacher's page's alike.
std::vector<std::string> lesson_question_messages(AppState& st);
// The step the class follows now: the step on screen, or while the quiz waits for an answer,
// the last step shown.
int lesson_class_step(const AppState& st);

// Why `port` cannot be the Controls' lesson port (one line), or "" when it can.
std::string lesson_port_problem(int port);

// Reads a stats message into st.lesson.cls; false when it is not one.
bool take_lesson_stats(LessonView& v, const std::string& json);

// The frame's lesson work: a start or end asked for (by a key or the Controls panel), the
// posts, the class's latest counts. `link` is the window loop's.
void lesson_frame(AppState& st, std::shared_ptr<LessonLink>& link, const LessonStarter& start, double now);
// Adopts a lesson already started (`headsplit lesson`).
void lesson_adopt(AppState& st, std::shared_ptr<LessonLink>& link, const LessonStart& started);
// Ends the lesson, if one runs (the window closes).
void lesson_end(AppState& st, std::shared_ptr<LessonLink>& link);

}  // namespace headsplit::gui
