#pragma once
// PNG files of what GL drew: the window's screenshots and the handout's pictures.
#include <string>

namespace headsplit::gui {

// Reads `read_buffer` (GL_BACK: 0x0405) of the current GL context's bound framebuffer and
// writes it as PNG through a temporary file and a rename; false and the reason otherwise.
bool save_png(const std::string& path, int w, int h, std::string* why, unsigned read_buffer = 0x0405);

}  // namespace headsplit::gui
