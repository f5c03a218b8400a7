#include "gui/runs/audit_sweep.hpp"

#include <iostream>

#include <GLFW/glfw3.h>

#include <nlohmann/json.hpp>

#include "headsplit/teaching/presets.hpp"
#include "headsplit/io/trace_json.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

std::vector<AuditCase> audit_cases() {
    std::vector<AuditCase> out;
    Config base;
    base.backend = BackendKind::Cpu;  // the layout does not depend on the backend; the CPU is quick
    out.push_back({"default", base, {}, false});
    Config journey = config_from_preset("journey");
    journey.backend = BackendKind::Cpu;
    out.push_back({"journey", journey, {}, false});
    Config nine = base;
    nine.tokens = split_words("the quick brown fox jumps over the lazy dog");
    nine.heads = 3;
    out.push_back({"nine-words", nine, {}, false});
    Config t32 = base;
    t32.tokens = synthetic_tokens(32);
    t32.d_in = t32.d_out = 12;
    t32.heads = 4;
    out.push_back({"T32-4heads", t32, {}, false});
    Config small = config_from_preset("gpt2-small");
    small.backend = BackendKind::Cpu;
    small.tokens = synthetic_tokens(16);
    out.push_back({"gpt2-small", small, {}, false});
    Config loop = base;
    loop.mode = Mode::Loop;
    out.push_back({"loop", loop, {}, false});
    Config fused = base;
    fused.mode = Mode::Fused;
    out.push_back({"fused", fused, {}, false});
    AuditCase panned{"gpt2-small-panned", small, {}, false};
    panned.config.tokens = synthetic_tokens(32);
    panned.view.zoom = 1.5f;
    panned.view.token0 = 10, panned.view.col0 = 20, panned.view.head0 = 5;
    out.push_back(panned);
    out.push_back({"nine-words-compare", nine, {}, true});
    AuditCase quiz{"nine-words-quiz", nine, {}, false};
    quiz.quiz = true;
    out.push_back(quiz);
    // Issue 13's views: key/value heads shared (kv0 panels in their group's colour), a padded
    // batch (sentence blocks, <pad> rows, padding drawn apart from the future), cross-attention
    // (T x S grids, context tokens), and decoding (rounds, the cache growing).
    Config mqa = nine;
    mqa.kv_heads = 1;
    out.push_back({"nine-words-mqa", mqa, {}, false});
    Config batch = base;
    batch.set_sentences({split_words("the quick brown fox jumps"), split_words("a lazy dog"), split_words("it sleeps")});
    out.push_back({"batch-padded", batch, {}, false});
    Config cross = base;
    cross.context = {split_words("le chat dort sur le tapis")};
    cross.causal = false;
    cross.kv_heads = 1;
    out.push_back({"cross-mqa", cross, {}, false});
    Config decode = base;
    decode.tokens = split_words("the cat sleeps here");
    decode.decode_from = 3;
    decode.kv_heads = 1;
    out.push_back({"decode", decode, {}, false});
    // Issue 14's flash mode: tile steps (scores, m, l, acc) and the tiles panel (the ghost grid,
    // skipped tiles, m and l per row, the memory strip), one key per tile and a padded batch.
    Config flash = base;
    flash.mode = Mode::Flash;
    flash.block = 1;
    out.push_back({"flash-block1", flash, {}, false});
    Config flash_batch = batch;
    flash_batch.mode = Mode::Flash;
    flash_batch.block = 2;
    out.push_back({"flash-batch", flash_batch, {}, false});
    // Issue 15's checkpoint: BPE pieces as token labels (leading spaces), the Checkpoint
    // section with its layer slider, the controls a checkpoint cannot change greyed out.
    Config tiny = config_from_preset("tiny-trained");
    tiny.backend = BackendKind::Cpu;
    out.push_back({"tiny-trained", tiny, {}, false});
    return out;
}

AuditSweep::AuditSweep(std::vector<std::pair<int, int>> windows, std::vector<float> fonts, std::vector<AuditCase> cases,
                       std::string report_path)
    : windows_(std::move(windows)), fonts_(std::move(fonts)), cases_(std::move(cases)), report_(std::move(report_path)) {}

