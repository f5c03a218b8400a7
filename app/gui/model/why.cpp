#include "gui/model/why.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "headsplit/base/threads.hpp"
#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/model/checkpoint.hpp"

namespace headsplit::gui {

Config at_length(const Config& config, std::int64_t t) {
    Config c = config;
    c.set_sentences({synthetic_tokens(t)});
    if (c.context.size() > 1) c.context = {c.context.front()};  // one sentence: one context
    c.embeddings.clear();
    c.decode_from = 0;
    c.mode = Mode::Split;
    c.block = 0;
    if (c.cross() && c.causal && c.num_keys() != t) c.causal = false;
    return c;
}

namespace {

// The why tab times runs whose traces no one reads: no words to count.
bool fits_budget(const Config& c) { return estimate_memory(c, kNoWords).total() <= static_cast<double>(c.memory_budget); }

}  // namespace

Config timing_config(const Config& c) {
    if (necessary_flops(c) >= kWhyMinFlops) return c;
    // at_length, keeping every sentence (each of t tokens, with its own context) and the
    // share of the tokens that decoding reads at once; flash's block the default at t.
    const auto longer = [&](std::int64_t t) {
        Config l = at_length(c, t);
        l.set_sentences(std::vector<std::vector<std::string>>(static_cast<std::size_t>(c.batch), synthetic_tokens(t)));
        l.context = c.context;
        l.causal = c.causal && !(l.cross() && l.num_keys() != t);
        if (c.decoding()) l.decode_from = std::max<std::int64_t>(1, t * c.decode_from / c.num_tokens());
        l.mode = c.mode;
        return l;
    };
    std::int64_t length = 0;
    for (std::int64_t t = 8; t <= kWhyLongest; t *= 2) {
        if (t <= c.num_tokens()) continue;
        const Config l = longer(t);
        if (!fits_budget(l)) break;
        length = t;
        if (necessary_flops(l) >= kWhyMinFlops) break;
    }
    return length > 0 ? longer(length) : c;
}

std::string timing_note(const Config& shown, const Config& timed) {
    if (timed.num_tokens() == shown.num_tokens()) return "";
    return "timed at T = " + std::to_string(timed.num_tokens()) + ": T = " + std::to_string(shown.num_tokens()) +
           " is too quick";
}

namespace {

// What measure_why's parts share: the clock since it began, and a check that throws once the
// measurement is no longer wanted.
struct WhyRun {
    std::function<double()> elapsed;
    std::function<void()> stopped;
};

// Each mode timed in kWhyRounds rounds, the modes taking turns, each round its share of
// `seconds`: out.modes, out.rounds, out.round_best.
void time_modes(WhyResult& out, const Config& config, int repeat, Backend& be, const Inputs& in, const Weights& w,
                std::atomic<int>& done, const std::atomic<bool>* cancel, double seconds, const WhyRun& run) {
    const Config& timed = out.timed;
    const auto& elapsed = run.elapsed;
    const auto& stopped = run.stopped;
    struct Timing {
        Config config;
        std::vector<BenchResult> rounds;  // the first: `repeat` runs, for the time a run takes
        double spent = 0;                 // seconds, warm-ups included
        std::vector<double> best_in_round = std::vector<double>(kWhyRounds, 0.0);
    };
    std::vector<Timing> timings;
    for (Mode m : {Mode::Loop, Mode::Split, Mode::Fused, Mode::Flash}) {
        Config in_mode = timed;
        in_mode.mode = m;
        // The block on screen at the length on screen; at a longer one, the default.
        in_mode.block = m == Mode::Flash && timed.num_tokens() == config.num_tokens() ? config.block : 0;
        try {  // a mode the configuration cannot take (fused cross-attention, loop decoding) is left out
            validate(in_mode);
        } catch (const ConfigError& e) {
            out.notice += std::string(out.notice.empty() ? "" : "; ") + mode_name(m) + " left out: " + e.what();
            done += kWhyRounds;
            continue;
        }
        timings.push_back({in_mode, {}, 0});
    }
    const double share = seconds / 8;  // a mode's time, every round
    for (int round = 0; round < kWhyRounds; ++round)
        for (Timing& t : timings) {
            stopped();
            const double left = share - t.spent;
            if (round > 0 && left <= 0) {
                ++done;
                continue;
            }
            int runs = repeat;
            if (round > 0) {
                const double run_s = std::max(1e-7, t.rounds.front().median_ms / 1e3);
                runs = static_cast<int>(std::clamp(kWhyModeSeconds / kWhyRounds / run_s, 1.0, 1e6));
            }
            const double round_started = elapsed();
            t.rounds.push_back(bench_one(t.config, in, w, t.config.mode, Stage::Forward, be, runs, cancel, left));
            t.best_in_round[static_cast<std::size_t>(round)] = t.rounds.back().min_ms;
            t.spent += elapsed() - round_started;
            ++done;
        }
    for (const Timing& t : timings) {
        out.round_best.push_back(t.best_in_round);
        BenchResult b = t.rounds.back();
        std::vector<double> best, gemm;
        b.runs = 0;
        for (const BenchResult& r : t.rounds) {
            best.push_back(r.min_ms), gemm.push_back(r.gemm_median_ms);
            b.min_ms = std::min(b.min_ms, r.min_ms), b.max_ms = std::max(b.max_ms, r.max_ms);
            b.runs += r.runs;
        }
        // One round: the median of its runs. More: the median of their fastest runs.
        if (t.rounds.size() > 1) b.median_ms = spread(best).median;
        b.gemm_median_ms = spread(gemm).median;
        out.modes.push_back(b);
        out.rounds.push_back(static_cast<int>(t.rounds.size()));
    }
}

// The sweep's lengths, split and flash at each, until the next would pass `seconds`:
// out.sweep and, where it stopped early, out.sweep_end.
void time_sweep(WhyResult& out, const Config& config, const std::vector<std::int64_t>& sweep, int repeat,
                Backend& be, std::atomic<int>& done, std::atomic<int>& total, const std::atomic<bool>* cancel,
                double seconds, const WhyRun& run) {
    const auto& elapsed = run.elapsed;
    const auto& stopped = run.stopped;
    double last_cost = 0, last_flops = 0;  // the length before: its seconds, its FLOPs
    for (std::int64_t t : sweep) {
        stopped();
        const Config c = at_length(config, t);
        const double flops = necessary_flops(c);
        const double predicted = last_flops > 0 ? last_cost * flops / last_flops : 0;
        if (!out.sweep.empty() && elapsed() + predicted > seconds) {
            char why[160];
            // Its time as a reader takes it in: whole seconds, a tenth under 10 s, ms under
            // a tenth of a second, two figures under 10 ms (a short measurement's next length).
            // (Each bound where the figure rounds up to the next form: 9.96 s is "10 s".)
            const double ms = predicted * 1e3;
            const int digits = predicted >= 9.95 ? 0 : 1;
            if (ms >= 99.5)
                std::snprintf(why, sizeof why, "T >= %lld left out: %.*f s more", static_cast<long long>(t), digits, predicted);
            else
                std::snprintf(why, sizeof why, ms < 9.95 ? "T >= %lld left out: %.2g ms more" : "T >= %lld left out: %.0f ms more",
                              static_cast<long long>(t), ms);
            out.sweep_end = why;
            total = done.load();
            break;
        }
        const double length_started = elapsed();
        const Inputs ti = make_inputs(c);
        const Weights tw = load_weights(c);
        const BenchResult r = bench_one(c, ti, tw, Mode::Split, Stage::Forward, be, repeat, cancel);
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
        if (flash_runs) p.flash_ms = bench_one(f, ti, tw, Mode::Flash, Stage::Forward, be, repeat, cancel).median_ms;
        ++done;
        out.sweep.push_back(p);
        last_cost = elapsed() - length_started, last_flops = flops;
    }
}

}  // namespace

WhyResult measure_why(const Config& config, int repeat, std::atomic<int>& done, std::atomic<int>& total,
                      const std::atomic<bool>* cancel, double seconds) {
    const auto started = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
    WhyResult out;
    out.config = config;
    try {  // nothing is allocated for a shape that is refused or over the memory budget
        check_config(config, kNoWords).require_budget();
    } catch (const ConfigError& e) {
        out.error = e.what();
        return out;
    }
    out.timed = timing_config(config);
    out.timed_note = timing_note(config, out.timed);
    // The sweep: T doubling from 8 while the run fits the memory budget and stays quick.
    std::vector<std::int64_t> sweep;
    for (std::int64_t t = 8; t <= kWhyLongest; t *= 2) {
        const Config c = at_length(config, t);
        if (!fits_budget(c)) break;
        if (2.0 * c.heads * t * t * c.head_dim() + 8.0 * t * c.d_in * c.d_out > 4e10) break;  // ~ a second or more
        sweep.push_back(t);
    }
    total = 4 * kWhyRounds + 2 * static_cast<int>(sweep.size());
    try {
        BackendRequest request;  // a worker thread: it may make a headless GL context of its own
        request.kind = config.backend;
        // The notice is shown in the why panel; stderr has the window's own, once.
        BackendChoice choice = choose_backend(request);
        out.notice = choice.notice;
        Backend* be = choice.backend;
        const Config& timed = out.timed;
        const Inputs in = make_inputs(timed);
        const Weights w = load_weights(timed);
        const auto stopped = [&] {
            if (cancel && *cancel) throw std::runtime_error("stopped: the measurement was no longer wanted");
        };
        const WhyRun run{elapsed, stopped};
        time_modes(out, config, repeat, *be, in, w, done, cancel, seconds, run);
        time_sweep(out, config, sweep, repeat, *be, done, total, cancel, seconds, run);
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    return out;
}

double why_ratio(const WhyResult& r, Mode a, Mode b) {
    const auto at = [&](Mode m) {
        for (std::size_t i = 0; i < r.modes.size(); ++i)
            if (r.modes[i].mode == m) return static_cast<int>(i);
        return -1;
    };
    const int ia = at(a), ib = at(b);
    if (ia < 0 || ib < 0 || r.modes[static_cast<std::size_t>(ia)].median_ms <= 0 || r.modes[static_cast<std::size_t>(ib)].median_ms <= 0)
        return 0;
    std::vector<double> paired;
    if (static_cast<std::size_t>(std::max(ia, ib)) < r.round_best.size()) {
        const std::vector<double>& ra = r.round_best[static_cast<std::size_t>(ia)];
        const std::vector<double>& rb = r.round_best[static_cast<std::size_t>(ib)];
        for (std::size_t k = 0; k < std::min(ra.size(), rb.size()); ++k)
            if (ra[k] > 0 && rb[k] > 0) paired.push_back(ra[k] / rb[k]);
    }
    if (paired.size() >= 3) return spread(paired).median;
    return r.modes[static_cast<std::size_t>(ia)].median_ms / r.modes[static_cast<std::size_t>(ib)].median_ms;
}

double why_seconds(std::string* refused) {
    const char* text = std::getenv("HEADSPLIT_WHY_SECONDS");
    if (!text || !*text) return kWhySeconds;
    char* end = nullptr;
    const double s = std::strtod(text, &end);
    if (*end == '\0' && std::isfinite(s) && s > 0 && s <= kWhySeconds) return s;
    if (refused)
        *refused = "HEADSPLIT_WHY_SECONDS " + quote_name(text) + " is not a number of seconds above 0 and at most " +
                   std::to_string(static_cast<int>(kWhySeconds)) + "; measuring for " +
                   std::to_string(static_cast<int>(kWhySeconds)) + " s";
    return kWhySeconds;
}

std::shared_ptr<WhyJob> start_why(const Config& c) {
    auto job = std::make_shared<WhyJob>();
    job->config = c;
    WhyJob* raw = job.get();  // the job outlives its future: whoever holds it waits on it
    std::string refused;
    const double seconds = why_seconds(&refused);
    static bool told = false;  // the environment does not change: said once
    if (!refused.empty() && !told) std::fprintf(stderr, "headsplit: %s\n", refused.c_str()), told = true;
    job->future = std::async(kOffFrame, [raw, c, seconds] { return measure_why(c, 5, raw->done, raw->total, &raw->cancel, seconds); });
    return job;
}

}  // namespace headsplit::gui
