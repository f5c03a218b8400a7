#include "gui/runs/driver.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <malloc.h>
#include <limits>

#include "gui/platform/gl.hpp"
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <nlohmann/json.hpp>

#include "headsplit/io/terminal.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/model/presets.hpp"
#include "headsplit/io/writing.hpp"

namespace headsplit::gui {

namespace {

long resident_kb() {
    long pages_total = 0, pages_resident = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
        std::fclose(f);
    }
    return pages_resident * 4;
}

// Resident memory after handing freed heap back to the system: what is still in use, not
// what glibc's arenas happen to keep cached after the sizes of the last few traces.
long settled_resident_kb() {
    malloc_trim(0);
    return resident_kb();
}

nlohmann::json summary(const std::vector<double>& ms) {
    if (ms.empty()) return {{"frames", 0}};
    const Spread t = spread(ms);
    return {{"frames", ms.size()}, {"median_ms", t.median}, {"p99_ms", t.p99}, {"max_ms", t.max}};
}

const char* const kWords[] = {"the", "cat", "sleeps", "on", "a", "warm", "mat", "while", "dogs", "bark",
                              "your", "journey", "starts", "with", "one", "step"};
// What a careless or hostile user types into the sentence box: shell syntax, quotes, other
// scripts, emoji, a very long word. Each is a word like any other (nothing runs it).
const std::string kHostileWords[] = {"$(id)", "`id`", "it's", "\"quoted\"", "back\\slash",
                                     "semi;colon", "a|b", "naïve", "東京", "🙂", std::string(300, 'x')};

}  // namespace

Driver::Driver(int frames, std::string report_path) : frames_(frames), report_(std::move(report_path)), rng_(2026) {}

void Driver::random_change(AppState& st, GLFWwindow* win, double now) {
    Config& c = st.config;
    const auto pick = [&](int n) { return static_cast<int>(rng_.next_u64() % static_cast<std::uint64_t>(n)); };
    if (over_budget_at_ >= 0) return;  // the over-budget configuration is not answered yet
    if (restore_) {  // after a refused value the teacher types a good one again
        c = *restore_;
        restore_.reset();
    }
    if (pick(8) == 0) {
        bad_value(st);
        return;
    }
    switch (pick(19)) {
        case 0: {
            const auto divs = divisors(c.d_out);
            c.heads = divs[pick(static_cast<int>(divs.size()))];
            fit_kv_heads(c);
            break;
        }
        case 1: {
            const std::string why = set_d_out(c, 1 + pick(64));
            if (!why.empty()) st.notice = why;
            break;
        }
        case 2: c.d_in = 1 + pick(64), c.embeddings.clear(); break;
        case 3: {
            std::string text;
            const int n = pick(17);  // 0 words: the refused case
            const bool hostile = pick(4) == 0;
            for (int i = 0; i < n; ++i)
                text += std::string(i ? " " : "") + (hostile && pick(2) ? kHostileWords[pick(11)] : std::string(kWords[pick(16)]));
            set_sentence(c, static_cast<std::size_t>(pick(static_cast<int>(c.batch))), text);
            break;
        }
        case 4: c.mode = static_cast<Mode>(pick(3)); break;
        case 5: c.causal = !c.causal; break;
        case 6: c.dropout = pick(2) ? 0.0 : 0.1 * (1 + pick(5)); break;
        case 7: c.scale_first = !c.scale_first; break;
        case 8: c.qkv_bias = !c.qkv_bias; break;
        case 9: c.out_proj = !c.out_proj; break;
        case 10: c.seed = static_cast<std::uint64_t>(pick(1000)); break;
        case 11: c.backend = c.backend == BackendKind::Gl ? BackendKind::Cpu : BackendKind::Gl; break;
        case 12: {
            Config p = config_from_preset(pick(2) ? "cat-sleeps" : "journey");
            p.backend = c.backend;
            c = p;
            break;
        }
        // Issue 13's controls: KV heads, a sentence added or removed, the context, decoding.
        case 13: {
            const auto divs = divisors(c.heads);
            if (!divs.empty()) c.kv_heads = divs[pick(static_cast<int>(divs.size()))];
            break;
        }
        case 14:
            if (c.batch < 3 && pick(2)) set_sentence(c, static_cast<std::size_t>(c.batch), kWords[pick(16)]);
            else remove_sentence(c, static_cast<std::size_t>(c.batch - 1));
            break;
        case 15:
            if (c.cross()) c.context.clear();
            else c.context = {{kWords[pick(16)], kWords[pick(16)]}}, c.causal = false;
            break;
        case 16: c.decode_from = c.decoding() ? 0 : 1 + pick(static_cast<int>(std::max<std::int64_t>(c.num_tokens(), 1))); break;
        case 17: {  // gpt2-xl at T = 8192 in split mode: over the memory budget, shapes only, then back
            if (frame_ + 100 >= frames_ * 9 / 10) return;  // not into the large trace's phase
            Config p = config_from_preset("gpt2-xl");
            p.tokens = synthetic_tokens(8192);
            p.mode = Mode::Split;
            p.backend = c.backend;
            restore_ = c;
            c = p;
            over_budget_at_ = now;
            break;
        }
        default: {
            // Keys through GLFW's callback, as a keyboard would send them: down for this frame,
            // up before the next (sent together, no frame would see the key down).
            if (held_key_ >= 0) return;
            const int keys[] = {GLFW_KEY_RIGHT, GLFW_KEY_LEFT, GLFW_KEY_HOME, GLFW_KEY_END, GLFW_KEY_SPACE};
            held_key_ = keys[pick(5)];
            ImGui_ImplGlfw_KeyCallback(win, held_key_, glfwGetKeyScancode(held_key_), GLFW_PRESS, 0);
            ++keys_;
            return;
        }
    }
    ++changes_;
    changed_this_frame_ = true;
    recompute(st);
}

