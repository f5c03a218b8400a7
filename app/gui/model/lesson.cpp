#include "gui/model/lesson.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "gui/model/state.hpp"
#include "headsplit/base/op.hpp"
#include "headsplit/io/address.hpp"
#include "headsplit/io/config_options.hpp"

namespace headsplit::gui {

namespace {

using json = nlohmann::json;

// The protocol's bound on a question's prompt is 512 bytes.
constexpr std::size_t kPromptBytes = 500;

std::string dump(const json& doc) { return doc.dump(-1, ' ', false, json::error_handler_t::replace); }

// The question as the class reads it: the step, its op, its code line, and what to predict.
std::string question_prompt(const AppState& st, const QuizQuestion& q) {
    const Step& s = st.trace->steps[static_cast<std::size_t>(q.step)];
    std::string p = "Step " + std::to_string(s.index) + ": " + op_name(s.op) + ". What shape is " + q.tensor +
                    " after " + s.code + " ?";
    if (p.size() > kPromptBytes) p = "Step " + std::to_string(s.index) + ": " + op_name(s.op) + ". What shape is " + q.tensor + "?";
    return p.substr(0, kPromptBytes);
}

}  // namespace

std::string lesson_query(const Config& c, int step, bool present) {
    QueryPairs q;
    for (auto& [name, value] : config_options(c))
        if (name != "backend") q.emplace_back(name, value);
    q.emplace_back("step", std::to_string(step));
    if (present) q.emplace_back("present", "");
    return encode_query(q);
}

int lesson_class_step(const AppState& st) {
    return quiz_waiting(st) ? std::max(0, std::min(st.step, st.quiz.shown_upto)) : st.step;
}

std::string lesson_query_now(const AppState& st) { return lesson_query(st.config, lesson_class_step(st), st.presenting); }

std::string lesson_port_problem(int port) {
    if (port >= 0 && port <= 65535) return {};
    return "lesson port " + std::to_string(port) + " is not a port; give one from 1 to 65535 (8080 by default), or 0 for any free port";
}

std::vector<std::string> lesson_question_messages(AppState& st) {
    LessonView& v = st.lesson;
    std::vector<std::string> out;
    const bool waiting = quiz_waiting(st);
    const bool open = v.asked != 0 && !v.revealed;
    if (open && !(waiting && st.quiz.questions == v.asked)) {
        if (st.quiz.on && st.quiz.answered_step == v.asked_step && st.step == v.asked_step) {
            out.push_back(dump({{"type", "reveal"}}));
            v.revealed = true;
        } else {
            out.push_back(dump({{"type", "close_question"}}));
            v.asked = 0;
        }
    }
    if (waiting && st.quiz.questions != v.asked) {
        const QuizQuestion& q = *st.quiz.pending;
        json options = json::array();
        v.options.clear();
        for (const QuizOption& o : q.options) {
            v.options.push_back(shape_str(o.shape));
            options.push_back(v.options.back());
        }
        out.push_back(dump({{"type", "ask"}, {"prompt", question_prompt(st, q)}, {"options", options}, {"answer", q.right}}));
        v.asked = st.quiz.questions;
        v.asked_step = q.step;
        v.answer = q.right;
        v.revealed = false;
    }
    return out;
}

std::vector<std::string> lesson_messages(AppState& st, double now) {
    LessonView& v = st.lesson;
    std::vector<std::string> out;
    if (!v.on) return out;
    // The question first: an unanswered one goes before the state moves on.
    out = lesson_question_messages(st);
    if (v.paused != v.posted_paused) {
        out.push_back(dump({{"type", "set"}, {"paused", v.paused}}));
        v.posted_paused = v.paused;
    }
    if (v.locked != v.posted_locked) {
        out.push_back(dump({{"type", "set"}, {"locked", v.locked}}));
        v.posted_locked = v.locked;
    }
    if (now - v.last_post >= 1.0 / kLessonPostsPerSecond) {
        const std::string query = lesson_query_now(st);
        if (query != v.posted_query) {
            out.push_back(dump({{"type", "set"}, {"query", query}}));
            v.posted_query = query;
            v.last_post = now;
        }
    }
    return out;
}

bool take_lesson_stats(LessonView& v, const std::string& text) {
    const json doc = json::parse(text, nullptr, false);
    if (!doc.is_object() || doc.value("type", "") != "stats") return false;
    LessonClass c;
    c.connected = doc.value("connected", 0);
    c.max_students = doc.value("max_students", 0);
    c.answered = doc.value("answered", 0);
    c.question_id = doc.value("question_id", 0);
    if (doc.contains("counts") && doc["counts"].is_array())
        for (const json& n : doc["counts"]) c.counts.push_back(n.is_number_integer() ? n.get<int>() : 0);
    c.answer = doc.value("answer", -1);
    v.cls = std::move(c);
    return true;
}

void lesson_adopt(AppState& st, std::shared_ptr<LessonLink>& link, const LessonStart& started) {
    LessonView& v = st.lesson;
    if (!started.link) {
        v.said = started.error;
        return;
    }
    link = started.link;
    const bool can_start = v.can_start;
    const int port = v.port;
    v = LessonView{};
    v.can_start = can_start;
    v.port = port;
    v.on = true;
    v.interrupted = started.interrupted;
    v.student_url = started.student_url;
    v.join_code = started.join_code;
    v.other_addresses = started.other_addresses;
    v.qr_size = started.qr_size;
    v.qr = started.qr;
    v.posted_query = lesson_query_now(st);  // the server starts with it
}

void lesson_end(AppState& st, std::shared_ptr<LessonLink>& link) {
    if (link) link->end();
    link.reset();
    if (st.lesson.on) st.lesson.said = "the lesson has ended; every student was told";
    st.lesson.on = false;
}

void lesson_frame(AppState& st, std::shared_ptr<LessonLink>& link, const LessonStarter& start, double now) {
    LessonView& v = st.lesson;
    v.can_start = static_cast<bool>(start) || link;
    if (v.stop_requested) {
        v.stop_requested = false;
        lesson_end(st, link);
    }
    if (v.start_requested) {
        v.start_requested = false;
        const std::string problem = lesson_port_problem(v.port);
        if (!problem.empty()) v.said = problem;
        else if (!link && start) lesson_adopt(st, link, start(lesson_query_now(st), v.port));
    }
    if ((link && link->interrupted()) || (v.interrupted && v.interrupted())) v.close_window = true;
    if (!link) return;
    for (const std::string& m : lesson_messages(st, now)) link->post(m);
    auto [version, text] = link->stats();
    if (version != v.stats_version && take_lesson_stats(v, text)) v.stats_version = version;
}

}  // namespace headsplit::gui
