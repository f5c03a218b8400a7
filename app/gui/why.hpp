#pragma once
// The "Why weight splits" measurement for the current shape, run off the UI thread: the
// three modes' forward times and matmul counts, and a sweep over T of the score grids'
// memory and the forward time (the quadratic growth).
#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "headsplit/bench.hpp"

namespace headsplit::gui {

struct SweepPoint {
    std::int64_t tokens = 0;
    double score_bytes = 0;  // heads x T x T floats
    double forward_ms = 0;   // split mode, median
};

struct WhyResult {
    Config config;
    std::vector<BenchResult> modes;  // loop, split, fused: forward stage
    std::vector<SweepPoint> sweep;
    std::string error;
    std::string notice;  // GL could not be had: measured on the CPU instead, and why
};

// Measures `c` (its backend; GL makes its own headless context on the calling thread).
// `done` counts finished measurements out of `total` (set first), for a progress bar.
WhyResult measure_why(const Config& c, int repeat, std::atomic<int>& done, std::atomic<int>& total);

struct WhyJob {
    Config config;
    std::atomic<int> done{0}, total{1};
    std::future<WhyResult> future;
    std::shared_ptr<WhyResult> result;  // once finished
};

// Starts measuring `c` on a worker thread.
std::shared_ptr<WhyJob> start_why(const Config& c);

}  // namespace headsplit::gui
