#pragma once
// The visualizer's window, the app's composition root: GLFW + OpenGL 4.3 core + Dear ImGui,
// the panels laid out for a projector, the frame loop; the unattended runs (`--screenshot`,
// `--drive`, `--layout-audit`) drive the same loop (gui/runs/unattended.hpp).
#include "gui/model/gui_options.hpp"

namespace headsplit::gui {

// Exit code: 0, or 1 when no window can be opened or an unattended run failed (the reason
// on stderr, one line).
int run_gui(const GuiOptions& options);

}  // namespace headsplit::gui
