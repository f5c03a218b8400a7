#pragma once
// The backward pass: from the gradient dout arriving at the output (inputs.dout) back through
// every step of the forward, in reverse, to the weights, x and the context. Each op a call on
// the backend, reported to the observer as a step, as the forward's are.
#include "buffers.hpp"
#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"
#include "observer.hpp"
#include "tape.hpp"

namespace headsplit::detail {

// Runs the backward pass of `c` (loop, split or fused; validate() refuses the rest) over what
// the forward kept in `tape`, its buffers handed out after the forward's from `resources`.
void run_backward(const Config& c, const Inputs& in, const Tape& tape, Backend& backend, Resources& resources,
                  StepObserver& observer, Work work);

}  // namespace headsplit::detail
