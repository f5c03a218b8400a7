// The teacher window's side of the live lesson: the student address's QR code (checked
// against what ISO/IEC 18004 fixes in every symbol), the query the window posts (parsed back
// by the page's own parser into the same configuration), what the window posts as the
// teacher steps, pauses, asks and reveals, and the server's stats handed to the window's
// thread.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/lesson_link.hpp"
#include "config_checks.hpp"
#include "gui/model/lesson.hpp"
#include "gui/model/state.hpp"
#include "headsplit/io/address.hpp"
#include "lesson/qr.hpp"
#include "lesson/server.hpp"

using namespace headsplit;
using namespace headsplit::gui;
using json = nlohmann::json;

namespace {

// Module (x, y) of the symbol: true when dark.
bool dark(const lesson::QrCode& q, int x, int y) { return q.modules[static_cast<std::size_t>(y * q.size + x)] != 0; }

// A finder pattern with its top left at (x0, y0): a dark 7 x 7 ring, a light 5 x 5 ring, a
// dark 3 x 3 centre (ISO/IEC 18004, 6.3.3).
bool finder_at(const lesson::QrCode& q, int x0, int y0) {
    for (int y = 0; y < 7; ++y)
        for (int x = 0; x < 7; ++x) {
            const int ring = std::max(std::abs(x - 3), std::abs(y - 3));  // 3 outer, 2 light, 0-1 centre
            if (dark(q, x0 + x, y0 + y) != (ring != 2)) return false;
        }
    return true;
}

// The configuration a student's page makes of `query`, and its step and presenter mode.
Config parsed_back(const std::string& query, int& step, bool& present) {
    std::vector<std::string> words;
    step = -1;
    present = false;
    for (const auto& [name, value] : parse_query(query)) {
        if (name == "step") step = std::stoi(value);
        else if (name == "present") present = true;
        else {
            words.push_back("--" + name);
            if (!value.empty()) words.push_back(value);
        }
    }
    return test::parsed(words);
}

}  // namespace

TEST_CASE("lesson QR code: the version's size, finder patterns at three corners, timing, the dark module", "[lesson][qr]") {
    const std::string url = GENERATE(std::string("http://192.168.1.20:8080/?lesson=K7MPQ2"),
                                     std::string("http://10.0.0.7:65535/?lesson=ABCDEF"),
                                     std::string("http://[fe80::1]:8080/?lesson=K7MPQ2") + std::string(120, 'x'));
    const lesson::QrCode q = lesson::make_qr(url);
    REQUIRE(q.version >= 1);
    REQUIRE(q.version <= 40);
    CHECK(q.size == 17 + 4 * q.version);
    REQUIRE(q.modules.size() == static_cast<std::size_t>(q.size * q.size));
    // Finder patterns at the top left, top right and bottom left, none at the bottom right.
    CHECK(finder_at(q, 0, 0));
    CHECK(finder_at(q, q.size - 7, 0));
    CHECK(finder_at(q, 0, q.size - 7));
    CHECK_FALSE(finder_at(q, q.size - 7, q.size - 7));
    // Each finder's separator is light.
    for (int i = 0; i < 8; ++i) {
        CHECK_FALSE(dark(q, 7, i));
        CHECK_FALSE(dark(q, i, 7));
        CHECK_FALSE(dark(q, q.size - 8, i));
        CHECK_FALSE(dark(q, i, q.size - 8));
    }
    // Timing patterns: row 6 and column 6 alternate between the finders, dark on even.
    for (int i = 8; i < q.size - 8; ++i) {
        CHECK(dark(q, i, 6) == (i % 2 == 0));
        CHECK(dark(q, 6, i) == (i % 2 == 0));
    }
    // The dark module beside the bottom-left finder (6.3.3: at (8, 4V + 9)).
    CHECK(dark(q, 8, 4 * q.version + 9));
}

TEST_CASE("lesson QR code: a longer address takes a larger version", "[lesson][qr]") {
    const lesson::QrCode shorter = lesson::make_qr("http://10.0.0.7:8080/?lesson=K7MPQ2");
    const lesson::QrCode longer = lesson::make_qr("http://10.0.0.7:8080/?lesson=K7MPQ2&" + std::string(200, 'a'));
    CHECK(longer.version > shorter.version);
    CHECK(longer.size > shorter.size);
}

