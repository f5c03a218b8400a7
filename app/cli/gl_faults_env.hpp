#pragma once
// The GL faults the command line's and the window's tests name in the environment, for the
// binary as it ships: HEADSPLIT_GL_BREAK_SHADER=<file.comp>, HEADSPLIT_GL_FAIL_DISPATCH=<kernel>,
// HEADSPLIT_GL_VEC4_PROBE=1. Read here, once, by the executable's entry, and handed to the
// backends (set_process_gl_faults); the engine and the backends read no environment.
#include "headsplit/backends/gl_backend.hpp"

namespace headsplit::app {

GlFaults gl_faults_from_env();

}  // namespace headsplit::app
