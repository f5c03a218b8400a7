#pragma once
// Measuring the lesson: loop, split and fused side by side on one backend, timed as the
// median of repeated runs after a warm-up (GL steps end with glFinish: GPU time).
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
    std::int64_t matmuls = 0, dispatches = 0;
    double flops = 0;          // matmul FLOPs of one run
    double gemm_median_ms = 0; // the steps that run matmuls, inside the same runs
    double gflops() const { return median_ms > 0 ? flops / (median_ms * 1e6) : 0; }
};

// One warm-up, then `repeat` timed runs of `c` in `mode` at `stage` on `backend`.
BenchResult bench_one(const Config& c, const Inputs& in, const Weights& w, Mode mode, Stage stage, Backend& backend,
                      int repeat);

// {"format": "headsplit-bench", "version": 1, "results": [...]} (README: Bench format).
std::string bench_json(const std::vector<BenchResult>& results, const std::string& extra_json_fields = "");

// Files compiled into the library from assets/ ("torch_mha_bench.py"); empty when none.
std::string_view embedded_asset(std::string_view name);

}  // namespace headsplit
