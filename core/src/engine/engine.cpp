// The engine's entry points: a Runner runs a checked configuration on a backend again and
// again (forward.cpp does the pass, a Recorder observes it); plan() and matmul_counts() walk
// it with shapes only (shape_walk.cpp). The budgets are in budgets.cpp.
#include "headsplit/engine/engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "forward.hpp"
#include "headsplit/base/numbers.hpp"
#include "recorder.hpp"
#include "shape_walk.hpp"

namespace headsplit {

namespace {

void check_sizes(const Config& c, const Inputs& in, const Weights& w) {
    auto expect = [](const std::vector<float>& v, std::int64_t n, const char* what) {
        if (static_cast<std::int64_t>(v.size()) != n)
            throw ConfigError(std::string(what) + " holds " + std::to_string(v.size()) + " numbers, expected " +
                              std::to_string(n));
    };
    const std::int64_t kv = c.kv_width();
    expect(in.x, c.batch * c.num_tokens() * c.d_in, "x");
    expect(in.context, c.cross() ? c.batch * c.num_keys() * c.key_dim() : 0, "context");
    expect(in.key_padding_mask, c.padded() ? c.batch * c.num_keys() : 0, "key_padding_mask");
    expect(in.dout, c.backward ? c.batch * c.num_tokens() * c.d_out : 0, "dout");
    expect(w.w_query, c.d_out * c.d_in, "w_query");
    expect(w.w_key, kv * c.key_dim(), "w_key");
    expect(w.w_value, kv * c.key_dim(), "w_value");
    if (c.qkv_bias) {
        expect(w.b_query, c.d_out, "b_query");
        expect(w.b_key, kv, "b_key");
        expect(w.b_value, kv, "b_value");
    }
    if (c.out_proj) {
        expect(w.w_out, c.d_out * c.d_out, "w_out");
        expect(w.b_out, c.d_out, "b_out");
    }
}

// The forward's result has no NaN or infinity: finite but huge weights or inputs (a
// checkpoint's c_attn at 1e30) overflow float32 on the way, and such a trace would be numbers
// that mean nothing (in the JSON, null, which reads as a masked score).
void require_finite(const TensorRecord& out) {
    if (!out.has_values()) return;
    const std::vector<float>& v = out.values();
    const auto bad = std::find_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); });
    if (bad == v.end()) return;
    Shape at;
    unravel(out.shape, bad - v.begin(), at);
    const auto count = std::count_if(bad, v.end(), [](float x) { return !std::isfinite(x); });
    throw std::runtime_error("the result, " + out.name + ", holds " + std::to_string(count) + " values that are not finite (" +
                             format_number(*bad) + " at " + shape_str(at) +
                             "): the numbers overflowed float32 on the way; the weights or the inputs are too large");
}

}  // namespace

struct Runner::State {
    Config config;
    const Inputs& inputs;
    const Weights& weights;
    Backend& backend;
    detail::Resources resources;
};

Runner::Runner(const CheckedConfig& checked, const Inputs& inputs, const Weights& weights, Backend& backend) {
    checked.require_budget();
    check_sizes(checked.config, inputs, weights);
    state_ = std::make_unique<State>(State{checked.config, inputs, weights, backend, {}});
}

Runner::Runner(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend)
    : Runner(check_config(config, kNoWords), inputs, weights, backend) {}

Runner::~Runner() {
    // Only this runner's buffers go back: other runners on the same backend keep theirs.
    try {
        state_->backend.release(state_->resources.all());
    } catch (...) {  // a GL error while releasing must not escape a destructor
    }
}

Trace Runner::run(const RunOptions& options) {
    State& st = *state_;
    Trace trace;
    trace.config = st.config;
    if (options.record_values && options.copy_inputs) {
        trace.inputs = st.inputs;
        trace.weights = st.weights;
    }
    st.resources.rewind();
    detail::Recorder recorder(st.backend, trace.steps, options.record_values);
    detail::run_forward(st.config, st.inputs, st.weights, st.backend, st.resources, recorder, detail::Work::Compute,
                        options.projections_only);
    if (!options.record_values && !trace.steps.empty()) {
        // The result, read back once at the end.
        TensorRecord& out = trace.steps.back().tensors.back();
        std::vector<float> buffer;
        st.backend.read(out.buffer, buffer);
        out.data = gather(buffer, TensorDesc{out.buffer, out.offset, out.shape, out.strides});
    }
    if (!options.projections_only && !trace.steps.empty()) require_finite(trace.steps.back().tensors.back());
    st.resources.reload = false;
    return trace;
}

void Runner::reload() { state_->resources.reload = true; }

