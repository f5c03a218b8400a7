// The backward pass checked without PyTorch: against finite differences of the layer written
// here once more in double precision (loops, no backend), and loop = split = fused, CPU = GL.
// tests/oracle_backward.py checks every step's gradient against autograd.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "headsplit/backends/gl_backend.hpp"
#include "helpers.hpp"

using namespace headsplit;

namespace {

using Vec = std::vector<double>;

Vec to_double(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

// The layer's parameters and inputs in double, by the names the trace's gradients use.
using Params = std::map<std::string, Vec>;

Params params_of(const Config& c, const Inputs& in, const Weights& w) {
    Params p{{"x", to_double(in.x)}, {"w_query", to_double(w.w_query)}, {"w_key", to_double(w.w_key)},
             {"w_value", to_double(w.w_value)}};
    if (c.cross()) p["context"] = to_double(in.context);
    if (c.qkv_bias) p["b_query"] = to_double(w.b_query), p["b_key"] = to_double(w.b_key), p["b_value"] = to_double(w.b_value);
    if (c.out_proj) p["w_out"] = to_double(w.w_out), p["b_out"] = to_double(w.b_out);
    return p;
}

// rows [n, in] @ W[out, in]^T (+ b) in double.
Vec linear(const Vec& rows, std::int64_t n, std::int64_t in, const Vec& w, std::int64_t out, const Vec* b) {
    Vec y(static_cast<std::size_t>(n * out));
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t o = 0; o < out; ++o) {
            double s = b ? (*b)[static_cast<std::size_t>(o)] : 0.0;
            for (std::int64_t k = 0; k < in; ++k) s += rows[i * in + k] * w[o * in + k];
            y[static_cast<std::size_t>(i * out + o)] = s;
        }
    return y;
}

// L = sum(dout * output) of multi-head attention, straight from its definition.
double loss(const Config& c, const Inputs& in, const Params& p) {
    const std::int64_t B = c.batch, T = c.num_tokens(), S = c.num_keys(), Di = c.d_in, Dk = c.key_dim(), D = c.d_out;
    const std::int64_t H = c.heads, hd = c.head_dim(), KV = c.kv_width(), r = c.group_size();
    const auto bias = [&](const char* name) { return p.count(name) ? &p.at(name) : nullptr; };
    const Vec& kv_in = c.cross() ? p.at("context") : p.at("x");
    const Vec q = linear(p.at("x"), B * T, Di, p.at("w_query"), D, bias("b_query"));
    const Vec k = linear(kv_in, B * S, Dk, p.at("w_key"), KV, bias("b_key"));
    const Vec v = linear(kv_in, B * S, Dk, p.at("w_value"), KV, bias("b_value"));
    const std::vector<float> keep = c.dropout > 0 ? make_dropout_mask(c.seed, B * H * T * S, c.dropout) : std::vector<float>{};
    Vec ctx(static_cast<std::size_t>(B * T * D), 0.0);
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t t = 0; t < T; ++t) {
                const std::int64_t g = h / r;
                Vec w(static_cast<std::size_t>(S));
                double mx = -std::numeric_limits<double>::infinity();
                for (std::int64_t s = 0; s < S; ++s) {
                    const bool masked = (c.causal && s > t) || (c.padded() && in.key_padding_mask[b * S + s] != 0.0f);
                    double dot = 0;
                    for (std::int64_t e = 0; e < hd; ++e) dot += q[(b * T + t) * D + h * hd + e] * k[(b * S + s) * KV + g * hd + e];
                    w[s] = masked ? -std::numeric_limits<double>::infinity() : dot / std::sqrt(static_cast<double>(hd));
                    mx = std::max(mx, w[s]);
                }
                double sum = 0;
                for (double& x : w) sum += (x = std::exp(x - mx));
                for (std::int64_t s = 0; s < S; ++s) {
                    double a = w[s] / sum;
                    if (c.dropout > 0) a *= keep[((b * H + h) * T + t) * S + s] / (1.0 - c.dropout);
                    for (std::int64_t e = 0; e < hd; ++e) ctx[(b * T + t) * D + h * hd + e] += a * v[(b * S + s) * KV + g * hd + e];
                }
            }
    const Vec out = c.out_proj ? linear(ctx, B * T, D, p.at("w_out"), D, bias("b_out")) : ctx;
    double L = 0;
    for (std::size_t i = 0; i < out.size(); ++i) L += in.dout[i] * out[i];
    return L;
}

