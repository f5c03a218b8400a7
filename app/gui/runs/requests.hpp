#pragma once
// What the user asked for from the panels during a frame (F12 / "save screenshot", "save
// take-home scripts", "save handout"), done once the frame is rendered; each says how it
// went in st.last_screenshot, the line Controls shows.
#include <string>

#include "gui/model/state.hpp"

namespace headsplit::gui {

// Serves the requests flagged in `st` and clears the flags. The screenshot reads the back
// buffer of the window's framebuffer, fw x fh, before it is swapped.
void serve_requests(AppState& st, int fw, int fh);

// "save take-home scripts": the trace on screen as lab-<time>-torch.py and lab-<time>-numpy.py
// beside the screenshots; the line Controls shows.
std::string save_scripts(const AppState& st);

}  // namespace headsplit::gui