namespace {

// The last record named `name` in the steps of `pass` (backward or not), or nullptr.
const TensorRecord* last_record(const Trace& trace, const std::string& name, bool backward) {
    for (auto s = trace.steps.rbegin(); s != trace.steps.rend(); ++s) {
        if (is_backward(s->op) != backward) continue;
        for (auto t = s->tensors.rbegin(); t != s->tensors.rend(); ++t)
            if (t->name == name) return &*t;
    }
    return nullptr;
}

// The first `count` values of the buffer that `t` lies in: a gradient that heads fill in row
// blocks (loop mode) is recorded block by block, each a window on the whole.
std::vector<float> whole_buffer(const TensorRecord* t, std::int64_t count, Backend& backend) {
    if (t == nullptr) return {};
    std::vector<float> buffer;
    backend.read(t->buffer, buffer);
    if (static_cast<std::int64_t>(buffer.size()) < count) throw std::logic_error("a gradient's buffer is too small: " + t->name);
    buffer.resize(static_cast<std::size_t>(count));
    return buffer;
}

}  // namespace

Gradients read_gradients(const Trace& trace, Backend& backend) {
    const Config& c = trace.config;
    if (!c.backward) throw std::logic_error("read_gradients: the trace has no backward pass");
    const std::int64_t D = c.d_out, Di = c.d_in, Dk = c.key_dim(), KV = c.kv_width();
    const auto grad = [&](const char* name, std::int64_t count) {
        return whole_buffer(last_record(trace, name, true), count, backend);
    };
    Gradients g;
    Weights& w = g.weights;
    if (c.mode == Mode::Fused) {
        const std::vector<float> qkv = grad("dW_qkv", (D + 2 * KV) * Di);
        const auto rows = [&](const std::vector<float>& all, std::int64_t first, std::int64_t n, std::int64_t width) {
            return std::vector<float>(all.begin() + first * width, all.begin() + (first + n) * width);
        };
        w.w_query = rows(qkv, 0, D, Di), w.w_key = rows(qkv, D, KV, Di), w.w_value = rows(qkv, D + KV, KV, Di);
        if (c.qkv_bias) {
            const std::vector<float> b = grad("db_qkv", D + 2 * KV);
            w.b_query = rows(b, 0, D, 1), w.b_key = rows(b, D, KV, 1), w.b_value = rows(b, D + KV, KV, 1);
        }
    } else {
        w.w_query = grad("dW_query", D * Di), w.w_key = grad("dW_key", KV * Dk), w.w_value = grad("dW_value", KV * Dk);
        if (c.qkv_bias) w.b_query = grad("db_query", D), w.b_key = grad("db_key", KV), w.b_value = grad("db_value", KV);
    }
    if (c.out_proj) w.w_out = grad("dW_out", D * D), w.b_out = grad("db_out", D);
    g.dx = grad("d_x", c.batch * c.num_tokens() * Di);
    if (c.cross()) g.d_context = grad("d_context", c.batch * c.num_keys() * Dk);
    return g;
}

std::vector<float> read_tensor(const Trace& trace, const std::string& name, Backend& backend) {
    const TensorRecord* t = last_record(trace, name, false);
    if (t == nullptr) t = last_record(trace, name, true);
    if (t == nullptr) return {};
    if (t->has_values()) return t->values();
    std::vector<float> buffer;
    backend.read(t->buffer, buffer);
    return gather(buffer, TensorDesc{t->buffer, t->offset, t->shape, t->strides});
}

Trace run(const CheckedConfig& config, const Inputs& inputs, const Weights& weights, Backend& backend,
          const RunOptions& options) {
    require_time(config, backend);
    return Runner(config, inputs, weights, backend).run(options);
}

Trace run(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend) {
    return run(check_config(config, kNoWords), inputs, weights, backend);
}

Trace plan(const CheckedConfig& checked) {
    detail::ShapeOnlyBackend backend;
    return detail::walk(checked.config, backend);
}

Trace plan(const Config& config) { return plan(check_config(config, kNoWords)); }

std::vector<ModeCount> matmul_counts(const Config& c) {
    std::vector<ModeCount> out;
    for (Mode m : {Mode::Loop, Mode::Split, Mode::Fused}) {
        ModeCount n;
        n.mode = m;
        Config other = c;
        other.mode = m;
        other.block = 0;  // a flash run's tile block means nothing to the others
        try {
            // The refusals check_config would give, without its memory walk: only the
            // counts are wanted here (this runs for every change in the window).
            validate(other);
            detail::ShapeOnlyBackend backend;
            const Trace t = detail::walk(other, backend);
            n.steps = static_cast<std::int64_t>(t.steps.size());
            for (const Step& s : t.steps) {
                n.total += s.matmuls;
                if (s.op == Op::Project) n.projections += s.matmuls;
            }
        } catch (const ConfigError& e) {
            n.refused = e.what();
        }
        out.push_back(std::move(n));
    }
    return out;
}

}  // namespace headsplit
