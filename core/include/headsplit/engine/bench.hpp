#pragma once
// Measuring the lesson: loop, split and fused side by side on one backend, timed as the
// median of repeated runs after a warm-up (GL steps end with glFinish: GPU time).
#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"

namespace headsplit {

enum class Stage {
    Projections,    // Q, K, V only
    Forward,        // the whole layer, no trace recorded
    ForwardTraced,  // the whole layer with every step's values read back (the visualizer's cost)
};
const char* stage_name(Stage s);  // "projections" | "forward" | "forward_traced"

struct BenchResult {
    std::string preset;
    std::int64_t tokens = 0;
    std::string backend;
    Mode mode = Mode::Split;
    Stage stage = Stage::Forward;
    double median_ms = 0, min_ms = 0, max_ms = 0;
    int runs = 0;              // the timed runs the median is of
    std::int64_t matmuls = 0, dispatches = 0;
    double flops = 0;          // matmul FLOPs of one run
    double gemm_median_ms = 0; // the steps that run matmuls, inside the same runs
    double limit_flops = 0;    // necessary_flops of the configuration
    double gflops() const { return median_ms > 0 ? flops / (median_ms * 1e6) : 0; }
};

// The FLOPs no mode can avoid in one forward: the Q, K, V and output projections, and QK^T
// and P @ V, of which a causal mask leaves half (the keys after each query are never
// needed). At gpt2-small T = 2048: 16.1 GFLOP. Divided by a forward's time, over the
// machine's SGEMM rate, it says how close to the GEMM limit the forward runs.
double necessary_flops(const Config& c);

// The GEMM limit of one shape on one backend, from a table of results: the SGEMM rate (the
// fastest projections stage measured, three or one plain GEMMs) and each mode's forward as a
// fraction of it (necessary_flops / forward time / that rate). Empty without a projections
// stage and a forward.
struct GemmLimit {
    double sgemm_gflops = 0;
    std::vector<std::pair<Mode, double>> forward_fraction;
};
GemmLimit gemm_limit(const std::vector<BenchResult>& one_shape);

// One warm-up, then `repeat` timed runs of `c` in `mode` at `stage` on `backend`. `stop`, when
// given and set (the window closing), ends the runs early: what was timed so far is returned.
// `seconds`, when above 0, ends them once the timed runs have taken that long (one at least).
BenchResult bench_one(const Config& c, const Inputs& in, const Weights& w, Mode mode, Stage stage, Backend& backend,
                      int repeat, const std::atomic<bool>* stop = nullptr, double seconds = 0);

// {"format": "headsplit-bench", "version": 1, "results": [...]} (README: Bench format).
std::string bench_json(const std::vector<BenchResult>& results, const std::string& extra_json_fields = "");

// Files compiled into the library from assets/ ("torch_mha_bench.py"); empty when none.
std::string_view embedded_asset(std::string_view name);

}  // namespace headsplit
