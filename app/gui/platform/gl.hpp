#pragma once
// The GL the window draws with: libepoxy's loader on the desktop (OpenGL 3.3 to 4.5 core),
// the browser's WebGL2 (OpenGL ES 3.0) in the page. ImGui draws with either; only the
// desktop's 4.3 and newer run the GL backend's compute shaders.
#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#else
#include <epoxy/gl.h>
#endif

namespace headsplit::gui {

// Whether the window's context runs compute shaders (OpenGL 4.3): never in the page.
inline bool window_has_compute() {
#ifdef __EMSCRIPTEN__
    return false;
#else
    return epoxy_gl_version() >= 43;
#endif
}

// ImGui's shaders' #version line for this GL.
#ifdef __EMSCRIPTEN__
inline constexpr const char* kGlslVersion = "#version 300 es";
inline constexpr bool kInPage = true;
#else
inline constexpr const char* kGlslVersion = "#version 330";
inline constexpr bool kInPage = false;
#endif

}  // namespace headsplit::gui
