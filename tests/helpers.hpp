#pragma once
// Shared helpers for the engine tests.
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/teaching/narration.hpp"

namespace headsplit::test {

// A generated test configuration: shape and switches.
struct Case {
    std::int64_t T, d_in, d_out, heads;
    bool causal = true;
    double dropout = 0.0;
    bool qkv_bias = false, out_proj = true, scale_first = false;
};

inline std::ostream& operator<<(std::ostream& os, const Case& k) {
    return os << "T=" << k.T << " D_in=" << k.d_in << " D_out=" << k.d_out << " heads=" << k.heads
              << " causal=" << k.causal << " dropout=" << k.dropout << " qkv_bias=" << k.qkv_bias
              << " out_proj=" << k.out_proj << " scale_first=" << k.scale_first;
}

// The Config of case `k` in `mode`, with synthetic tokens and a seed of its own.
inline Config config_of(const Case& k, Mode mode) {
    Config c;
    c.tokens = synthetic_tokens(k.T);
    c.d_in = k.d_in;
    c.d_out = k.d_out;
    c.heads = k.heads;
    c.causal = k.causal;
    c.dropout = k.dropout;
    c.qkv_bias = k.qkv_bias;
    c.out_proj = k.out_proj;
    c.scale_first = k.scale_first;
    c.seed = static_cast<std::uint64_t>(k.T * 1000 + k.d_out);
    c.mode = mode;
    return c;
}

// Runs `c` on the CPU backend with its generated inputs and weights, and narrates the trace
// as every front end does.
inline Trace run_cpu(const Config& c) {
    auto backend = make_cpu_backend();
    Trace trace = run(c, make_inputs(c), make_weights(c), *backend);
    narrate(trace);
    return trace;
}

// The steps of `trace` as "op" or "op@head", for comparing step lists.
inline std::vector<std::string> op_list(const Trace& trace) {
    std::vector<std::string> ops;
    for (const auto& s : trace.steps)
        ops.push_back(std::string(op_name(s.op)) + (s.head >= 0 ? "@" + std::to_string(s.head) : ""));
    return ops;
}

// Largest |a - b| over finite pairs; +inf when the shapes differ or an infinity or NaN
// does not line up.
inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
        if (std::isinf(a[i]) || std::isinf(b[i])) {
            if (a[i] != b[i]) return INFINITY;
            continue;
        }
        worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    }
    return worst;
}

// What `f` refuses with: the ConfigError's message, checked to be one line; "" when it runs.
template <class F>
std::string refusal_of(F f) {
    try {
        f();
    } catch (const ConfigError& e) {
        const std::string msg = e.what();
        CHECK(msg.find('\n') == std::string::npos);
        return msg;
    }
    return "";
}

// Step `op` (optionally of head `head`) of `trace`; nullptr when absent.
inline const Step* find_step(const Trace& trace, Op op, int head = -1) {
    for (const auto& s : trace.steps)
        if (s.op == op && s.head == head) return &s;
    return nullptr;
}

// Head h's [T, T] (or [T, hd]) block of a batched [1, H, T, X] record, row-major.
inline std::vector<float> head_block(const TensorRecord& t, std::int64_t h) {
    const std::int64_t block = t.shape[2] * t.shape[3];
    const std::vector<float>& v = t.values();
    return {v.begin() + h * block, v.begin() + (h + 1) * block};
}

}  // namespace headsplit::test
