#include "gui/runs/audit_sweep.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <GLFW/glfw3.h>

#include <nlohmann/json.hpp>

#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/stage_parts.hpp"  // which steps are about memory
#include "gui/panels/style.hpp"
#include "gui/runs/layout_record.hpp"
#include "gui/view/layout.hpp"

namespace headsplit::gui {

namespace {

// The problems written to the report (all are counted); HEADSPLIT_AUDIT_KEEP_ALL keeps every one.
const std::size_t kProblemsKept = std::getenv("HEADSPLIT_AUDIT_KEEP_ALL") ? SIZE_MAX : 500;

}  // namespace

std::vector<AuditRun> audit_runs(std::size_t windows, std::size_t fonts, std::size_t cases) {
    const std::size_t k = std::max<std::size_t>(1, windows * fonts / 8);
    std::vector<AuditRun> out;
    for (std::size_t w = 0; w < windows; ++w)
        for (std::size_t f = 0; f < fonts; ++f)
            for (std::size_t c = 0; c < cases; ++c)
                if ((w * fonts + f + c) % k == 0) out.push_back({w, f, c});
    return out;
}

AuditSweep::AuditSweep(std::vector<std::pair<int, int>> windows, std::vector<float> fonts, std::vector<AuditCase> cases,
                       std::string report_path)
    : windows_(std::move(windows)), fonts_(std::move(fonts)), cases_(std::move(cases)), report_(std::move(report_path)),
      runs_(audit_runs(windows_.size(), fonts_.size(), cases_.size())) {}

bool AuditSweep::settled(const AppState& st, int fb_w, int fb_h) const {
    const auto [w, h] = windows_[runs_[run_].window];
    const Config& want = cases_[runs_[run_].c].config;
    return fb_w == w && fb_h == h && !st.font_dirty && st.trace && !st.computer->busy() &&
           st.trace->config.tokens == want.tokens && st.trace->config.mode == want.mode &&
           st.trace->config.d_out == want.d_out && st.trace->config.heads == want.heads &&
           st.trace->config.kv_heads == want.kv_heads && st.trace->config.batch_tokens == want.batch_tokens &&
           st.trace->config.context == want.context && st.trace->config.decode_from == want.decode_from &&
           st.trace->config.block == want.block &&
           (!cases_[runs_[run_].c].compare_masks || st.other_mask);
}

std::string AuditSweep::describe(const AppState& st) const {
    const auto [w, h] = windows_[runs_[run_].window];
    char size[64];
    std::snprintf(size, sizeof size, " (%dx%d, text %g)", w, h, static_cast<double>(st.font_scale));
    static const char* const tabs[] = {", why tab (modes)",       ", why tab (T sweep)",        ", why tab (KV cache)",
                                       ", weight split (W_query)", ", weight split (matmuls)", ", weight split (KV heads)"};
    return cases_[runs_[run_].c].name + size + (step_ < 0 ? tabs[step_ - kFirstTab] : ", step " + std::to_string(st.step)) +
           (present_ ? ", presenter mode" : "");
}

bool AuditSweep::before_frame(AppState& st, GLFWwindow* win, double) {
    if (run_ >= runs_.size()) return false;
    const AuditCase& here = cases_[runs_[run_].c];
    if (!set_up_) {
        const auto [w, h] = windows_[runs_[run_].window];
        glfwSetWindowSize(win, w, h);
        const float font = fonts_[runs_[run_].font];
        if (st.font_scale != font) {
            st.font_scale = font;
            st.font_dirty = true;
        }
        st.config = here.config;
        st.compare_masks = here.compare_masks;
        recompute(st);
        step_ = kFirstTab;
        frames_here_ = 0;
        set_up_ = true;
    }
    // The step (or tab) to show, in presenter mode on the second pass; animations are skipped
    // so the frame is the settled layout.
    st.presenting = present_;
    if (step_ < kFirstWeightsTab) {
        st.open_why = frames_here_ == 0;
        st.why_view = static_cast<AppState::WhyView>(step_ - kFirstTab);
        std::shared_ptr<WhyJob>& job = why_jobs_[runs_[run_].c];
        if (!job) {
            job = std::make_shared<WhyJob>();
            job->config = here.config;
            job->result = std::make_shared<WhyResult>(measure_why(here.config, 5, job->done, job->total, nullptr, 0.1));
        }
        st.why = job;
    } else if (step_ < 0) {
        st.open_weights = frames_here_ == 0;
        st.weights_view = static_cast<AppState::WeightsView>(step_ - kFirstWeightsTab);
    } else {
        st.open_heatmaps = frames_here_ == 0;
        if (here.quiz && frames_here_ == 0 && step_ > 0) {
            // Reached from the step before, as in class: the step waits as a question.
            set_quiz(st, false);
            st.step = step_ - 1;
            set_quiz(st, true);
            go_to_step(st, step_, 0.0);
            if (here.answered && st.quiz.pending) {  // a wrong option: the longest verdict
                const QuizQuestion& q = *st.quiz.pending;
                for (const QuizOption& o : q.options)
                    if (o.shape != q.answer) {
                        quiz_answer(st, o.shape, 0.0);
                        break;
                    }
            }
        } else if (!here.quiz) {
            set_quiz(st, false);
        }
        st.step = step_;
    }
    st.anim_start = -1e9;
    st.focus_head = -1;
    st.stage_view = here.view;
    layout_audit().enabled = true;
    return true;
}

AuditRules AuditSweep::rules_here(const AppState& st, int fb_w, int fb_h) const {
    const Config& c = st.trace->config;
    AuditRules rules;
    // At 1920x1080 a map of up to 12 tokens is 32 px a cell (the one shown large when not every
    // head fits); two maps compared side by side share the room.
    // (In the normal layout up to text 1.25: larger, its text lines take the room.)
    // (At the steps the maps are about, scores to dropout: at the others the stage has the room.)
    rules.heatmap_cells_32 = c.num_tokens() <= 12 && fb_w == 1920 && fb_h == 1080 && !cases_[runs_[run_].c].compare_masks &&
                             (st.presenting || st.font_scale <= 1.25f) && step_ >= 0 &&
                             is_grid_op(st.trace->steps[static_cast<std::size_t>(st.step)].op);
    // The default example shows every number where the window has 900 x 540 px per unit of
    // text at least (smaller, a projector's window at text 2, the cells shrink below a number),
    // and on the stage in presenter mode from 1024x768 up to text 1.5.
    rules.every_value_shown = cases_[runs_[run_].c].every_value &&
                              ((fb_w >= 900 * st.font_scale && fb_h >= 540 * st.font_scale) ||
                               (st.presenting && fb_w >= 1024 && fb_h >= 768 && st.font_scale <= 1.5f));
    // Presenter mode: digits 2.5% of the window's height (27 px from 1080 up); the memory strip
    // on the steps about memory up to text 1.5 (and in the normal layout, below): a view,
    // transpose, transpose back or merge, or a copy (keys repeated for their heads, the cache's
    // new token, a chunk of fused qkv, any other), of up to 144 numbers (12 tokens x 12
    // features) in the strip's tensor; nothing of the weights
    // outside the steps that compute and use them (the heatmaps of the weights each context used).
    const Step& here = st.trace->steps[static_cast<std::size_t>(st.step)];
    rules.number_min_h = st.presenting ? 0.025f * std::min(ImGui::GetIO().DisplaySize.y, 1080.0f) : 0.0f;
    const bool memory_step = stage::reshapes(here) || stage::memory_lesson(here);
    const TensorRecord& first = here.tensors.front();
    std::int64_t lo = INT64_MAX, hi = -1;  // the strip's addresses (a chunk of fused qkv leaves gaps)
    for (std::int64_t i = 0; i < numel(first.shape); ++i) lo = std::min(lo, first.address(i)), hi = std::max(hi, first.address(i));
    // The normal layout too where its stage has the room beside legible cells: from 1366x768
    // up to text 1.5, up to 96 numbers (12 tokens x 8 features), not in flash mode (whose tiles
    // share the column).
    const bool normal_room = !st.presenting && c.mode != Mode::Flash && numel(first.shape) <= 96 &&
                             fb_w >= 1366 && fb_h >= 768;
    rules.memory_strip = (st.presenting || normal_room) && st.font_scale <= 1.5f && step_ >= 0 && memory_step &&
                         numel(first.shape) <= 144 && hi - lo < 256 &&
                         !st.shapes_only && !quiz_waiting(st);
    // Nothing of the weights outside the steps from the first that computes them to the last
    // context that uses them, of the step's own round where it decodes (the steps of no round,
    // the input and the assembled output, with the prefill's).
    const auto round_of = [&](const Step& s) { return c.decoding() ? std::max(s.round, 0) : -1; };
    int first_weights = -1, last_use = -1;
    for (const Step& s : st.trace->steps) {
        if (round_of(s) != round_of(here)) continue;
        if (first_weights < 0 && (s.op == Op::Scores || s.op == Op::Softmax)) first_weights = s.index;
        if (s.op == Op::Context) last_use = s.index;
    }
    rules.no_weights = step_ >= 0 && first_weights >= 0 && (st.step < first_weights || (last_use >= 0 && st.step > last_use));
    // Every token named whole, in the classroom's windows, text up to 1.5: presenter mode from
    // 1024x768 up to 16 tokens (every panel); the normal layout from 1366x768 up to 16 tokens
    // (padded batches too, but flash mode's, whose tiles and their summary take the column),
    // in the panel the step is about (the heatmaps from the scores to the dropout, else the
    // stage).
    const std::int64_t most = std::max(c.num_tokens(), c.num_keys());
    const bool classroom = st.presenting ? fb_w >= 1024 && fb_h >= 768 && most <= 16
                                         : fb_w >= 1366 && fb_h >= 768 && most <= 16 &&
                                               (c.batch == 1 || c.mode != Mode::Flash);
    rules.whole_labels = st.font_scale <= 1.5f && classroom && step_ >= 0;
    if (!st.presenting) rules.labels_panel = is_grid_op(here.op) ? "heatmaps" : "stage";
    // No word or number cut short, in every panel of a classroom's window from 1024x768 up to
    // text 1.5 (a token's label is judged by the rule above: past 16 tokens they thin).
    rules.whole_text = st.font_scale <= 1.5f && fb_w >= 1024 && fb_h >= 768;
    // No panel a third empty while its cells hide their numbers: on a projector's window (up to
    // 1920x1080). Two masks compared (at the maps' steps, where they are) and flash's tiles,
    // whose maps stand side by side, may instead span their panel's width or height.
    const bool side_by_side = (cases_[runs_[run_].c].compare_masks && is_grid_op(here.op)) || c.mode == Mode::Flash;
    rules.room_used = rules.whole_text && step_ >= 0 && fb_w <= 1920 && fb_h <= 1080;
    // A quiz's verdict takes a line of the normal layout's stage (in its title's place where it
    // is short enough): in a window under 1280x720 px per unit of text (1920x1080 at 1.5) the
    // stage's cells there are the unasked frame's less that line, legible but not always
    // numbered; presenter mode keeps them.
    if (cases_[runs_[run_].c].answered && !st.presenting && (fb_w < 1280 * st.font_scale || fb_h < 720 * st.font_scale))
        rules.every_value_shown = rules.room_used = false;
    rules.room_by_span = side_by_side;
    return rules;
}

void AuditSweep::after_frame(AppState& st, const FrameInfo& f) {
    const int fb_w = f.fb_w, fb_h = f.fb_h;
    ++frames_here_;
    if (!settled(st, fb_w, fb_h)) {
        frames_here_ = 0;
        return;
    }
    const LayoutReport& r = layout_audit().report();
    // The tab switch and the layout take a frame or two, some boundaries a few more: the frame
    // checked is the first, from the third, whose panels stand where they stood the frame before.
    const Take take = take_frame(frames_here_, settle_.still(r));
    if (take == Take::Wait) return;
    const Step& here = st.trace->steps[static_cast<std::size_t>(st.step)];
    const AuditRules rules = rules_here(st, fb_w, fb_h);
    ++frames_checked_;
    std::vector<std::string> problems = audit_problems(r, rules);
    // The layout chosen stays from step to step of one configuration while the steps are about
    // one thing: before the weights, the maps' steps (scores to dropout), the steps that use
    // the weights, after the last use; a question waiting; a decoding round; and within those,
    // the steps whose lesson is where the values lie (the stage takes what its memory strip
    // needs) and the others. (Checked where a class watches: presenter mode from 1024x768,
    // the normal layout from 1366x768, text up to 1.5.)
    const bool watched = st.font_scale <= 1.5f && fb_h >= 768 && fb_w >= (st.presenting ? 1024 : 1366);
    // An edge may move by a line of text said on one step only.
    const float lines_moved = 1.0f;
    if (step_ >= 0 && watched) {
        const std::string phase = heatmaps_off(st) + (quiz_waiting(st) ? "asked" : "") + std::to_string(here.round) +
                                  (is_grid_op(here.op)                           ? "maps"
                                   : here.op == Op::Context || here.op == Op::Tile ? "uses"
                                   : stage::memory_lesson(here)                    ? "memory"
                                                                                   : "");
        if (step_ > 0 && before_step_ == step_ - 1 && phase == before_phase_)
            for (std::string& s : layout_shifts(before_, r, lines_moved * ImGui::GetTextLineHeightWithSpacing())) problems.push_back("the layout changed: " + std::move(s));
        // Reshaping steps one after another show the same numbers alike: in presenter mode and
        // the normal layout, on a projector's window (up to 1920x1080), not zoomed in (there
        // the reader asked for larger cells: they show what they can).
        if (step_ > 0 && before_step_ == step_ - 1 && st.stage_view.zoom <= 1.0f && fb_w <= 1920 && fb_h <= 1080 && stage::reshapes(here) &&
            stage::reshapes(st.trace->steps[static_cast<std::size_t>(step_ - 1)]))
            for (std::string& s : decimals_changed(before_, r)) problems.push_back("the numbers' decimals changed: " + std::move(s));
        before_ = r;
        before_step_ = step_;
        before_phase_ = phase;
    }
    if (take == Take::StillMoving)
        problems.push_back("the layout was still moving after " + std::to_string(kMaxSettleFrames) + " frames (" +
                           settle_.moved() + ")");
    for (std::string& p : problems) {
        ++problem_count_;
        if (problems_.size() < kProblemsKept) problems_.push_back(describe(st) + ": " + std::move(p));
    }
    // Next: the first step after the tab, then each step, then the next case / font / size.
    frames_here_ = 0;
    settle_.reset();
    if (step_ + 1 < static_cast<int>(st.trace->steps.size())) {
        ++step_;
        return;
    }
    before_step_ = -1;
    if (!present_) {  // every step again in presenter mode
        present_ = true;
        step_ = 0;
        return;
    }
    present_ = false;
    set_up_ = false;
    ++run_;
}

int AuditSweep::finish() {
    nlohmann::json doc;
    doc["format"] = "headsplit-layout-audit";
    doc["version"] = 1;
    nlohmann::json windows = nlohmann::json::array();
    for (const auto& [w, h] : windows_) windows.push_back({w, h});
    doc["windows"] = windows;
    doc["font_scales"] = fonts_;
    nlohmann::json names = nlohmann::json::array();
    for (const AuditCase& c : cases_) names.push_back(c.name);
    doc["configurations"] = names;
    doc["runs"] = runs_.size();
    doc["frames_checked"] = frames_checked_;
    doc["problem_count"] = problem_count_;
    doc["problems"] = problems_;  // the first 500 (all with HEADSPLIT_AUDIT_KEEP_ALL set)
    try {
        write_file_atomically(report_, doc.dump(1));
    } catch (const std::exception& e) {
        std::cerr << "headsplit: " << terminal_text(e.what()) << "\n";
        return 1;
    }
    if (problem_count_ > 0) {
        std::cerr << "headsplit: layout audit: " << problem_count_ << " problems in " << frames_checked_
                  << " frames; the first: " << problems_.front() << " (all in " << report_ << ")\n";
        return 1;
    }
    return 0;
}

}  // namespace headsplit::gui
