#pragma once
// The runs that need no one at the keyboard: `--screenshot` (screenshot.hpp), the driver
// (`--drive`, driver.hpp) and the layout audit sweep (`--layout-audit`, audit_sweep.hpp).
// Each is one UnattendedRun that the window's loop calls at fixed points of every frame;
// an interactive session has none.
#include <memory>

#include "gui/model/state.hpp"

struct GLFWwindow;

namespace headsplit::gui {

struct GuiOptions;

// The loop's clock, in seconds (steady: frame times and timeouts, not dates).
double now_seconds();

// A frame the loop has drawn.
struct FrameInfo {
    int fb_w = 0, fb_h = 0;  // the window's framebuffer, in pixels
    double started = 0;      // now_seconds() when the frame began, before its events were polled
    double now = 0;          // the frame's time, as the panels saw it
};

class UnattendedRun {
public:
    virtual ~UnattendedRun() = default;
    // Before the frame's ImGui work: sets up what this frame shows (a step, a control, the
    // window's size). false: the run is over, and this frame is not drawn.
    virtual bool before_frame(AppState& st, GLFWwindow* win, double now) = 0;
    // The frame is rendered into the back buffer, not yet shown: what reads its pixels.
    // false: the run is over, and this frame is not shown.
    virtual bool frame_drawn(AppState&, const FrameInfo&) { return true; }
    // The frame is on screen.
    virtual void after_frame(AppState&, const FrameInfo&) {}
    // The pointer is kept off the window: the frames show no hover (a saved picture).
    virtual bool pointer_away() const { return false; }
    // Whether the frames are rasterized: a run that reads only where the panels placed their
    // parts (the layout audit) leaves the pixels undrawn.
    virtual bool draws_pixels() const { return true; }
    // After the last frame: writes what the run reports. The process's exit code: 0, or 1
    // with the reason on stderr (one line).
    virtual int finish() = 0;
};

// The run the options ask for, made once at start: --layout-audit, else --drive, else
// --screenshot; none (nullptr) for an interactive session.
std::unique_ptr<UnattendedRun> make_unattended_run(const GuiOptions& o);

}  // namespace headsplit::gui