TEST_CASE("lesson query: the configuration, step and presenter mode parse back the same", "[lesson][gui]") {
    const std::vector<std::vector<std::string>> configs = {
        {},
        {"--heads", "3"},
        {"--text", "the cat & the dog = friends?", "--heads", "2", "--mode", "flash", "--block", "2"},
        {"--preset", "gpt2-small", "--tokens", "16"},
        {"--heads", "6", "--kv-heads", "2", "--no-causal", "--seed", "7", "--dropout", "0.25"},
        {"--preset", "journey"},
    };
    for (const std::vector<std::string>& words : configs) {
        Config c = test::parsed(words);
        c.backend = BackendKind::Gl;  // the window's; the students' pages choose their own
        const std::string query = lesson_query(c, 5, true);
        INFO(query);
        CHECK(query.find("backend") == std::string::npos);
        CHECK(query.find(' ') == std::string::npos);
        int step = 0;
        bool present = false;
        const Config back = parsed_back(query, step, present);
        CHECK(step == 5);
        CHECK(present);
        c.backend = BackendKind::Cpu;  // the page's default, as the query leaves it out
        test::check_same(c, back);
    }
    int step = 0;
    bool present = true;
    parsed_back(lesson_query(test::parsed({}), 0, false), step, present);
    CHECK(step == 0);
    CHECK_FALSE(present);
}