// What a Ctrl+click into a slider, a cleared text box or a stray key can put into the
// controls: each must be refused inline while the last good trace stays on screen.
void Driver::bad_value(AppState& st) {
    Config& c = st.config;
    restore_ = c;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    switch (rng_.next_u64() % 14) {
        case 0: c.d_in = 0; break;
        case 1: c.d_in = -7; break;
        case 2: c.d_in = std::numeric_limits<int>::max(); break;
        case 3: set_d_out(c, 0); break;
        case 4: set_d_out(c, -12); break;
        case 5: set_d_out(c, 1000003); break;  // a prime over the size limit
        case 6: c.heads = c.d_out + 1; break;   // does not divide D_out
        case 7: c.dropout = nan; break;
        case 8: c.dropout = 1.5; break;
        case 9: c.dropout = -0.25; break;
        case 10: set_sentence(c, 0, ""); break;        // the text box emptied
        case 11:  // causal flash with one-token blocks at T = 4096, self-attention: 8.4 million tiles, over the trace's 65,536
            c.set_sentences({synthetic_tokens(4096)});
            c.context.clear();
            c.d_context = 0;
            c.decode_from = 0;
            c.causal = true;
            c.mode = Mode::Flash;
            c.block = 1;
            break;
        case 12: c.kv_heads = c.heads + 1; break;     // does not divide the query heads
        default: set_sentence(c, 0, " \t  "); break;  // whitespace only
    }
    c.embeddings.clear();
    bad_trace_ = st.trace.get();
    expect_refusal_ = true;
    ++bad_values_;
    ++changes_;
    changed_this_frame_ = true;
    recompute(st);
}

void Driver::stage_gesture(AppState& st, GLFWwindow* win) {
    int w = 0, h = 0;
    glfwGetWindowSize(win, &w, &h);
    // The backend reads the button from the system each frame; a press event counts as held
    // for the frame it arrives in, so a held button is sent again each frame.
    auto press = [&] { ImGui_ImplGlfw_MouseButtonCallback(win, GLFW_MOUSE_BUTTON_LEFT, GLFW_PRESS, 0); };
    auto release = [&] { ImGui_ImplGlfw_MouseButtonCallback(win, GLFW_MOUSE_BUTTON_LEFT, GLFW_RELEASE, 0); };
    const int kind = static_cast<int>(gestures_ % 4);  // 1, 3: wheel; 2: drag; 0: double-click
    if (gesture_frame_ == 0) {
        // Over the stage: the middle column, upper half, in both layouts.
        gesture_x_ = w * 0.45, gesture_y_ = h * 0.35;
        ImGui_ImplGlfw_CursorEnterCallback(win, 1);  // the pointer is over the window
        glfwSetCursorPos(win, gesture_x_, gesture_y_);
        if (kind % 2) {  // a wheel notch: in, or out at the largest zoom
            ImGui_ImplGlfw_ScrollCallback(win, 0, st.stage_view.zoom < 7.9f ? 1.0 : -1.0);
            gesture_frame_ = -1;
            return;
        }
        press();
    } else if (kind == 0) {  // the second click of a double-click, two frames on
        if (gesture_frame_ == 2) press();
        if (gesture_frame_ >= 3) {
            release();
            gesture_frame_ = -1;
            return;
        }
    } else if (gesture_frame_ < 6) {  // drag up and left: later tokens and columns come into view
        press();
        gesture_x_ -= 30, gesture_y_ -= 20;
        glfwSetCursorPos(win, gesture_x_, gesture_y_);
    } else {
        release();
        gesture_frame_ = -1;
        return;
    }
    ++gesture_frame_;
}

