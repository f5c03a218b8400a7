#include "cli/gl_faults_env.hpp"

#include <cstdlib>

namespace headsplit::app {

GlFaults gl_faults_from_env() {
    GlFaults f;
    if (const char* broken = std::getenv("HEADSPLIT_GL_BREAK_SHADER")) f.break_shader = broken;
    if (const char* fail = std::getenv("HEADSPLIT_GL_FAIL_DISPATCH")) f.fail_dispatch = fail;
    const char* probe = std::getenv("HEADSPLIT_GL_VEC4_PROBE");
    f.vec4_probe = probe && *probe == '1';
    return f;
}

}  // namespace headsplit::app
