#pragma once
// Picks the compute backend a Config asks for, and falls back to the CPU when GL fails.
#include <memory>
#include <ostream>

#include "headsplit/backend.hpp"
#include "headsplit/config.hpp"
#include "headsplit/trace.hpp"

namespace headsplit::app {

// The backend for `kind`. No GL 4.3 context: ConfigError (one line, exit 2). Other GL
// failures: GlError.
std::unique_ptr<Backend> make_backend(BackendKind kind);

// One forward pass of `c` on its backend. When the GL backend cannot compile a kernel or
// fails during a step, writes the reason and "using the CPU backend" to `notices` as one
// line and runs on the CPU instead; the trace's config then says "cpu".
Trace run_on_backend(const Config& c, std::ostream& notices);

}  // namespace headsplit::app