bool Driver::before_frame(AppState& st, GLFWwindow* win, double now) {
    changed_this_frame_ = false;
    if (held_key_ >= 0) {  // the key pressed for the frame before is let go
        ImGui_ImplGlfw_KeyCallback(win, held_key_, glfwGetKeyScancode(held_key_), GLFW_RELEASE, 0);
        held_key_ = -1;
    }
    if (gesture_frame_ >= 0) stage_gesture(st, win);
    const AppState::StageView& v = st.stage_view;
    if (v.zoom != last_view_.zoom || v.token0 != last_view_.token0 || v.col0 != last_view_.col0 || v.head0 != last_view_.head0)
        ++view_changes_;
    last_view_ = v;
    // Last tenth of the run: a large trace on the worker, frames measured while it computes.
    if (!big_started_ && frame_ >= frames_ * 9 / 10) {
        big_started_ = big_phase_ = true;
        big_started_at_ = now;
        Config big = config_from_preset("gpt2-small");
        big.tokens = synthetic_tokens(128);
        big.backend = st.config.backend;
        st.config = big;
        recompute(st);
    }
    if (big_phase_ && !st.computer->busy()) {  // its trace was taken onto the screen this frame
        big_phase_ = false;
        arrival_frame_ = true;
        big_compute_s_ = now - big_started_at_;
    }
    if (over_budget_at_ >= 0 && !st.computer->busy() && st.shapes_only && st.config.num_tokens() == 8192) {
        over_budget_s_.push_back(now - over_budget_at_);
        over_budget_at_ = -1;
    }
    if (!big_started_) {
        if (frame_ % 10 == 5) random_change(st, win, now);
        if (frame_ % 40 == 22 && gesture_frame_ < 0) {  // between changes: a wheel notch or a drag
            gesture_frame_ = 0;
            ++gestures_;
        }
        // A resize, and back 200 frames later: the framebuffer's memory follows the window's
        // size, so resident memory is compared at the starting size.
        if (frame_ == 0) glfwGetWindowSize(win, &start_w_, &start_h_);
        if (frame_ % 500 == 250) {
            const int w = 1024 + static_cast<int>(rng_.next_u64() % 577), h = 640 + static_cast<int>(rng_.next_u64() % 261);
            glfwSetWindowSize(win, w, h);
            ++resizes_;
        }
        if (frame_ % 500 == 450) {
            glfwSetWindowSize(win, start_w_, start_h_);
            ++resizes_;
        }
    }
    if (frame_ == std::min(1000, frames_ / 5)) rss_warm_kb_ = settled_resident_kb();
    // The last frame before the large trace moves in.
    if (frame_ + 1 == frames_ * 9 / 10) rss_end_kb_ = settled_resident_kb();
    return frame_ < frames_ || big_phase_;
}

void Driver::after_frame(AppState& st, const FrameInfo& f) {
    glFinish();  // the frame is on screen: count its whole cost
    const double frame_ms = (now_seconds() - f.started) * 1e3;
    const bool gl_error = glGetError() != GL_NO_ERROR;
    ++frame_;
    all_ms_.push_back(frame_ms);
    if (changed_this_frame_ && !st.computer->busy()) {
        change_ms_.push_back(frame_ms);
        change_compute_ms_.push_back(st.last_compute_ms);  // the trace's part of that frame
    }
    if (big_phase_) big_ms_.push_back(frame_ms);
    if (arrival_frame_) arrival_ms_ = frame_ms, arrival_frame_ = false;
    if (!st.error.empty() && changed_this_frame_) ++refused_;
    if (expect_refusal_) {  // refused in this very frame, and the trace on screen kept
        if (st.error.empty() || st.trace.get() != bad_trace_) ++mishandled_;
        expect_refusal_ = false;
    }
    gl_errors_ += gl_error;
    const long rss = resident_kb();
    rss_peak_kb_ = std::max(rss_peak_kb_, rss);
    if (frame_ % 250 == 0) rss_samples_.push_back(settled_resident_kb());
}

int Driver::finish() {
    nlohmann::json r;
    r["format"] = "headsplit-drive";
    r["frames"] = frame_;
    r["control_changes"] = changes_;
    r["refused_changes"] = refused_;
    r["bad_values"] = bad_values_;
    r["bad_values_mishandled"] = mishandled_;
    r["key_presses"] = keys_;
    r["stage_gestures"] = gestures_;            // wheel notches and drags over the stage
    r["stage_view_changes"] = view_changes_;    // frames whose zoom or window start changed
    r["resizes"] = resizes_;
    r["gl_errors"] = gl_errors_;
    r["over_budget"] = {{"answered_s", over_budget_s_}, {"waiting", over_budget_at_ >= 0}};
    r["all_frames"] = summary(all_ms_);
    r["frames_with_a_control_change"] = summary(change_ms_);
    r["trace_compute_of_those_changes"] = summary(change_compute_ms_);
    r["while_gpt2_small_T128_computes"] = summary(big_ms_);
    r["while_gpt2_small_T128_computes"]["each_ms"] = big_ms_;
    r["gpt2_small_T128_compute_s"] = big_compute_s_;
    r["gpt2_small_T128_first_frame_ms"] = arrival_ms_;  // the frame that first draws it
    r["rss_kb"] = {{"after_warmup", rss_warm_kb_},
                   {"end", rss_end_kb_},
                   {"peak", rss_peak_kb_},
                   {"every_250_frames", rss_samples_},
                   {"growth_percent", rss_warm_kb_ ? 100.0 * (rss_end_kb_ - rss_warm_kb_) / rss_warm_kb_ : 0.0}};
    try {
        write_file_atomically(report_, r.dump(2) + "\n");
    } catch (const std::exception& e) {
        std::cerr << "headsplit: " << terminal_text(e.what()) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace headsplit::gui
