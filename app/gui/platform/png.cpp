#include "gui/platform/png.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "gui/platform/gl.hpp"
#include <stb_image_write.h>

#include "headsplit/io/writing.hpp"

namespace headsplit::gui {

bool save_png(const std::string& path, int w, int h, std::string* why, unsigned read_buffer) {
    std::vector<unsigned char> pixels(static_cast<std::size_t>(w) * h * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(read_buffer);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque
    stbi_flip_vertically_on_write(1);
    // Encoded in memory, then written whole through a temporary file: a full disk or an
    // unwritable folder leaves any picture already at `path` as it was.
    std::string png;
    const auto append = [](void* to, void* data, int size) { static_cast<std::string*>(to)->append(static_cast<const char*>(data), static_cast<std::size_t>(size)); };
    if (!stbi_write_png_to_func(append, &png, w, h, 4, pixels.data(), w * 4)) {
        *why = "cannot encode the " + std::to_string(w) + "x" + std::to_string(h) + " frame as PNG";
        return false;
    }
    try {
        write_file_atomically(path, png);
    } catch (const std::exception& e) {
        *why = e.what();
        return false;
    }
    return true;
}

}  // namespace headsplit::gui
