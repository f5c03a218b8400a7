#include "gui/model/state.hpp"

#include <algorithm>
#include <iostream>

#include "headsplit/base/threads.hpp"

namespace headsplit::gui {

namespace {

// Puts the question for the current step, unless it is already the one waiting.
void ask_current(AppState& st) {
    QuizState& q = st.quiz;
    if (!q.on || !st.trace || st.step <= q.shown_upto) return;  // shapes only is enough
    if (q.pending && q.pending->step == st.step) return;
    q.pending = make_question(*st.trace, st.step, ++q.questions);
    q.typed[0] = '\0';
}

}  // namespace

bool picture_ready(const AppState& st) {
    return st.trace && !st.computer->busy() && !(st.why && !st.why->result);
}

void go_to_step(AppState& st, int s, double now) {
    if (!st.trace) return;
    s = std::clamp(s, 0, static_cast<int>(st.trace->steps.size()) - 1);
    if (s == st.step) return;
    st.from_trace = st.trace;
    st.from_step = st.step;
    st.anim_start = now;
    st.step = s;
    st.live.caption.clear();  // it told the step it was made at
    st.live.caption_short.clear();
    ask_current(st);
}

void step_focus_head(AppState& st, int delta) {
    if (!st.trace) return;
    const int heads = static_cast<int>(st.trace->config.heads);
    const int lo = st.panels.heads_fit ? -1 : 0, n = heads - lo;
    const int at = std::clamp(st.focus_head, lo, heads - 1) - lo;
    st.focus_head = (at + (delta % n) + n) % n + lo;
}

void set_quiz(AppState& st, bool on) {
    QuizState& q = st.quiz;
    if (q.on == on) return;
    q.on = on;
    q.pending.reset();
    q.shown_upto = st.step;  // what is on screen has been seen
    q.answered_step = -1;
    q.verdict.clear();
    q.verdict_short.clear();
}

bool quiz_hides(const AppState& st, int s) { return st.quiz.on && s > st.quiz.shown_upto; }

bool quiz_waiting(const AppState& st) {
    return st.quiz.on && st.quiz.pending && st.quiz.pending->step == st.step && quiz_hides(st, st.step);
}

void quiz_answer(AppState& st, Shape given, double now) {
    if (!quiz_waiting(st)) return;
    QuizState& q = st.quiz;
    const QuizQuestion question = *q.pending;
    q.pending.reset();
    const bool right = given == question.answer;
    ++q.asked;
    q.right += right;
    q.answered_step = question.step;
    q.answered_right = right;
    q.shown_upto = std::max(q.shown_upto, question.step);
    // Whole sentences above the step, which the stage draws with its heading's explanation;
    // the answer alone where the line is narrow.
    q.verdict = quiz_verdict(question, given);
    q.verdict_short = right ? q.verdict : "Not quite: it gives " + question.answer_named + ".";
    st.anim_start = now;  // now the step is drawn, moving in from the one before
    st.last_advance = now;  // playing shows it (and the verdict) a whole step's time
}

void quiz_reset_score(AppState& st) { st.quiz.asked = st.quiz.right = 0; }

void apply_result(AppState& st, ComputeResult r, double now) {
    st.last_compute_ms = r.ms;
    if (!r.trace) {
        st.error = r.error;
        if (st.live.waiting) {  // a live change the configuration refuses: say why, keep the model shown
            st.live.caption = st.live.what + ": refused, " + r.error;
            st.live.caption_short.clear();
            st.config = st.live.before;
            st.live.waiting = false;
        }
        return;
    }
    st.error.clear();
    st.notice = r.notice;
    const bool was_waiting = quiz_waiting(st);
    // Keep the step: the same op (and head) in the new trace, else the same index.
    int step = st.step;
    if (const Step* cur = st.current()) {
        step = std::min(step, static_cast<int>(r.trace->steps.size()) - 1);
        for (const Step& s : r.trace->steps)
            if (s.op == cur->op && s.head == cur->head) {
                step = s.index;
                break;
            }
    }
    st.from_trace = st.trace;
    st.from_step = st.step;
    st.anim_start = st.trace ? now : -1e9;
    st.trace = std::move(r.trace);
    st.other_mask = std::move(r.other_mask);
    st.shapes_only = r.shapes_only;
    st.mode_counts = std::move(r.counts);
    st.step = std::clamp(step, 0, static_cast<int>(st.trace->steps.size()) - 1);
    if (st.live.waiting) {
        st.live.caption = live_caption(st.live.what, st.live.before, st.trace->config, st.current());
        st.live.caption_short = live_caption(st.live.what, st.live.before, st.trace->config, nullptr);
        st.live.waiting = false;
    }
    // New shapes: the step on screen stays shown unless it was waiting for an answer, which
    // is asked again from the new trace; the later ones are hidden again.
    if (st.quiz.on) {
        st.quiz.pending.reset();
        st.quiz.answered_step = -1;  // the verdict was about the old shapes
        st.quiz.verdict.clear();
        st.quiz.verdict_short.clear();
        // Steps jumped over and never shown stay hidden.
        st.quiz.shown_upto = std::min(st.quiz.shown_upto, was_waiting ? st.step - 1 : st.step);
        ask_current(st);
    }
}

// Takes a finished trace onto the screen. A GL problem that sent the work to the CPU is
// shown in the Controls panel and, once per message, written to stderr for whoever
// launched the app from a terminal.
void take_result(AppState& st, double now) {
    if (st.why && !st.why->result && ready_to_take(st.why->future))
        st.why->result = std::make_shared<WhyResult>(st.why->future.get());
    auto r = st.computer->take();
    if (!r) return;
    if (r->fell_back && r->notice != st.panels.fallback_said) {
        std::cerr << "headsplit: " << r->notice << "\n";
        st.panels.fallback_said = r->notice;
    }
    apply_result(st, std::move(*r), now);
}

void recompute(AppState& st) { st.computer->request(st.config, st.compare_masks); }

}  // namespace headsplit::gui
