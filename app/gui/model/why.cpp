#include "gui/model/why.hpp"

#include <chrono>
#include <cstdio>

#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/engine/engine.hpp"

namespace headsplit::gui {

WhyResult measure_why(const Config& config, int repeat, std::atomic<int>& done, std::atomic<int>& total,
                      const std::atomic<bool>* cancel, double seconds) {
    const auto started = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
    WhyResult out;
    out.config = config;
    try {  // nothing is allocated for a shape that is refused or over the memory budget
        check_config(config).require_budget();
    } catch (const ConfigError& e) {
        out.error = e.what();
        return out;
    }
    // The sweep: T doubling from 8 while the run fits the memory budget and stays quick.
    std::vector<std::int64_t> sweep;
    // One sentence of t synthetic tokens, all at once (the sweep is about the score grid).
    const auto at_length = [&](std::int64_t t) {
        Config c = config;
        c.set_sentences({synthetic_tokens(t)});
        if (c.context.size() > 1) c.context = {c.context.front()};  // one sentence: one context
        c.embeddings.clear();
        c.decode_from = 0;
        c.mode = Mode::Split;
        if (c.cross() && c.causal && c.num_keys() != t) c.causal = false;
        return c;
    };
    for (std::int64_t t = 8; t <= 1024; t *= 2) {
        const Config c = at_length(t);
        if (estimate_memory(c).total() > static_cast<double>(c.memory_budget)) break;
        if (2.0 * c.heads * t * t * c.head_dim() + 8.0 * t * c.d_in * c.d_out > 4e10) break;  // ~ a second or more
        sweep.push_back(t);
    }
    total = 4 + 2 * static_cast<int>(sweep.size());
    try {
        BackendRequest request;  // a worker thread: it may make a headless GL context of its own
        request.kind = config.backend;
        // The notice is shown in the why panel; stderr has the window's own, once.
        BackendChoice choice = choose_backend(request);
        out.notice = choice.notice;
        Backend* be = choice.backend;
        const Inputs in = make_inputs(config);
        const Weights w = make_weights(config);
        const auto stopped = [&] {
            if (cancel && *cancel) throw std::runtime_error("stopped: the measurement was no longer wanted");
        };
        for (Mode m : {Mode::Loop, Mode::Split, Mode::Fused, Mode::Flash}) {
            stopped();
            Config in_mode = config;
            in_mode.mode = m;
            in_mode.block = m == Mode::Flash ? config.block : 0;
            try {  // a mode the configuration cannot take (fused cross-attention, loop decoding) is left out
                validate(in_mode);
            } catch (const ConfigError& e) {
                out.notice += std::string(out.notice.empty() ? "" : "; ") + mode_name(m) + " left out: " + e.what();
                ++done;
                continue;
            }
            out.modes.push_back(bench_one(in_mode, in, w, m, Stage::Forward, *be, repeat, cancel, seconds / 8));
            ++done;
        }
        double last_cost = 0, last_flops = 0;  // the length before: its seconds, its FLOPs
        for (std::int64_t t : sweep) {
            stopped();
            const Config c = at_length(t);
            const double flops = necessary_flops(c);
            const double predicted = last_flops > 0 ? last_cost * flops / last_flops : 0;
            if (!out.sweep.empty() && elapsed() + predicted > seconds) {
                char why[160];
                std::snprintf(why, sizeof why, "T >= %lld left out: %.0f s more", static_cast<long long>(t),
                              predicted);
                out.sweep_end = why;
                total = done.load();
                break;
            }
            const double length_started = elapsed();
            const Inputs ti = make_inputs(c);
            const Weights tw = make_weights(c);
            const BenchResult r = bench_one(c, ti, tw, Mode::Split, Stage::Forward, *be, repeat, cancel);
            ++done;
            // Flash at the same length (its default block), where it can run (not with dropout).
            Config f = c;
            f.mode = Mode::Flash;
            f.block = 0;
            const double blk = static_cast<double>(f.flash_block());
            SweepPoint p{t, 4.0 * c.heads * t * t, r.median_ms, 4.0 * c.heads * (blk * blk + 2.0 * t), 0};
            bool flash_runs = true;
            try {
                validate(f);
            } catch (const ConfigError&) {
                flash_runs = false;
            }
            if (flash_runs) p.flash_ms = bench_one(f, ti, tw, Mode::Flash, Stage::Forward, *be, repeat, cancel).median_ms;
            ++done;
            out.sweep.push_back(p);
            last_cost = elapsed() - length_started, last_flops = flops;
        }
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    return out;
}

std::shared_ptr<WhyJob> start_why(const Config& c) {
    auto job = std::make_shared<WhyJob>();
    job->config = c;
    WhyJob* raw = job.get();  // the job outlives its future: whoever holds it waits on it
    job->future = std::async(std::launch::async, [raw, c] { return measure_why(c, 5, raw->done, raw->total, &raw->cancel); });
    return job;
}

}  // namespace headsplit::gui
