#include "web/page_lesson.hpp"

#include <exception>
#include <new>
#include <string_view>

#include <emscripten.h>

#include "headsplit/engine/config.hpp"
#include "headsplit/io/config_options.hpp"
#include "cli/options.hpp"
#include "gui/model/lesson.hpp"
#include "web/page.hpp"

namespace headsplit::gui {

namespace {

extern "C" {  // web/page_library.js
void headsplit_lesson_start(const char* code, const char* secret, int adopt);
void headsplit_lesson_teach(const char* query);
void headsplit_lesson_refused(const char* line);
void headsplit_lesson_post(const char* json);
int headsplit_lesson_held();
void headsplit_lesson_ignored();
}

// The newest state's query the browser side handed over, not yet applied (only the newest
// counts: a page that draws slowly skips the states in between).
std::optional<std::string>& inbox() {
    static std::optional<std::string> q;
    return q;
}

// The address's names that are the teacher's view, the rest being the page's own (its text
// size, its theme, the tests' outputs, the lesson itself) or going as the lesson's question
// (the quiz).
bool teaches(std::string_view name) {
    return name != "font-scale" && name != "light" && name != "json" && name != "layout-report" && name != "lesson" &&
           name != "teacher" && name != "quiz";
}

bool same_configuration(const Config& a, const PageRequests& a_given, const Config& b, const PageRequests& b_given) {
    const QueryPairs a_options = config_options(a), b_options = config_options(b);
    if (a_options.empty() || b_options.empty()) return a_given.config_query == b_given.config_query;
    return a_options == b_options;
}

}  // namespace

// The browser side's state for this page to follow (a following student's, or the teacher's
// page taking the lesson's state when it opened).
extern "C" EMSCRIPTEN_KEEPALIVE void headsplit_lesson_follow(const char* query) { inbox() = query; }

void start_lesson() {
    const PageRequests& r = page_requests();
    if (r.lesson.empty() && r.teacher.empty()) return;
    headsplit_lesson_start(r.lesson.c_str(), r.teacher.c_str(), r.teacher.empty() || !r.own_view ? 1 : 0);
}

std::string lesson_query(const QueryPairs& pairs) {
    std::string out;
    for (const char c : encode_query(pairs)) {
        if (c == '\'' || c == '(' || c == ')' || c == '!' || c == '*') {
            static const char hex[] = "0123456789ABCDEF";
            const auto u = static_cast<unsigned char>(c);
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out;
}

void PageLesson::before_frame(AppState& st, double now) {
    st.lesson.held = page_requests().teacher.empty() && headsplit_lesson_held() != 0;
    if (st.lesson.ignored != ignored_told_) {
        ignored_told_ = st.lesson.ignored;
        headsplit_lesson_ignored();
    }
    if (inbox()) {
        const std::string query = std::move(*inbox());
        inbox().reset();
        apply(st, query, now);
    }
    // The state's step, once the trace it was asked with is on screen; a refused
    // configuration leaves the trace as it was and the step with it.
    if (waiting_step_ && !st.computer->busy()) {
        if (st.trace.get() != trace_before_) go_to_step(st, *waiting_step_, now);
        waiting_step_.reset();
    }
}

void PageLesson::apply(AppState& st, const std::string& query, double now) {
    PageRequests given;
    GuiOptions o;
    try {
        o = page_options(parse_query(query), given);
    } catch (const std::bad_alloc&) {
        headsplit_lesson_refused("the teacher's view: out of memory");
        return;
    } catch (const std::exception& e) {
        headsplit_lesson_refused(("the teacher's view was refused: " + app::one_line(e.what())).c_str());
        return;
    }
    st.presenting = o.present;
    set_quiz(st, o.quiz);
    if (same_configuration(o.config, given, st.config, page_requests())) {
        waiting_step_.reset();
        go_to_step(st, o.step, now);
        return;
    }
    st.config = o.config;
    page_requests().config_query = given.config_query;
    trace_before_ = st.trace.get();
    recompute(st);
    take_result(st, now);  // a teaching size is computed already
    waiting_step_.reset();
    if (st.trace.get() != trace_before_) go_to_step(st, o.step, now);
    else if (st.computer->busy()) waiting_step_ = o.step;  // gone to once its trace is in
}

void PageLesson::after_frame(AppState& st, const QueryPairs& address) {
    if (page_requests().teacher.empty() || inbox() || waiting_step_) return;
    // The question before the view: an unanswered one goes before the class moves on.
    for (const std::string& m : lesson_question_messages(st)) headsplit_lesson_post(m.c_str());
    QueryPairs view;
    for (const auto& [name, value] : address)
        if (teaches(name)) view.emplace_back(name, name == "step" ? std::to_string(lesson_class_step(st)) : value);
    headsplit_lesson_teach(lesson_query(view).c_str());
}

}  // namespace headsplit::gui
