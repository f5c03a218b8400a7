#include "gui/runs/screenshot.hpp"

#include <iostream>

#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"
#include "gui/platform/png.hpp"
#include "gui/runs/layout_record.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

ScreenshotRun::ScreenshotRun(std::string path, int step, std::string layout_report)
    : path_(std::move(path)), layout_report_(std::move(layout_report)), step_(step), started_(now_seconds()) {
    layout_audit().enabled = true;  // its panels tell when the layout has settled
}

bool ScreenshotRun::before_frame(AppState& st, GLFWwindow*, double now) {
    if (st.trace && !placed_step_) {
        go_to_step(st, step_, now);  // as a teacher would: with --quiz, the step is asked
        st.anim_start = -1e9;        // settled: no animation in the saved frame
        placed_step_ = true;
    }
    return true;
}

bool ScreenshotRun::frame_drawn(AppState& st, const FrameInfo& f) {
    // Real frames until the trace is in and the panels stand still (the tab switch and the
    // layout take a frame or two, some boundaries a few more), then save one.
    frames_settled_ = picture_ready(st) ? frames_settled_ + 1 : 0;
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
