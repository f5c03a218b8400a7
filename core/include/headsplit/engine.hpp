#pragma once
// One function from (config, inputs, weights, backend) to a Trace.
#include <cstdint>

#include "headsplit/backend.hpp"
#include "headsplit/config.hpp"
#include "headsplit/inputs.hpp"
#include "headsplit/trace.hpp"

namespace headsplit {

// Runs multi-head self-attention as config.mode says (loop | split | fused) on `backend`
// and records every step. Validates the config and the memory budget first (ConfigError).
Trace run(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend);

// The steps of `config` with every tensor's shape, strides and storage but no values, at
// no cost in memory or time: what the visualizer shows for configurations too large to run
// (gpt3). Validates the config but not the memory budget.
Trace plan(const Config& config);

// What a run would hold in memory, worked out from the shapes alone.
struct MemoryEstimate {
    double weights_bytes = 0;  // host copy + backend copy
    double buffers_bytes = 0;  // backend working buffers (Q, K, V, scores, ...)
    double trace_bytes = 0;    // recorded tensor values
    double total() const { return weights_bytes + buffers_bytes + trace_bytes; }
};
MemoryEstimate estimate_memory(const Config& config);

// Throws ConfigError with the estimate when it exceeds config.memory_budget.
void check_memory_budget(const Config& config);

}  // namespace headsplit
