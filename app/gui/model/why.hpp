#pragma once
// The "Why weight splits" measurement for the current shape, run off the UI thread: the
// modes' forward times and matmul counts, and a sweep over T of the score grids' memory and
// the forward time (the quadratic growth), with flash's tiles beside them.
#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "headsplit/engine/bench.hpp"

namespace headsplit::gui {

struct SweepPoint {
    std::int64_t tokens = 0;
    double score_bytes = 0;  // heads x T x T floats: split's score grid
    double forward_ms = 0;   // split mode, median
    double flash_bytes = 0;  // heads x (block x block + 2 T) floats: flash's tile, m and l
    double flash_ms = 0;     // flash mode, median (0: not measured)
};

struct WhyResult {
    Config config;
    std::vector<BenchResult> modes;  // loop, split, fused, flash: forward stage (those the shape takes)
    std::vector<SweepPoint> sweep;
    std::string sweep_end;  // why the sweep stopped where it did, when the time did it
    std::string error;
    std::string notice;  // GL could not be had: measured on the CPU instead, and why
};

// What the whole measurement may take, in seconds: a class waits for it. Each mode's timed runs
// stop after an eighth of it (one run at least); the sweep stops before a length it predicts
// (from the length before, by the FLOPs) would end past it. gpt2-xl on llvmpipe took two
// minutes without it.
constexpr double kWhySeconds = 10;

// Measures `c` (its backend; GL makes its own headless context on the calling thread).
// `done` counts finished measurements out of `total` (set first, lowered when the sweep ends
// early), for a progress bar. `cancel`, when given and set, stops it after the run it is in
// (the result then says so). `seconds`: the time it aims to end within (above).
WhyResult measure_why(const Config& c, int repeat, std::atomic<int>& done, std::atomic<int>& total,
                      const std::atomic<bool>* cancel = nullptr, double seconds = kWhySeconds);

struct WhyJob {
    Config config;
    std::atomic<int> done{0}, total{1};
    // Set when the job is dropped (the window closing, another configuration): the worker
    // stops after the run it is in, so that no one waits a minute for measurements no one
    // will see (gpt2-xl on llvmpipe). Before `future`, whose destructor waits for the worker.
    std::atomic<bool> cancel{false};
    std::future<WhyResult> future;
    std::shared_ptr<WhyResult> result;  // once finished
    WhyJob() = default;
    WhyJob(const WhyJob&) = delete;
    WhyJob& operator=(const WhyJob&) = delete;
    ~WhyJob() { cancel = true; }
};

// Starts measuring `c` on a worker thread.
std::shared_ptr<WhyJob> start_why(const Config& c);

}  // namespace headsplit::gui
