#pragma once
// Computes traces for the visualizer. Teaching sizes run at once, in the frame, on the
// window's own GL context; larger ones run on a worker thread (CPU, or GL through a
// headless context of the worker's own) so no frame waits, or, in the single-threaded page,
// in slices between its frames (base/slices.hpp); configurations over the memory budget
// become a shapes-only plan. Every trace it hands out is narrated (teaching's narrate()), and
// its checks count those words in the memory estimate.
#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "headsplit/backends/backend.hpp"
#include "headsplit/base/threads.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::gui {

struct ComputeResult {
    Config config;                       // what was asked for
    std::shared_ptr<const Trace> trace;  // null when the config was refused
    std::string error;                   // one line: why the config was refused
    std::string notice;                  // one line: e.g. GL fell back to the CPU, shapes only
    bool fell_back = false;              // GL was asked for and the CPU ran it (notice says why)
    bool shapes_only = false;            // trace from plan(): no values
    std::vector<ModeCount> counts;       // matmul calls of loop, split and fused for this shape
    // When asked for: the same configuration with the causal mask the other way round (same
    // inputs and weights), for the heatmaps' causal vs bidirectional view. Null when not
    // asked for, or shapes only.
    std::shared_ptr<const Trace> other_mask;
    double ms = 0;                       // time to compute
};

class TraceComputer {
public:
    // window_gl: a GL 4.3 context is current on this (the UI) thread and may be used.
    explicit TraceComputer(bool window_gl);
    ~TraceComputer();

    // Starts computing `c` (and, with other_mask, `c` with the causal mask flipped as well).
    // Small configurations are finished when this returns; a request made while the worker
    // is busy replaces any request still waiting.
    void request(const Config& c, bool other_mask = false);
    // The newest finished result not yet taken.
    std::optional<ComputeResult> take();
    bool busy() const { return worker_.valid(); }
    double busy_seconds() const;
    std::string busy_what() const { return busy_what_; }
    // Why the window's GL context cannot compute ("" when it can).
    const std::string& gl_problem() const { return gl_problem_; }

private:
    // window_backend: GL on the window's context, or null; on_worker: may make a context.
    struct Job {
        CheckedConfig checked;
        bool other_mask = false;
    };
    ComputeResult compute_now(const Job& job, Backend* window_backend, bool on_worker);
    void submit(const Job& job);
    void start_worker(const Job& job);

    bool window_gl_;
    std::unique_ptr<Backend> window_backend_;  // GL on the window's context, made on first use
    std::string gl_problem_;
    OffFrame<ComputeResult> worker_;  // the worker, or the page's sliced job
    std::optional<Job> waiting_;
    bool refused_while_busy_ = false;  // the worker's result is out of date when it comes
    std::optional<ComputeResult> ready_;
    double worker_started_ = 0;
    std::string busy_what_;
};

// Teaching sizes are computed in the frame; anything else on the worker.
bool is_small(const Config& c);

}  // namespace headsplit::gui
