#pragma once
// The forward pass: multi-head self-attention op by op on a backend, each op reported to an
// observer as a step.
#include "buffers.hpp"
#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"
#include "observer.hpp"

namespace headsplit::detail {

// Runs one forward pass of `c` on `backend` (only the Q, K, V projections with
// `projections_only`), then with c.backward the backward pass (backward.hpp), reporting each
// op to `observer` as a step.
void run_forward(const Config& c, const Inputs& in, const Weights& w, Backend& backend, Resources& resources,
                 StepObserver& observer, Work work, bool projections_only = false);

}  // namespace headsplit::detail