bool AuditSweep::settled(const AppState& st, int fb_w, int fb_h) const {
    const auto [w, h] = windows_[window_];
    const Config& want = cases_[case_].config;
    return fb_w == w && fb_h == h && !st.font_dirty && st.trace && !st.computer->busy() &&
           st.trace->config.tokens == want.tokens && st.trace->config.mode == want.mode &&
           st.trace->config.d_out == want.d_out && st.trace->config.heads == want.heads &&
           st.trace->config.kv_heads == want.kv_heads && st.trace->config.batch_tokens == want.batch_tokens &&
           st.trace->config.context == want.context && st.trace->config.decode_from == want.decode_from &&
           st.trace->config.block == want.block &&
           (!cases_[case_].compare_masks || st.other_mask);
}

std::string AuditSweep::describe(const AppState& st) const {
    return cases_[case_].name + (step_ < 0 ? ", weight split tab" : ", step " + std::to_string(st.step)) +
           (present_ ? ", presenter mode" : "");
}

bool AuditSweep::before_frame(AppState& st, GLFWwindow* win, double) {
    if (window_ >= windows_.size()) return false;
    if (!set_up_) {
        const auto [w, h] = windows_[window_];
        glfwSetWindowSize(win, w, h);
        if (st.font_scale != fonts_[font_]) {
            st.font_scale = fonts_[font_];
            st.font_dirty = true;
        }
        st.config = cases_[case_].config;
        st.compare_masks = cases_[case_].compare_masks;
        recompute(st);
        step_ = -1;
        frames_here_ = 0;
        set_up_ = true;
    }
    // The step (or tab) to show, in presenter mode on the second pass; animations are skipped
    // so the frame is the settled layout.
    st.presenting = present_;
    if (step_ < 0) {
        st.open_weights = frames_here_ == 0;
    } else {
        st.open_heatmaps = frames_here_ == 0;
        if (cases_[case_].quiz && frames_here_ == 0 && step_ > 0) {
            // Reached from the step before, as in class: the step waits as a question.
            set_quiz(st, false);
            st.step = step_ - 1;
            set_quiz(st, true);
            go_to_step(st, step_, 0.0);
        } else if (!cases_[case_].quiz) {
            set_quiz(st, false);
        }
        st.step = step_;
    }
    st.anim_start = -1e9;
    st.focus_head = -1;
    st.stage_view = cases_[case_].view;
    layout_audit().enabled = true;
    return true;
}

void AuditSweep::after_frame(AppState& st, const FrameInfo& f) {
    const int fb_w = f.fb_w, fb_h = f.fb_h;
    ++frames_here_;
    if (!settled(st, fb_w, fb_h)) {
        frames_here_ = 0;
        return;
    }
    if (frames_here_ < 3) return;  // the tab switch and the layout take a frame or two
    const LayoutReport& r = layout_audit().report();
    const Config& c = st.trace->config;
    AuditRules rules;
    rules.heatmap_cells_32 = c.num_tokens() <= 12 && fb_w == 1920 && fb_h == 1080;
    rules.every_value_shown = cases_[case_].name == "default";
    ++frames_checked_;
    for (std::string& p : audit_problems(r, rules)) {
        ++problem_count_;
        if (problems_.size() < 500) problems_.push_back(describe(st) + ": " + std::move(p));
    }
    // Next: the first step after the tab, then each step, then the next case / font / size.
    frames_here_ = 0;
    if (step_ + 1 < static_cast<int>(st.trace->steps.size())) {
        ++step_;
        return;
    }
    if (!present_) {  // every step again in presenter mode
        present_ = true;
        step_ = 0;
        return;
    }
    present_ = false;
    set_up_ = false;
    if (++case_ < cases_.size()) return;
    case_ = 0;
    if (++font_ < fonts_.size()) return;
    font_ = 0;
    ++window_;
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
    doc["frames_checked"] = frames_checked_;
    doc["problem_count"] = problem_count_;
    doc["problems"] = problems_;  // the first 500
    try {
        write_file_atomically(report_, doc.dump(1));
    } catch (const std::exception& e) {
        std::cerr << "headsplit: " << e.what() << "\n";
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
