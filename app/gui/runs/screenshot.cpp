#include "gui/runs/screenshot.hpp"

#include <iostream>

#include "gui/platform/gl.hpp"
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <imgui.h>

#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"
#include "gui/platform/png.hpp"
#include "gui/runs/layout_record.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

ScreenshotRun::ScreenshotRun(std::string path, int step, std::string layout_report, std::vector<KeyPress> keys)
    : path_(std::move(path)), layout_report_(std::move(layout_report)), step_(step), started_(now_seconds()),
      keys_(std::move(keys)) {
    layout_audit().enabled = true;  // its panels tell when the layout has settled
}

bool ScreenshotRun::before_frame(AppState& st, GLFWwindow* win, double now) {
    if (st.trace && !placed_step_) {
        go_to_step(st, step_, now);  // as a teacher would: with --quiz, the step is asked
        st.anim_start = -1e9;        // settled: no animation in the saved frame
        placed_step_ = true;
        return true;
    }
    if (placed_step_ && !press_keys(st, win) && !keys_.empty()) st.anim_start = -1e9;
    return true;
}

bool ScreenshotRun::press_keys(AppState& st, GLFWwindow* win) {
    if (next_key_ >= keys_.size()) return false;
    const KeyPress& k = keys_[next_key_];
    const auto send = [&](int key, int action) { ImGui_ImplGlfw_KeyCallback(win, key, glfwGetKeyScancode(key), action, 0); };
    ImGuiIO& io = ImGui::GetIO();
    if (phase_ == 0) {
        // What the key before asked is on screen: its trace in, the frame drawn with it.
        if (!picture_ready(st) || st.live.waiting) return true;
        if (!k.typed.empty() && !io.WantTextInput) {  // the box T opened takes the typing a frame later
            if (++waited_ > kMaxSettleFrames) {
                std::cerr << "headsplit: --keys: no text box took \"type:" << k.typed << "\" (press T first)\n";
                exit_code_ = 1;
                next_key_ = keys_.size();
                return false;
            }
            return true;
        }
        waited_ = 0;
        if (k.typed.empty() && k.shift) send(GLFW_KEY_LEFT_SHIFT, GLFW_PRESS);
        if (!k.typed.empty()) send(GLFW_KEY_LEFT_CONTROL, GLFW_PRESS);  // Ctrl+A: the typing replaces what the box holds
        send(k.typed.empty() ? k.key : GLFW_KEY_A, GLFW_PRESS);
        phase_ = 1;
        return true;
    }
    if (phase_ == 1) {
        send(k.typed.empty() ? k.key : GLFW_KEY_A, GLFW_RELEASE);
        send(k.typed.empty() ? GLFW_KEY_LEFT_SHIFT : GLFW_KEY_LEFT_CONTROL, GLFW_RELEASE);
        if (!k.typed.empty()) {
            for (unsigned char ch : k.typed) io.AddInputCharacter(ch);
            phase_ = 2;
            return true;
        }
    } else if (phase_ == 2) {
        send(GLFW_KEY_ENTER, GLFW_PRESS);
        phase_ = 3;
        return true;
    } else {
        send(GLFW_KEY_ENTER, GLFW_RELEASE);
    }
    phase_ = 0;
    ++next_key_;
    return true;
}

bool ScreenshotRun::frame_drawn(AppState& st, const FrameInfo& f) {
    // Real frames until the trace is in and the panels stand still (the tab switch and the
    // layout take a frame or two, some boundaries a few more), then save one.
    const bool keys_done = next_key_ >= keys_.size() && !st.live.waiting;
    frames_settled_ = picture_ready(st) && keys_done ? frames_settled_ + 1 : 0;
    const Take take = take_frame(frames_settled_, settle_.still(layout_audit().report()));
    if (take != Take::Wait) {
        if (take == Take::StillMoving)
            std::cerr << "headsplit: warning: the layout was still moving after " << kMaxSettleFrames
                      << " frames (" << settle_.moved() << "); saved the last frame\n";
        save(f);
        return false;
    }
    if (f.now - started_ > 300) {
        std::cerr << "headsplit: --screenshot gave up after 300 s waiting for the trace\n";
        exit_code_ = 1;
        return false;
    }
    return true;
}

// The frame in the back buffer, then the layout report of the same frame.
void ScreenshotRun::save(const FrameInfo& f) {
    std::string why;
    if (!save_png(path_, f.fb_w, f.fb_h, &why)) {
        std::cerr << "headsplit: " << terminal_text(why) << "\n";
        exit_code_ = 1;
        return;
    }
    if (layout_report_.empty()) return;
    try {
        write_file_atomically(layout_report_, layout_report_json(layout_audit().report()));
    } catch (const std::exception& e) {
        std::cerr << "headsplit: " << terminal_text(e.what()) << "\n";
        exit_code_ = 1;
    }
}

}  // namespace headsplit::gui
