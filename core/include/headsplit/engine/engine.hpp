#pragma once
// One function from (config, inputs, weights, backend) to a Trace.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit {

struct RunOptions {
    // false: steps keep their ops, shapes, links, counts and times but no values, except the
    // final tensor (the output); no readbacks during the pass. What the bench times. Every op
    // still computes (the dropout mask is drawn either way), except that the mask, padding,
    // scale and softmax steps run as one pass per row in the softmax step (the same numbers;
    // the others' steps stay, with no compute and 0 dispatches).
    bool record_values = true;
    // Stop after the Q, K, V projections (the bench's "projections" stage).
    bool projections_only = false;
    // With record_values, the trace keeps a copy of the inputs and the weights; false leaves
    // them out, for a caller that moves its own into the trace afterwards (the window's
    // computer, which then copies no weights).
    bool copy_inputs = true;
};

// What a run would hold in memory, from the shapes-only walk of its steps (the same walk as
// plan(), which sees every buffer the run creates).
struct MemoryEstimate {
    double backend_bytes = 0;  // every backend buffer: x, weights, Q/K/V, scores, ...: what a run allocates
    double host_bytes = 0;     // inputs and weights on the host (the caller's and the trace's), staging, a readback
    double trace_bytes = 0;    // recorded tensor values
    double record_bytes = 0;   // the steps' records beside their values (Trace::record_bytes), words included
    // A backend's own working copies: flash on GL, which copies K and V on a software renderer
    // (kFlashChunkFloats in backend.hpp); 0 elsewhere.
    double working_bytes = 0;
    double total() const { return backend_bytes + host_bytes + trace_bytes + record_bytes + working_bytes; }
    // Writing the trace as JSON (trace --json) holds one piece at a time, at most
    // kJsonPieceValues values as a document and its text. Not part of total().
    double json_bytes = 0;
};
// What a reader above the engine adds to step `step` of `config` once the run is over: the
// heap bytes of the words it writes there (Step::code, Step::explain; teaching's
// narration_bytes). The engine records no words; its memory estimate counts what this says
// they will take, or none for kNoWords (a trace that no one narrates: a bench, a timing).
using StepWordsBytes = std::size_t (*)(const Step& step, const Config& config);
constexpr StepWordsBytes kNoWords = nullptr;

// The values the JSON writer holds at once, and what each costs there: nlohmann's 16-byte
// node and about 20 characters of text (15.6 a value measured over gpt2-small at T = 256).
constexpr double kJsonPieceValues = 65536;
constexpr double kJsonBytesPerValue = 36;
// `config` must have passed validate(); `words`: what each step's words will take.
MemoryEstimate estimate_memory(const Config& config, StepWordsBytes words);

// A configuration that passed the one validation entry, check_config(), with its memory
// estimate. Every path (trace, bench, the window, the why job) checks a configuration once
// and hands this on; the engine does not check it again.
struct CheckedConfig {
    Config config;
    MemoryEstimate memory;
    double flops = 0;  // the steps' matmul FLOPs, from the same walk (Step::flops summed)
    // with_json: the run also writes its trace as JSON (MemoryEstimate::json_bytes).
    bool fits_budget(bool with_json = false) const;
    // Throws ConfigError (one line, with the figures) when it does not fit the budget.
    void require_budget(bool with_json = false) const;
};

// A run that would take longer than the configuration's time budget: refused on the command
// line, shown as shapes only in the window (gpt3's way).
class WorkError : public ConfigError {
public:
    using ConfigError::ConfigError;
};

// How long a run of `checked` would take on `backend`: 1.5 times its matmul FLOPs at the
// rate a small product measures there now (128 x 512 x 512, a few milliseconds even on
// llvmpipe; the other kernels go slower than a product), and its recorded values copied at
// 1 GB/s.
struct WorkEstimate {
    double gflops_rate = 0;  // measured on the backend
    double seconds = 0;
};
WorkEstimate estimate_work(const CheckedConfig& checked, Backend& backend);

