// The GL backend where there is none: the page. WebGL2 has no compute shaders, so
// make_gl_backend refuses in one line and the backend policy runs the CPU backend instead,
// with that line as its notice (the controls show it where the backend is chosen).
#include "headsplit/backends/gl_backend.hpp"

namespace headsplit {

std::unique_ptr<Backend> make_gl_backend(const GlOptions&) {
    throw GlError(GlError::Kind::NoContext,
                  "the GL backend needs OpenGL compute shaders, which a browser's WebGL2 lacks; the page runs the CPU "
                  "backend");
}

std::string gl_renderer() { return ""; }
MatmulKernel resolved_kernel(MatmulKernel kernel) { return kernel == MatmulKernel::Auto ? MatmulKernel::Blocked : kernel; }

}  // namespace headsplit
