#include "headsplit/engine/bench.hpp"

#include "headsplit/base/numbers.hpp"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "embedded.hpp"
#include "headsplit/engine/engine.hpp"

namespace headsplit {

const char* stage_name(Stage s) {
    switch (s) {
        case Stage::Projections: return "projections";
        case Stage::Forward: return "forward";
        case Stage::ForwardTraced: return "forward_traced";
    }
    return "?";
}

std::string_view embedded_asset(std::string_view name) { return headsplit_asset(name); }

BenchResult bench_one(const Config& config, const Inputs& in, const Weights& w, Mode mode, Stage stage, Backend& backend,
                      int repeat, const std::atomic<bool>* stop, double seconds) {
    Config c = config;
    c.mode = mode;
    if (mode != Mode::Flash) c.block = 0;
    Runner runner(c, in, w, backend);
    RunOptions options;
    options.record_values = stage == Stage::ForwardTraced;
    options.projections_only = stage == Stage::Projections;
    BenchResult r;
    r.preset = c.preset;
    r.tokens = c.num_tokens();
    r.backend = backend.name();
    r.mode = mode;
    r.stage = stage;
    runner.run(options);  // warm-up: uploads the constants, allocates the buffers
    std::vector<double> ms, gemm_ms;
    double timed_ms = 0;
    const auto enough = [&] { return (stop && *stop) || (seconds > 0 && timed_ms >= seconds * 1e3); };
    for (int i = 0; i < repeat && (i == 0 || !enough()); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const Trace t = runner.run(options);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        timed_ms += ms.back();
        double g = 0;
        std::int64_t matmuls = 0, dispatches = 0;
        double flops = 0;
        for (const Step& s : t.steps) {
            if (s.matmuls > 0) g += s.ms;
            matmuls += s.matmuls;
            dispatches += s.stats.dispatches;
            flops += s.flops;
        }
        gemm_ms.push_back(g);
        r.matmuls = matmuls;
        r.dispatches = dispatches;
        r.flops = flops;
    }
    const Spread whole = spread(ms);
    r.median_ms = whole.median;
    r.min_ms = whole.min;
    r.max_ms = whole.max;
    r.runs = static_cast<int>(ms.size());
    r.gemm_median_ms = spread(gemm_ms).median;
    r.limit_flops = necessary_flops(c);
    return r;
}

double necessary_flops(const Config& c) {
    const auto d = [](std::int64_t v) { return static_cast<double>(v); };
    const double B = d(c.batch), T = d(c.num_tokens()), S = d(c.num_keys());
    double flops = 2 * B * T * d(c.d_in) * d(c.d_out) + 2 * 2 * B * S * d(c.key_dim()) * d(c.kv_width());
    if (c.out_proj) flops += 2 * B * T * d(c.d_out) * d(c.d_out);
    const double attention = 2 * 2 * B * d(c.heads) * T * S * d(c.head_dim());
    const double forward = flops + (c.causal ? attention / 2 : attention);
    // The backward's: each product's two gradients, each as costly as the product.
    return c.backward ? 3 * forward : forward;
}

GemmLimit gemm_limit(const std::vector<BenchResult>& one_shape) {
    GemmLimit g;
    for (const BenchResult& r : one_shape)
        if (r.stage == Stage::Projections) g.sgemm_gflops = std::max(g.sgemm_gflops, r.gflops());
    if (g.sgemm_gflops <= 0) return g;
    for (const BenchResult& r : one_shape)
        if (r.stage == Stage::Forward && r.median_ms > 0)
            g.forward_fraction.emplace_back(r.mode, r.limit_flops / (r.median_ms * 1e6) / g.sgemm_gflops);
    return g;
}

std::string bench_json(const std::vector<BenchResult>& results, const std::string& extra) {
    nlohmann::json doc;
    doc["format"] = "headsplit-bench";
    doc["version"] = 1;
    nlohmann::json rows = nlohmann::json::array();
    for (const BenchResult& r : results)
        rows.push_back({{"preset", r.preset},
                        {"tokens", r.tokens},
                        {"backend", r.backend},
                        {"mode", mode_name(r.mode)},
                        {"stage", stage_name(r.stage)},
                        {"median_ms", r.median_ms},
                        {"min_ms", r.min_ms},
                        {"max_ms", r.max_ms},
                        {"matmuls", r.matmuls},
                        {"dispatches", r.dispatches},
                        {"gflops", r.gflops()},
                        {"gemm_median_ms", r.gemm_median_ms},
                        {"necessary_gflop", r.limit_flops / 1e9}});
    doc["results"] = rows;
    // The GEMM limit per (preset, tokens, backend): the SGEMM rate measured and each forward's
    // fraction of it.
    nlohmann::json limits = nlohmann::json::array();
    std::vector<std::vector<BenchResult>> shapes;
    for (const BenchResult& r : results) {
        auto same = std::find_if(shapes.begin(), shapes.end(), [&](const std::vector<BenchResult>& g) {
            return g.front().preset == r.preset && g.front().tokens == r.tokens && g.front().backend == r.backend;
        });
        if (same == shapes.end()) shapes.push_back({r});
        else same->push_back(r);
    }
    for (const std::vector<BenchResult>& g : shapes) {
        const GemmLimit lim = gemm_limit(g);
        if (lim.forward_fraction.empty()) continue;
        nlohmann::json fractions = nlohmann::json::object();
        for (const auto& [mode, f] : lim.forward_fraction) fractions[mode_name(mode)] = f;
        limits.push_back({{"preset", g.front().preset},
                          {"tokens", g.front().tokens},
                          {"backend", g.front().backend},
                          {"necessary_gflop", g.front().limit_flops / 1e9},
                          {"sgemm_gflops", lim.sgemm_gflops},
                          {"forward_fraction", fractions}});
    }
    doc["limits"] = limits;
    // The lesson's ratios, from the medians above: loop / split, split / fused and flash / split per
    // (preset, tokens, backend, stage).
    nlohmann::json ratios = nlohmann::json::array();
    auto median = [&](const BenchResult& like, Mode m) -> double {
        for (const BenchResult& r : results)
            if (r.preset == like.preset && r.tokens == like.tokens && r.backend == like.backend && r.stage == like.stage &&
                r.mode == m)
                return r.median_ms;
        return 0;
    };
    for (const BenchResult& r : results) {
        if (r.mode != Mode::Split) continue;
        const double loop = median(r, Mode::Loop), fused = median(r, Mode::Fused), flash = median(r, Mode::Flash);
        nlohmann::json q = {{"preset", r.preset}, {"tokens", r.tokens}, {"backend", r.backend}, {"stage", stage_name(r.stage)}};
        if (loop > 0) q["loop_over_split"] = loop / r.median_ms;
        if (fused > 0) q["split_over_fused"] = r.median_ms / fused;
        if (flash > 0) q["flash_over_split"] = flash / r.median_ms;
        if (q.size() > 4) ratios.push_back(q);
    }
    doc["ratios"] = ratios;
    if (!extra.empty()) doc["vs_torch"] = nlohmann::json::parse(extra);
    return doc.dump(2) + "\n";
}

}  // namespace headsplit
