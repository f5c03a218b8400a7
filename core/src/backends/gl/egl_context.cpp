#include "headsplit/backends/egl_context.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <string>

#include <epoxy/egl.h>

#include "headsplit/backends/gl_backend.hpp"

namespace headsplit::gl {

namespace {

[[noreturn]] void fail(const std::string& why) {
    throw GlError(GlError::Kind::NoContext, "no headless OpenGL 4.3 context: " + why + "; use --backend cpu");
}

std::string egl_error() {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%04X", static_cast<unsigned>(eglGetError()));
    return hex;
}

}  // namespace

std::unique_ptr<EglContext> EglContext::create() {
    // libepoxy aborts the process when libEGL is missing; find out first.
    if (!dlopen("libEGL.so.1", RTLD_LAZY | RTLD_GLOBAL)) fail("libEGL.so.1 is not installed (Debian: libegl1)");
    if (!epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_MESA_platform_surfaceless"))
        fail("EGL has no surfaceless platform (EGL_MESA_platform_surfaceless; Debian: libegl-mesa0)");

    std::unique_ptr<EglContext> ctx(new EglContext());
    EGLDisplay display = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    EGLint major = 0, minor = 0;
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, &major, &minor))
        fail("eglInitialize failed (EGL error " + egl_error() + ")");
    ctx->display_ = display;
    if (!eglBindAPI(EGL_OPENGL_API)) fail("EGL cannot bind the OpenGL API");

    // Surfaceless Mesa offers no configs for desktop GL; KHR_no_config_context lets us go without.
    EGLConfig config = EGL_NO_CONFIG_KHR;
    const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLint count = 0;
    if (!eglChooseConfig(display, config_attribs, &config, 1, &count) || count == 0) config = EGL_NO_CONFIG_KHR;
    const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 3,
                                      EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                      EGL_NONE};
    EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, context_attribs);
    if (context == EGL_NO_CONTEXT) fail("eglCreateContext for GL 4.3 core failed (EGL error " + egl_error() + ")");
    ctx->context_ = context;
    if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context))
        fail("eglMakeCurrent without a surface failed (EGL error " + egl_error() + ")");
    return ctx;
}

EglContext::~EglContext() {
    if (display_) {
        if (eglGetCurrentContext() == context_) eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (context_) eglDestroyContext(display_, context_);
        // The display stays initialised: other contexts of this process may share it.
    }
}

void EglContext::make_current() const {
    if (eglGetCurrentContext() != context_) eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_);
}

}  // namespace headsplit::gl
