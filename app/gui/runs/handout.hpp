#pragma once
// The handout: what the class saw, to print or to take home. DIR/step-00.png, one picture
// per step (that step's stage and heatmaps, light theme, a print size), and DIR/index.html,
// a page that needs no network (its CSS inline, the pictures beside it): the configuration;
// per step its number, op, shape change, strides, whether data moved, PyTorch line,
// explanation and picture; at the end the matmul counts of loop, split and fused.
#include <cstdint>
#include <memory>
#include <string>

#include "headsplit/engine/trace.hpp"

namespace headsplit::gui {

// The most pictures a handout draws unless asked for more (--max-pictures): one a step, and a
// flash trace of many tiles has thousands of steps (minutes of drawing, with no word).
inline constexpr std::int64_t kHandoutPictures = 300;

// Refuses, in one line, a DIR that cannot be made or written, before any work is done.
void check_handout_dir(const std::string& dir);

// The page alone; its pictures are named step-00.png, step-01.png, ...
std::string handout_html(const Trace& trace);

// Writes the handout of `trace` (a recorded run, with values) into `dir`, made when missing.
// Renders offscreen in the GL context current on this thread (the window's, or a headless
// EGL one), into a framebuffer and an ImGui context of its own: the window's state is left
// as it was. Every file goes through a temporary name and a rename. A handout already in the
// folder is replaced whole: its pictures past this one's last step are removed, and
// `replaced` (when given) says so in one sentence ("" for a new folder). Returns the number
// of pictures; throws std::runtime_error with one line.
int write_handout(const std::shared_ptr<const Trace>& trace, const std::string& dir, std::string* replaced = nullptr);

}  // namespace headsplit::gui
