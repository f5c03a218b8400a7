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
    Config timed;            // what the modes ran: timing_config(config)
    std::string timed_note;  // timing_note(config, timed): which length, and why
    std::vector<BenchResult> modes;  // loop, split, fused, flash: forward stage (those the shape takes)
    std::vector<int> rounds;         // the rounds behind each of `modes` (kWhyRounds)
    // Each of `modes`' fastest run in each round, ms (0: the mode sat that round out).
    std::vector<std::vector<double>> round_best;
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

// The window's aim: kWhySeconds, or less where the environment's HEADSPLIT_WHY_SECONDS says
// so (a number above 0 and at most kWhySeconds). Another value gives kWhySeconds, and
// `refused`, when given, the line that says so. The tests use it to stop the sweep after its
// first length.
double why_seconds(std::string* refused = nullptr);

// A forward of fewer FLOPs than this (necessary_flops) is too quick to time: it takes some tens
// of microseconds, most of them the work every step pays whatever its size (the step's
// record, the call into the backend), so its modes' ratios would compare that bookkeeping and
// change from one run to the next. Such a shape is timed at a longer length instead.
constexpr double kWhyMinFlops = 5e5;
// The longest length the modes are moved to, and the sweep's last.
constexpr std::int64_t kWhyLongest = 1024;
// The modes are timed in turns, a round timing each mode once, so that a change in the
// machine's load falls on every mode alike. A mode's figure is the median of its rounds'
// fastest runs (another program busy on the machine only ever makes a run slower, and a
// round's median took its slowness from it; its fastest run seldom does). The first round
// has `repeat` runs (a run's time); each after it about kWhyModeSeconds / kWhyRounds a
// mode, as long as each mode's share of the whole time lasts. With one round only, the
// figure is the median of its runs.
constexpr int kWhyRounds = 20;
constexpr double kWhyModeSeconds = 0.4;

// One sentence of `t` synthetic tokens through the same layer as `c` (heads, sizes, mask,
// variants, backend) in split mode: the sweep's lengths. A batch becomes one sentence with
// one context; decoding, all tokens at once; causal cross-attention, unmasked where the keys
// are not as many as the queries.
Config at_length(const Config& c, std::int64_t t);
// The configuration the modes are timed at: `c` itself, or where its forward is under
// kWhyMinFlops, the same batch of sentences t synthetic tokens long, each with its context,
// decoding (where `c` decodes) the same share of them at once, for the first t doubling from 8
// that reaches it (the longest that fits the memory budget, up to kWhyLongest, where none
// does; `c` where none longer fits).
Config timing_config(const Config& c);
// What the modes view says when `timed` is not as long as `shown`: "timed at T = 256: T = 3
// is too quick" (one line at 1024x768, text 1.5); "" otherwise.
std::string timing_note(const Config& shown, const Config& timed);

// How many times mode a's forward takes mode b's: the median of the two modes' ratios in the
// rounds both ran (side by side, within tens of milliseconds: a change in the machine's speed
// between rounds falls on both), or of their figures where fewer than 3 rounds pair up;
// 0 where either mode was not measured.
double why_ratio(const WhyResult& r, Mode a, Mode b);

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