namespace {

// A state with the default example's trace computed.
void computed(AppState& st) {
    st.config.backend = BackendKind::Cpu;
    st.computer = std::make_unique<TraceComputer>(false);
    recompute(st);
    for (int i = 0; i < 2000 && !st.trace; ++i) {
        if (auto r = st.computer->take()) apply_result(st, std::move(*r), 0.0);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(st.trace);
}

}  // namespace

TEST_CASE("lesson posts: steps at most ten a second, pause and lock, the question and its reveal", "[lesson][gui]") {
    AppState st;
    computed(st);
    CHECK(lesson_messages(st, 0.0).empty());  // no lesson: nothing
    st.lesson.on = true;
    st.lesson.posted_query = lesson_query_now(st);  // what the server started with
    CHECK(lesson_messages(st, 1.0).empty());

    auto types = [](const std::vector<std::string>& ms) {
        std::vector<json> out;
        for (const std::string& m : ms) out.push_back(json::parse(m));
        return out;
    };
    go_to_step(st, 1, 1.0);
    std::vector<json> m = types(lesson_messages(st, 1.0));
    REQUIRE(m.size() == 1);
    CHECK(m[0]["type"] == "set");
    CHECK(m[0]["query"].get<std::string>().find("step=1") != std::string::npos);
    go_to_step(st, 2, 1.05);  // within a tenth of a second of the last: waits
    CHECK(lesson_messages(st, 1.05).empty());
    m = types(lesson_messages(st, 1.11));
    REQUIRE(m.size() == 1);
    CHECK(m[0]["query"].get<std::string>().find("step=2") != std::string::npos);

    st.lesson.paused = true;
    st.lesson.locked = true;
    m = types(lesson_messages(st, 1.2));
    REQUIRE(m.size() == 2);
    CHECK(m[0] == json{{"type", "set"}, {"paused", true}});
    CHECK(m[1] == json{{"type", "set"}, {"locked", true}});

    // The quiz asks step 3: the class gets the question and stays at step 2 until the reveal.
    set_quiz(st, true);
    go_to_step(st, 3, 2.0);
    REQUIRE(quiz_waiting(st));
    m = types(lesson_messages(st, 2.0));
    REQUIRE(m.size() == 1);
    CHECK(m[0]["type"] == "ask");
    CHECK(m[0]["options"].size() == st.quiz.pending->options.size());
    CHECK(m[0]["answer"] == st.quiz.pending->right);
    CHECK(m[0]["prompt"].get<std::string>().find("Step 3") == 0);
    CHECK(lesson_messages(st, 2.5).empty());
    quiz_answer(st, st.quiz.pending->answer, 3.0);
    m = types(lesson_messages(st, 3.0));
    REQUIRE(m.size() == 2);
    CHECK(m[0] == json{{"type", "reveal"}});
    CHECK(m[1]["query"].get<std::string>().find("step=3") != std::string::npos);

    // Asked and left unanswered: the question is closed.
    go_to_step(st, 4, 4.0);
    REQUIRE(quiz_waiting(st));
    CHECK(types(lesson_messages(st, 4.0))[0]["type"] == "ask");
    set_quiz(st, false);
    m = types(lesson_messages(st, 5.0));
    REQUIRE(m.size() == 2);
    CHECK(m[0] == json{{"type", "close_question"}});
    CHECK(m[1]["query"].get<std::string>().find("step=4") != std::string::npos);
}

namespace {

// A site folder with an index.html, removed at the end of the scope.
struct TempSite {
    std::filesystem::path path;
    explicit TempSite(const std::string& name)
        : path(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(path);
        std::ofstream(path / "index.html") << "<!doctype html>\n";
    }
    ~TempSite() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

void (*handler_of(int sig))(int) {
    struct sigaction now {};
    ::sigaction(sig, nullptr, &now);
    return now.sa_handler;
}

volatile std::sig_atomic_t g_test_signal = 0;
extern "C" void note_test_signal(int) { g_test_signal = 1; }

}  // namespace

TEST_CASE("lesson from the browser teacher: the quiz asks and reveals without the window's lesson", "[lesson][gui]") {
    // The teacher's page has no window lesson (st.lesson.on stays false): its quiz still goes
    // to the class as ask, then reveal, and the class's step stays before the step asked.
    AppState st;
    computed(st);
    go_to_step(st, 2, 1.0);
    CHECK(lesson_question_messages(st).empty());
    CHECK(lesson_class_step(st) == 2);
    set_quiz(st, true);
    go_to_step(st, 3, 2.0);
    REQUIRE(quiz_waiting(st));
    CHECK(lesson_class_step(st) == 2);  // step 3's shape is the question
    std::vector<std::string> m = lesson_question_messages(st);
    REQUIRE(m.size() == 1);
    const json ask = json::parse(m[0]);
    CHECK(ask["type"] == "ask");
    CHECK(ask["answer"] == st.quiz.pending->right);
    CHECK(lesson_question_messages(st).empty());  // asked once
    quiz_answer(st, st.quiz.pending->options[0].shape, 3.0);  // any answer reveals
    CHECK(lesson_class_step(st) == 3);
    m = lesson_question_messages(st);
    REQUIRE(m.size() == 1);
    CHECK(json::parse(m[0]) == json{{"type", "reveal"}});
    CHECK(lesson_question_messages(st).empty());
}

namespace {

// The Controls' starter, for lessons on loopback serving `site`.
LessonStarter loopback_starter(const TempSite& site) {
    app::LessonSettings settings;
    settings.bind = "127.0.0.1";
    settings.site = site.path.string();
    return app::lesson_starter(settings);
}

}  // namespace

TEST_CASE("lesson from the Controls: the port field's value starts it, a value that is no port is refused", "[lesson][gui]") {
    AppState st;
    computed(st);
    CHECK(st.lesson.port == 8080);  // the field's default
    std::vector<int> asked;
    const LessonStarter start = [&asked](const std::string&, int port) {
        asked.push_back(port);
        LessonStart failed;
        failed.error = "cannot listen (test)";
        return failed;
    };
    std::shared_ptr<LessonLink> link;
    st.lesson.port = 9123;
    st.lesson.start_requested = true;
    lesson_frame(st, link, start, 0.0);
    CHECK(asked == std::vector<int>{9123});
    CHECK(st.lesson.said == "cannot listen (test)");
    for (int bad : {-1, 65536, 100000}) {
        st.lesson.port = bad;
        st.lesson.start_requested = true;
        lesson_frame(st, link, start, 0.0);
        CHECK(asked.size() == 1);  // not started
        CHECK(st.lesson.said.find("lesson port " + std::to_string(bad) + " is not a port") == 0);
        CHECK(st.lesson.said.find("0 for any free port") != std::string::npos);
    }
}

TEST_CASE("lesson from the Controls: a port in use is named in one line, SIGINT and SIGTERM close the window", "[lesson][gui]") {
    const TempSite site("headsplit-controls");
    const LessonStarter start = loopback_starter(site);

    // Another server holds a port: the Controls' lesson on it says so, naming the port and the field.
    lesson::ServerOptions other;
    other.bind = "127.0.0.1";
    other.port = 0;
    other.site = site.path.string();
    lesson::Server holder(other);
    AppState st;
    computed(st);
    std::shared_ptr<LessonLink> link;
    st.lesson.port = holder.port();
    st.lesson.start_requested = true;
    lesson_frame(st, link, start, 0.0);
    CHECK_FALSE(link);
    CHECK_FALSE(st.lesson.on);
    const std::string& said = st.lesson.said;
    CHECK(said.find("port " + std::to_string(holder.port()) + ": the port is in use") != std::string::npos);
    CHECK(said.find("lesson port field") != std::string::npos);
    CHECK(said.find("--port") == std::string::npos);  // the window has no command line to change
    CHECK(said.find('\n') == std::string::npos);

    // On any free port it starts; the terminal's signals then close the window (the students
    // are told as when it is closed), and once the lesson is gone the handlers before it are back.
    struct sigaction mine {}, before_int {}, before_term {};
    mine.sa_handler = note_test_signal;
    sigemptyset(&mine.sa_mask);
    ::sigaction(SIGINT, &mine, &before_int);
    ::sigaction(SIGTERM, &mine, &before_term);
    st.lesson.port = 0;
    st.lesson.start_requested = true;
    lesson_frame(st, link, start, 1.0);
    REQUIRE(link);
    CHECK(st.lesson.on);
    CHECK(st.lesson.port == 0);  // the field keeps what the teacher typed
    CHECK(handler_of(SIGINT) != note_test_signal);
    CHECK(handler_of(SIGTERM) != note_test_signal);
    CHECK_FALSE(link->interrupted());
    std::raise(SIGINT);
    CHECK(g_test_signal == 0);
    CHECK(link->interrupted());
    lesson_frame(st, link, start, 2.0);
    CHECK(st.lesson.close_window);
    lesson_end(st, link);
    CHECK(st.lesson.said == "the lesson has ended; every student was told");
    CHECK(handler_of(SIGINT) == note_test_signal);
    CHECK(handler_of(SIGTERM) == note_test_signal);
    ::sigaction(SIGINT, &before_int, nullptr);
    ::sigaction(SIGTERM, &before_term, nullptr);
}

TEST_CASE("lesson command: its window still closes on SIGINT and SIGTERM after the lesson ends", "[lesson][gui]") {
    const TempSite site("headsplit-ended");
    const LessonStarter start = loopback_starter(site);
    struct sigaction before_int {}, before_term {};
    ::sigaction(SIGINT, nullptr, &before_int);
    ::sigaction(SIGTERM, nullptr, &before_term);
    app::close_window_on_signals();  // as `headsplit lesson` does before its window opens
    AppState st;
    computed(st);
    std::shared_ptr<LessonLink> link;
    st.lesson.port = 0;
    st.lesson.start_requested = true;
    lesson_frame(st, link, start, 1.0);
    REQUIRE(link);
    st.lesson.stop_requested = true;  // "end the lesson"
    lesson_frame(st, link, start, 2.0);
    CHECK_FALSE(link);
    if (!app::lesson_interrupted()) CHECK_FALSE(st.lesson.close_window);  // (the flag outlives a case)
    std::raise(SIGTERM);  // noted, not the default action: the window must act on it
    CHECK(app::lesson_interrupted());
    lesson_frame(st, link, start, 3.0);
    CHECK(st.lesson.close_window);
    ::sigaction(SIGINT, &before_int, nullptr);
    ::sigaction(SIGTERM, &before_term, nullptr);
}

TEST_CASE("lesson stats: the server hands its latest stats to another thread", "[lesson]") {
    namespace fs = std::filesystem;
    const fs::path site = fs::temp_directory_path() / ("headsplit-stats-" + std::to_string(::getpid()));
    fs::create_directories(site);
    std::ofstream(site / "index.html") << "<!doctype html>\n";
    lesson::ServerOptions o;
    o.bind = "127.0.0.1";
    o.port = 0;
    o.site = site.string();
    o.max_students = 42;
    lesson::Server server(o);
    // Waits for a stats message that `pred` holds for; its version went up.
    std::uint64_t seen = 0;
    auto wait_for = [&](auto pred) {
        for (int i = 0; i < 1000; ++i) {
            const lesson::Server::Stats s = server.latest_stats();
            if (s.version > seen) {
                LessonView v;
                REQUIRE(take_lesson_stats(v, s.json));
                if (pred(v.cls)) {
                    seen = s.version;
                    return v.cls;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        FAIL("no such stats: " << server.latest_stats().json);
        return LessonClass{};
    };
    LessonClass c = wait_for([](const LessonClass& k) { return k.question_id == 0; });
    CHECK(c.connected == 0);
    CHECK(c.max_students == 42);
    server.post_teacher_message(R"({"type":"ask","prompt":"which?","options":["[1, 3]","[3, 1]","[1]"],"answer":2})");
    c = wait_for([](const LessonClass& k) { return k.question_id == 1; });
    CHECK(c.answered == 0);
    CHECK(c.counts.empty());  // counts only once revealed
    server.post_teacher_message(R"({"type":"reveal"})");
    c = wait_for([](const LessonClass& k) { return !k.counts.empty(); });
    CHECK(c.counts == std::vector<int>{0, 0, 0});
    CHECK(c.answer == 2);
    server.stop();
    fs::remove_all(site);
}
