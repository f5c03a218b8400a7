#pragma once
// One function from (config, inputs, weights, backend) to a Trace.
#include <cstdint>
#include <memory>

#include "headsplit/backend.hpp"
#include "headsplit/config.hpp"
#include "headsplit/inputs.hpp"
#include "headsplit/trace.hpp"

namespace headsplit {

struct RunOptions {
    // false: steps keep their ops, shapes, counts and times but no values, except the final
    // tensor (the output); no readbacks during the pass. What the bench times.
    bool record_values = true;
    // Stop after the Q, K, V projections (the bench's "projections" stage).
    bool projections_only = false;
};

// A configuration ready to run again and again on one backend: the constants (x, weights,
// dropout mask) are uploaded by the first run and the activation buffers allocated by it;
// later runs reuse both.
class Runner {
public:
    // Validates the config and the memory budget (ConfigError); keeps references to
    // `inputs`, `weights` and `backend`, which must outlive it.
    Runner(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend);
    ~Runner();
    Runner(const Runner&) = delete;
    Runner& operator=(const Runner&) = delete;

    Trace run(const RunOptions& options = {});

private:
    struct State;
    std::unique_ptr<State> state_;
};

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
