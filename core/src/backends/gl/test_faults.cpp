// The GL faults a test names in the environment (the command line's and the window's tests,
// which run the binary as it ships). The backend itself reads only GlOptions::faults.
#include <cstdlib>

#include "headsplit/backends/gl_backend.hpp"

namespace headsplit {

GlFaults gl_faults_from_env() {
    GlFaults f;
    if (const char* broken = std::getenv("HEADSPLIT_GL_BREAK_SHADER")) f.break_shader = broken;
    if (const char* fail = std::getenv("HEADSPLIT_GL_FAIL_DISPATCH")) f.fail_dispatch = fail;
    const char* probe = std::getenv("HEADSPLIT_GL_VEC4_PROBE");
    f.vec4_probe = probe && *probe == '1';
    return f;
}

}  // namespace headsplit
