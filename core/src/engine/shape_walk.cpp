#include "shape_walk.hpp"

#include "forward.hpp"
#include "recorder.hpp"

namespace headsplit::detail {

// The steps of `c` walked with no numbers; `backend` sees every buffer a run would create.
Trace walk(const Config& config, ShapeOnlyBackend& backend) {
    Trace trace;
    trace.config = config;
    Inputs inputs;
    Weights weights;  // empty: the walk never reads them
    Resources resources;
    Recorder recorder(backend, trace.steps, false);
    run_forward(config, inputs, weights, backend, resources, recorder, Work::ShapesOnly);
    for (Step& s : trace.steps) s.ms = 0;
    return trace;
}

}  // namespace headsplit::detail