// The whole gradients a trace's backward ends with, by parameter name: loop mode's row blocks
// put together, fused mode's stacked dW_qkv cut apart.
std::map<std::string, std::vector<float>> final_grads(const Trace& tr) {
    const Config& c = tr.config;
    std::map<std::string, std::vector<float>> g;
    const auto put = [&](const std::string& name, const std::vector<float>& v, std::int64_t at, std::int64_t total) {
        std::vector<float>& dst = g[name];
        dst.resize(static_cast<std::size_t>(total));
        std::copy(v.begin(), v.end(), dst.begin() + at);
    };
    const std::int64_t D = c.d_out, KV = c.kv_width(), Di = c.d_in, Dk = c.key_dim();
    for (const Step& s : tr.steps) {
        if (s.op == Op::OutProjBack) g["w_out"] = s.find("dW_out")->values(), g["b_out"] = s.find("db_out")->values();
        if (s.op != Op::ProjectBack) continue;
        for (const TensorRecord& t : s.tensors) {
            const std::vector<float>& v = t.values();
            if (t.name == "d_x") g["x"] = v;
            else if (t.name == "d_context") g["context"] = v;
            else if (t.name == "dW_qkv" || t.name == "db_qkv") {
                const std::int64_t in = t.name == "dW_qkv" ? Di : 1;
                const std::string w = t.name == "dW_qkv" ? "w_" : "b_";
                g[w + "query"].assign(v.begin(), v.begin() + D * in);
                g[w + "key"].assign(v.begin() + D * in, v.begin() + (D + KV) * in);
                g[w + "value"].assign(v.begin() + (D + KV) * in, v.end());
            } else {
                const std::string name = (t.name[1] == 'W' ? "w_" : "b_") + t.name.substr(3);
                const std::int64_t in = t.name[1] == 'W' ? (name == "w_query" ? Di : Dk) : 1;
                const std::int64_t rows = name.find("query") != std::string::npos ? D : KV;
                if (s.head < 0) g[name] = v;
                else put(name, v, t.offset, rows * in);  // loop: head h's rows of the whole
            }
        }
    }
    return g;
}

Trace run_backward(Config c, Backend& be) {
    c.backward = true;
    return run(c, make_inputs(c), make_weights(c), be);
}

Config small(Mode mode) {
    Config c;
    c.tokens = {"the", "cat", "sleeps", "today"};
    c.d_in = 5, c.d_out = 8, c.heads = 4, c.mode = mode, c.seed = 3;
    return c;
}

}  // namespace

TEST_CASE("every gradient equals finite differences of the layer in double precision", "[backward]") {
    struct Variant {
        const char* name;
        void (*apply)(Config&);
    };
    const Variant v = GENERATE(values<Variant>({
        {"causal", [](Config&) {}},
        {"not causal, scale first", [](Config& c) { c.causal = false, c.scale_first = true; }},
        {"grouped-query, bias", [](Config& c) { c.kv_heads = 2, c.qkv_bias = true; }},
        {"multi-query, fused", [](Config& c) { c.kv_heads = 1, c.mode = Mode::Fused; }},
        {"flash, grouped, padded", [](Config& c) { c.mode = Mode::Flash, c.kv_heads = 2, c.set_sentences({{"a", "b", "c"}, {"d", "e"}}); }},
        {"flash, not causal, block 1", [](Config& c) { c.mode = Mode::Flash, c.causal = false, c.block = 1; }},
        {"cross-attention, loop", [](Config& c) { c.context = {{"le", "chat", "noir"}}, c.causal = false, c.mode = Mode::Loop; }},
        {"padded batch", [](Config& c) { c.set_sentences({{"the", "cat", "sleeps"}, {"a", "dog"}}); }},
        {"dropout, no output projection", [](Config& c) { c.dropout = 0.25, c.out_proj = false; }},
    }));
    INFO(v.name);
    Config c = small(Mode::Split);
    v.apply(c);
    c.backward = true;
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    auto cpu = make_cpu_backend();
    const Trace tr = run(c, in, w, *cpu);
    const auto grads = final_grads(tr);
    Params p = params_of(c, in, w);

    // The double layer is the engine's function: its loss equals the engine's output's.
    const Step* out = nullptr;
    for (const Step& s : tr.steps)
        if (!is_backward(s.op)) out = &s;
    double engine_loss = 0;
    for (std::size_t i = 0; i < in.dout.size(); ++i) engine_loss += in.dout[i] * out->result().values()[i];
    REQUIRE(std::abs(engine_loss - loss(c, in, p)) < 1e-4);

    REQUIRE(grads.size() == p.size());
    for (auto& [name, values] : p) {
        INFO(name);
        REQUIRE(grads.count(name));
        const std::vector<float>& g = grads.at(name);
        REQUIRE(g.size() == values.size());
        double worst = 0;
        for (std::size_t i = 0; i < values.size(); ++i) {
            const double h = 1e-5, keep = values[i];
            values[i] = keep + h;
            const double up = loss(c, in, p);
            values[i] = keep - h;
            const double down = loss(c, in, p);
            values[i] = keep;
            const double fd = (up - down) / (2 * h);
            worst = std::max(worst, std::abs(g[i] - fd) / std::max(1.0, std::abs(fd)));
        }
        CHECK(worst < 2e-5);
    }
}

