#pragma once
// Drives the real app for a number of frames, the way a restless class would: random
// control changes (through the same state functions the Controls panel calls), key presses
// (through GLFW's key callback, the app's own event path), step jumps and window resizes.
// Measures every frame and writes a JSON report: frame times, the frames in which a control
// changed, a phase in which a large trace computes on the worker, resident memory, GL errors.
#include <optional>
#include <string>
#include <vector>

#include "headsplit/engine/inputs.hpp"
#include "gui/model/state.hpp"
#include "gui/runs/unattended.hpp"

namespace headsplit::gui {

class Driver : public UnattendedRun {
public:
    Driver(int frames, std::string report_path);

    // Before a frame's ImGui work: maybe inject a change. Returns false when done.
    bool before_frame(AppState& st, GLFWwindow* win, double now) override;
    // After the frame was shown: waits for GL to finish it and counts its wall time.
    void after_frame(AppState& st, const FrameInfo& f) override;
    // Writes the report; 1 (the reason on stderr) when it cannot.
    int finish() override;

private:
    void random_change(AppState& st, GLFWwindow* win, double now);
    void bad_value(AppState& st);
    // A wheel notch or a drag over the stage, through GLFW's callbacks and cursor.
    void stage_gesture(AppState& st, GLFWwindow* win);

    int frames_, frame_ = 0;
    std::string report_;
    Rng rng_;
    bool changed_this_frame_ = false;
    bool big_phase_ = false, big_started_ = false;
    double big_started_at_ = 0, big_compute_s_ = 0, arrival_ms_ = 0;
    bool arrival_frame_ = false;
    std::vector<double> all_ms_, change_ms_, change_compute_ms_, big_ms_;
    std::int64_t changes_ = 0, keys_ = 0, resizes_ = 0, gl_errors_ = 0, refused_ = 0;
    int held_key_ = -1;  // the key pressed for the last frame, let go before the next
    std::int64_t bad_values_ = 0, mishandled_ = 0;
    std::optional<Config> restore_;      // the good config to go back to after a bad value
    // An over-budget configuration (gpt2-xl, T = 8192): when it went in (-1: none waiting for
    // its shapes-only answer), and how long each answer took.
    double over_budget_at_ = -1;
    std::vector<double> over_budget_s_;
    const Trace* bad_trace_ = nullptr;  // the trace on screen when the bad value went in
    bool expect_refusal_ = false;
    long rss_warm_kb_ = 0, rss_end_kb_ = 0, rss_peak_kb_ = 0;
    std::vector<long> rss_samples_;
    int start_w_ = 0, start_h_ = 0;
    int gesture_frame_ = -1;  // the frame of a drag under way, -1 when none
    double gesture_x_ = 0, gesture_y_ = 0;
    std::int64_t gestures_ = 0, view_changes_ = 0;
    AppState::StageView last_view_;
};

}  // namespace headsplit::gui
