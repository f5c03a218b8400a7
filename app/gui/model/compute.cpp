#include "gui/model/compute.hpp"

#include <chrono>
#include <optional>

#include <sys/resource.h>
#include <unistd.h>


#include "headsplit/base/threads.hpp"
#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/engine/config_edit.hpp"
#include "headsplit/teaching/narration.hpp"
#include "headsplit/model/presets.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/backends/gl_backend.hpp"

namespace headsplit::gui {

namespace {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

bool is_small(const Config& c) {
    return c.num_tokens() <= 32 && c.num_keys() <= 32 && c.batch <= 4 && c.d_out <= 128 && c.d_in <= 128;
}

TraceComputer::TraceComputer(bool window_gl) : window_gl_(window_gl) {}

TraceComputer::~TraceComputer() {
    if (worker_.valid()) worker_.wait();
}

double TraceComputer::busy_seconds() const { return busy() ? now_seconds() - worker_started_ : 0.0; }

namespace {

// A checkpoint run whose text was edited in the window (its words, no x yet): tokenized again
// and run to the layer's input, with the run's own settings kept.
CheckedConfig retokenized(const Config& edited) {
    if (edited.batch > 1) throw ConfigError("a checkpoint run takes one sentence; remove the others");
    std::string text;
    for (const std::string& t : edited.tokens) text += (text.empty() ? "" : " ") + t;
    Config c = gpt2_config(edited.weights_dir, text, edited.layer);
    if (find_preset(edited.preset)) c.preset = edited.preset;  // tiny-trained stays tiny-trained
    keep_run_settings(edited, c);
    return check_config(c, narration_bytes);
}

}  // namespace

ComputeResult TraceComputer::compute_now(const Job& job, Backend* window_backend, bool on_worker) {
    ComputeResult r;
    r.config = job.checked.config;
    const double t0 = now_seconds();
    try {
        // Here, not on the UI thread: tokenizing and running the blocks before the layer takes
        // seconds for a large model.
        const bool edited = !job.checked.config.weights_dir.empty() && job.checked.config.embeddings.empty();
        const CheckedConfig checked = edited ? retokenized(job.checked.config) : job.checked;
        const Config& c = checked.config;
        r.config = c;
        r.counts = matmul_counts(c);  // here, not in the frame: a walk per mode
        // Over the memory or the time budget: its shapes, and the budget's line saying why.
        const auto shapes_only = [&](const std::exception& why) {
            auto planned = std::make_shared<Trace>(plan(checked));
            narrate(*planned);
            r.trace = std::move(planned);
            r.shapes_only = true;
            r.notice = std::string("shapes only, not computed: ") + why.what();
            return r;
        };
        try {
            checked.require_budget();
        } catch (const ConfigError& e) {
            return shapes_only(e);
        }
        Inputs in = make_inputs(c);
        Weights w = load_weights(c);
        BackendRequest request;
        request.kind = c.backend;
        request.existing = window_backend;
        // A worker thread makes a headless context of its own. The UI thread never does:
        // making one current there would take the window's context away.
        request.may_create_context = on_worker;
        if (!on_worker)
            request.no_context_why = gl_problem_.empty()
                                         ? std::string("the window's OpenGL is older than 4.3, which compute shaders need")
                                         : gl_problem_;
        // No stderr here: the window writes each notice once (take_result), not per change.
        // Every trace the window shows is narrated here.
        auto compute = [&](const CheckedConfig& which, const Inputs& ins, const Weights& ws) {
            auto trace = std::make_shared<Trace>(run_with_fallback<Trace>(
                request,
                [&](Backend& backend, BackendKind kind) {
                    CheckedConfig on = which;
                    on.config.backend = kind;  // the trace says where it ran
                    RunOptions options;
                    options.copy_inputs = false;  // the trace gets them below
                    return run(on, ins, ws, backend, options);
                },
                &r.notice));
            narrate(*trace);
            return trace;
        };
        std::shared_ptr<Trace> trace;
        try {
            trace = compute(checked, in, w);
        } catch (const WorkError& e) {
            return shapes_only(e);
        }
        r.fell_back = trace->config.backend != c.backend;  // the trace says where it ran
        // The trace holds the inputs and weights it ran on: moved in, not copied. It is the
        // result from here on, whatever happens to the comparison below.
        trace->inputs = std::move(in);
        trace->weights = std::move(w);
        r.trace = trace;
        if (job.other_mask) {
            // The mask changes neither the inputs nor the weights, nor the memory the pass needs.
            // A flip the configuration cannot take (decoding needs the mask; a context of
            // another length cannot have one) leaves the comparison out.
            Config flipped = c;
            flipped.causal = !c.causal;
            std::optional<CheckedConfig> other;
            try {
                other = check_config(flipped, narration_bytes);
            } catch (const ConfigError&) {
            }
            if (other && other->fits_budget()) {
                try {
                    std::shared_ptr<Trace> flipped_trace = compute(*other, trace->inputs, trace->weights);
                    flipped_trace->inputs = trace->inputs;
                    flipped_trace->weights = trace->weights;
                    r.other_mask = std::move(flipped_trace);
                } catch (const WorkError&) {  // its own estimate came out over: no comparison, the trace stays
                }
            }
        }
    } catch (const ConfigError& e) {
        r.error = e.what();
    } catch (const std::bad_alloc&) {
        r.error = "out of memory for this configuration; use fewer tokens or a smaller D_out";
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    r.ms = (now_seconds() - t0) * 1e3;
    return r;
}

void TraceComputer::request(const Config& c, bool other_mask) {
    // The one validation of this change. A refused value is answered at once, whatever the
    // size, and nothing is computed.
    try {
        submit({check_config(c, narration_bytes), other_mask});
    } catch (const ConfigError& e) {
        ComputeResult r;
        r.config = c;
        r.error = e.what();
        ready_ = std::move(r);
        waiting_.reset();  // older than this value: nothing valid is left to compute
        if (worker_.valid()) refused_while_busy_ = true;
    }
}

void TraceComputer::submit(const Job& job) {
    const Config& c = job.checked.config;
    if (worker_.valid()) {
        waiting_ = job;  // picked up when the worker finishes
        return;
    }
    if (!is_small(c)) {
        start_worker(job);
        return;
    }
    Backend* window = nullptr;
    if (c.backend == BackendKind::Gl && window_gl_) {
        if (!window_backend_ && gl_problem_.empty()) {
            try {
                window_backend_ = make_gl_backend({MatmulKernel::Auto, false});
            } catch (const GlError& e) {
                gl_problem_ = e.what();
            }
        }
        window = window_backend_.get();
    }
    ready_ = compute_now(job, window, false);
}

void TraceComputer::start_worker(const Job& job) {
    const Config& c = job.checked.config;
    worker_started_ = now_seconds();
    busy_what_ = std::to_string(c.num_tokens()) + " tokens, D_out " + std::to_string(c.d_out) + ", " +
                 std::to_string(c.heads) + " heads on " + backend_name(c.backend);
    worker_ = OffFrame<ComputeResult>([this, job] {
        // Below the UI thread, so that on a 2-core laptop the frames keep their pace (threads
        // this one starts inherit it; OpenBLAS's pool, made at start-up, does not). Best
        // effort: if the system refuses, the trace is computed at normal priority.
        (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
        return compute_now(job, nullptr, true);
    });
}

std::optional<ComputeResult> TraceComputer::take() {
    if (worker_.valid() && worker_.ready()) {
        ComputeResult r = worker_.get();
        // A value refused while the worker ran is the newest word: its result is dropped so
        // the refusal stays on screen (and is not overwritten before it was taken).
        if (!refused_while_busy_) ready_ = std::move(r);
        refused_while_busy_ = false;
        if (waiting_) {
            const Job next = *waiting_;
            waiting_.reset();
            submit(next);
        }
    }
    std::optional<ComputeResult> out;
    out.swap(ready_);
    return out;
}

}  // namespace headsplit::gui