TEST_CASE("loop, split and fused give the same gradients, on the CPU and on GL", "[backward][gl]") {
    const bool grouped = GENERATE(false, true);
    Config c = small(Mode::Split);
    if (grouped) c.kv_heads = 2, c.qkv_bias = true;
    auto cpu = make_cpu_backend();
    const auto split = final_grads(run_backward(c, *cpu));
    static std::unique_ptr<Backend> gl = make_gl_backend({MatmulKernel::Blocked, true});
    for (Mode m : {Mode::Loop, Mode::Fused, Mode::Flash, Mode::Split}) {
        for (Backend* be : {cpu.get(), gl.get()}) {
            if (m == Mode::Split && be == cpu.get()) continue;
            Config other = c;
            other.mode = m;
            other.backend = be == gl.get() ? BackendKind::Gl : BackendKind::Cpu;
            INFO(mode_name(m) << " on " << be->name() << (grouped ? ", grouped" : ""));
            const auto got = final_grads(run_backward(other, *be));
            REQUIRE(got.size() == split.size());
            for (const auto& [name, want] : split) {
                INFO(name);
                const std::vector<float>& v = got.at(name);
                REQUIRE(v.size() == want.size());
                for (std::size_t i = 0; i < v.size(); ++i) CHECK(std::abs(v[i] - want[i]) <= 1e-5 * std::max(1.0f, std::abs(want[i])));
            }
        }
    }
}

TEST_CASE("the backward's memory estimate is what a run allocates", "[backward]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused, Mode::Flash);
    Config c = small(mode);
    c.backward = true, c.qkv_bias = true, c.kv_heads = 2;
    const CheckedConfig ck = check_config(c, kNoWords);
    Config forward_only = c;
    forward_only.backward = false;
    CHECK(ck.memory.backend_bytes > check_config(forward_only, kNoWords).memory.backend_bytes);
    auto cpu = make_cpu_backend();
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    Runner runner(ck, in, w, *cpu);
    const Trace tr = runner.run();
    CHECK(static_cast<double>(cpu->used_bytes()) == ck.memory.backend_bytes);
    CHECK(static_cast<double>(tr.value_bytes()) == ck.memory.trace_bytes);
    // A run that records nothing (the bench's) ends with the same d_x, to rounding (flash's
    // tiles then run in one call, a shared key/value head's sums in another order).
    const Trace quiet = runner.run({false, false});
    const std::vector<float>& a = quiet.steps.back().tensors.back().values();
    const std::vector<float>& b = tr.steps.back().tensors.back().values();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - b[i]) <= 1e-5f * std::max(1.0f, std::abs(b[i])));
}

TEST_CASE("flash's backward holds no T x T grid", "[backward]") {
    // T = 512, 4 heads: a score grid is 4 MiB a tensor; split's backward holds several.
    Config c;
    c.set_sentences({synthetic_tokens(512)});
    c.d_in = 16, c.d_out = 32, c.heads = 4, c.backward = true;
    const double grid = 4.0 * c.heads * 512 * 512;
    c.mode = Mode::Split;
    const double split = check_config(c, kNoWords).memory.backend_bytes;
    c.mode = Mode::Flash;
    const double flash = check_config(c, kNoWords).memory.backend_bytes;
    CHECK(split > 4 * grid);
    CHECK(flash < grid);
}