// Throws WorkError (one line: the estimate, the rate, the budget, what would work) when a run
// of `checked` on `backend` is estimated over config.time_budget. Measures nothing for a run
// under 2 GFLOP (well under a second on any backend HeadSplit has).
void require_time(const CheckedConfig& checked, Backend& backend);

// The rule that a tile side (--block) is flash mode's: ConfigError when `block` is given (not
// 0) and `mode` is not flash, ending with `add_flash`, how to ask for flash mode there.
void check_block_needs_flash(std::int64_t block, Mode mode, const std::string& add_flash);

// Validates every value (ConfigError naming the first bad one) and estimates the memory,
// each step's words counted as `words` says. Does not refuse a configuration over the
// budget: plan() may still show its shapes.
CheckedConfig check_config(const Config& c, StepWordsBytes words);

// A configuration ready to run again and again on one backend: the constants (x, weights,
// dropout mask) are uploaded by the first run and the activation buffers allocated by it;
// later runs reuse both. Several runners may share one backend: each releases only its own
// buffers when destroyed.
class Runner {
public:
    // Refuses a configuration over the memory budget (ConfigError); keeps references to
    // `inputs`, `weights` and `backend`, which must outlive it.
    Runner(const CheckedConfig& config, const Inputs& inputs, const Weights& weights, Backend& backend);
    // The same after check_config(config, kNoWords).
    Runner(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend);
    ~Runner();
    Runner(const Runner&) = delete;
    Runner& operator=(const Runner&) = delete;

    Trace run(const RunOptions& options = {});
    // The next run uploads the inputs and the weights again from the references it keeps: for
    // a caller that changed their values (a training step), not their sizes.
    void reload();

private:
    struct State;
    std::unique_ptr<State> state_;
};

// The gradients a backward run gave (config.backward), read back from `backend` by their
// names in `trace`, whatever the mode: in nn.Linear layout as Weights holds the weights
// (fused mode's dW_qkv split into its three), each empty where the configuration has no such
// weight; dx [B, T, D_in] and, with cross-attention, d_context [B, S, D_context].
struct Gradients {
    Weights weights;
    std::vector<float> dx, d_context;
};
// Reads them from the buffers that `trace`'s records name, which must still be `backend`'s
// (before the runner that made them runs again or ends). std::logic_error for a trace with no
// backward pass.
Gradients read_gradients(const Trace& trace, Backend& backend);
// Reads the values of the last record named `name` in `trace` (whole, as its record's shape
// says), from `backend`'s buffer; empty when no step recorded it.
std::vector<float> read_tensor(const Trace& trace, const std::string& name, Backend& backend);

// Runs multi-head self-attention as config.mode says (loop | split | fused) on `backend`
// and records every step, each tensor linked to what it was made from. The steps' words are
// left empty, for a reader above the engine (teaching's narrate()). The Config overload
// checks it with check_config(config, kNoWords).
Trace run(const CheckedConfig& config, const Inputs& inputs, const Weights& weights, Backend& backend,
          const RunOptions& options = {});
Trace run(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend);

// The steps of `config` with every tensor's shape, strides, storage and links but no
// values and no words, at no cost in memory or time: what the visualizer shows for
// configurations too large to run (gpt3). Not refused for the memory budget.
Trace plan(const CheckedConfig& config);
Trace plan(const Config& config);  // through check_config(config, kNoWords) first

// The matmul calls `c` makes in mode `mode`, from plan()'s walk through the steps: those of the
// Q/K/V projections, all of them, and the steps; or why the mode cannot run `c` (fused
// cross-attention, ...). The weight split panel and the handout show them side by side.
struct ModeCount {
    Mode mode = Mode::Split;
    std::int64_t projections = 0, total = 0, steps = 0;
    std::string refused;
};
std::vector<ModeCount> matmul_counts(const Config& c);  // loop, split and fused

}  // namespace headsplit
