#include "gui/platform/png.hpp"

#include <cstdio>
#include <vector>

#include "gui/platform/gl.hpp"
#include <stb_image_write.h>

namespace headsplit::gui {

bool save_png(const std::string& path, int w, int h, std::string* why, unsigned read_buffer) {
    std::vector<unsigned char> pixels(static_cast<std::size_t>(w) * h * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(read_buffer);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque
    stbi_flip_vertically_on_write(1);
    const std::string tmp = path + ".tmp.png";
    if (!stbi_write_png(tmp.c_str(), w, h, 4, pixels.data(), w * 4)) {
        *why = "cannot write " + path + "; choose a path in a folder you can write to";
        std::remove(tmp.c_str());
        return false;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        *why = "cannot write " + path;
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace headsplit::gui
