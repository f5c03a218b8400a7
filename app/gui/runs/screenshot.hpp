#pragma once
// `--screenshot FILE --step N`: real frames of the window until the trace is in and the
// layout has settled (its panels stand where they stood the frame before), then that frame saved as PNG (and, with --layout-report, its layout
// report as JSON) and the process exits. Gives up after 300 s without a trace. With --keys,
// the keys are pressed at the step first, as the window takes a keyboard's, and the frame
// saved is the one after the last of them took effect.
#include <string>
#include <vector>

#include "gui/model/gui_options.hpp"

#include "gui/runs/audit.hpp"
#include "gui/runs/unattended.hpp"

namespace headsplit::gui {

class ScreenshotRun : public UnattendedRun {
public:
    ScreenshotRun(std::string path, int step, std::string layout_report, std::vector<KeyPress> keys = {});

    // Once the trace is in: goes to the step, as a teacher would (with --quiz, it is asked);
    // then presses the keys, one a frame, each once what the one before asked is on screen.
    bool before_frame(AppState& st, GLFWwindow* win, double now) override;
    // The first frame, from the third with the trace in, whose panels stand where they stood
    // the frame before is saved (or the kMaxSettleFrames-th, with a warning); false then, and
    // after 300 s without a trace.
    bool frame_drawn(AppState& st, const FrameInfo& f) override;
    int finish() override { return exit_code_; }
    // A screenshot carries no hover state from wherever the pointer rests.
    bool pointer_away() const override { return true; }

private:
    void save(const FrameInfo& f);
    // The next of the keys' events, where the one before has taken effect; true while any
    // key is still to be pressed or let go.
    bool press_keys(AppState& st, GLFWwindow* win);

    std::string path_, layout_report_;
    int step_;
    double started_;
    bool placed_step_ = false;
    std::vector<KeyPress> keys_;
    std::size_t next_key_ = 0;
    int phase_ = 0;        // of the key being pressed: 0 not yet, 1 down, 2 (typing) the text, 3 Enter down
    int waited_ = 0;       // frames waited for a text box to take the typing
    int frames_settled_ = 0;
    LayoutSettle settle_;
    int exit_code_ = 0;
};

}  // namespace headsplit::gui
