#pragma once
// `--screenshot FILE --step N`: real frames of the window until the trace is in and the
// layout has settled (its panels stand where they stood the frame before), then that frame saved as PNG (and, with --layout-report, its layout
// report as JSON) and the process exits. Gives up after 300 s without a trace.
#include <string>

#include "gui/runs/audit.hpp"
#include "gui/runs/unattended.hpp"

namespace headsplit::gui {

class ScreenshotRun : public UnattendedRun {
public:
    ScreenshotRun(std::string path, int step, std::string layout_report);

    // Once the trace is in: goes to the step, as a teacher would (with --quiz, it is asked).
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

    std::string path_, layout_report_;
    int step_;
    double started_;
    bool placed_step_ = false;
    int frames_settled_ = 0;
    LayoutSettle settle_;
    int exit_code_ = 0;
};

}  // namespace headsplit::gui
