#include "headsplit/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "headsplit/narration.hpp"

namespace headsplit {

namespace {

using Clock = std::chrono::steady_clock;

// A tensor on the backend together with the trace link to where it was recorded.
struct Val {
    TensorDesc t;
    Source src;
};

// Builds one Step at a time: times the compute between begin() and computed(), then reads
// each backend buffer back at most once for the tensors the step records. The words of each
// step come from the narration module, keyed by its op, the config and the head.
class Recorder {
public:
    Recorder(const Config& config, Backend& backend, std::vector<Step>& steps, bool values)
        : config_(config), backend_(backend), steps_(steps), values_(values) {}

    void begin(Op op, int head = -1) {
        backend_.finish();
        backend_.take_stats();
        step_ = Step{};
        step_.index = static_cast<int>(steps_.size());
        step_.op = op;
        step_.head = head;
        readback_.clear();
        start_ = Clock::now();
    }

    void computed(std::int64_t matmuls, double flops) {
        backend_.finish();
        step_.ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
        step_.stats = backend_.take_stats();
        step_.matmuls = matmuls;
        step_.flops = flops;
    }

    // Records `t` as tensor `name` of the step, made from `from`; returns the link to it.
    Val tensor(const std::string& name, const TensorDesc& t, Storage storage, std::vector<Source> from) {
        TensorRecord r{name, t.shape, t.strides, t.offset, t.buffer, storage, {}, std::move(from)};
        if (values_) {
            auto it = readback_.find(t.buffer);
            if (it == readback_.end()) {
                it = readback_.emplace(t.buffer, std::vector<float>()).first;
                backend_.read(t.buffer, it->second);
            }
            r.data = gather(it->second, t);
        }
        step_.tensors.push_back(std::move(r));
        return {t, Source::of_step(step_.index, name)};
    }

    void end() {
        Narration words = narrate(step_.op, config_, step_.head);
        step_.code = std::move(words.code);
        step_.explain = std::move(words.explain);
        steps_.push_back(std::move(step_));
        readback_.clear();
    }

private:
    const Config& config_;
    Backend& backend_;
    std::vector<Step>& steps_;
    const bool values_;
    Step step_;
    std::map<int, std::vector<float>> readback_;
    Clock::time_point start_;
};

// The buffers of one configuration on one backend. A forward pass makes the same sequence
// of uploads and allocations every time, so the i-th of a later run reuses the i-th buffer
// of the first: constants (x, weights, the dropout mask) are uploaded once, activations are
// allocated once.
struct Resources {
    std::vector<int> constants, activations;
    std::size_t next_constant = 0, next_activation = 0;
    void rewind() { next_constant = next_activation = 0; }
    std::vector<int> all() const {
        std::vector<int> ids(constants);
        ids.insert(ids.end(), activations.begin(), activations.end());
        return ids;
    }
};

// What a forward pass does with numbers. Compute: run every op (a Runner). Shapes only:
// walk the same steps with no numbers at all (plan() and the memory estimate); constants
// such as the dropout mask are not even drawn.
enum class Work { Compute, ShapesOnly };

// One forward pass. Names follow the teaching code: queries, keys, values, attn_scores,
// attn_weights, context_vec.
class Forward {
public:
    Forward(const Config& c, const Inputs& in, const Weights& w, Backend& be, Resources& res, std::vector<Step>& steps,
            Work work, bool record_values)
        : c_(c), in_(in), w_(w), be_(be), res_(res), rec_(c, be, steps, record_values), work_(work),
          B(c.batch), T(c.num_tokens()), Di(c.d_in), D(c.d_out), H(c.heads), hd(c.head_dim()) {}

    // Q, K, V only (the bench's "projections" stage): one matmul each, one fused, or 3 per head.
    void run_projections() {
        input();
        if (c_.mode == Mode::Fused) project_fused();
        else if (c_.mode == Mode::Split) project_split();
        else {
            const QkvLinears w = upload_qkv();
            for (std::int64_t h = 0; h < H; ++h) project_head(h, w);
        }
    }

    void run() {
        input();
        Val ctx;
        if (c_.mode == Mode::Loop) {
            ctx = loop_heads();
        } else {
            Qkv qkv = c_.mode == Mode::Fused ? project_fused() : project_split();
            qkv = heads_view(qkv);
            ctx = attention(qkv, -1);
            ctx = merge(ctx);
        }
        if (c_.out_proj) out_proj(ctx);
    }

private:
    struct Qkv {
        Val q, k, v;
    };

    // An nn.Linear on the backend: weight [out, in] and, when present, bias [out], with the
    // names of the weights they hold (the trace links to them).
    struct Linear {
        TensorDesc w, b;
        bool has_bias = false;
        std::string w_name, b_name;
        const TensorDesc* bias() const { return has_bias ? &b : nullptr; }
        std::vector<Source> links(const Source& input) const {
            std::vector<Source> from{input, Source::of_weight(w_name)};
            if (has_bias) from.push_back(Source::of_weight(b_name));
            return from;
        }
        // Head h's share: rows h*hd .. (h+1)*hd-1 of the weight (columns of W in x @ W)
        // and the same entries of the bias. No copy: a window on the same buffers.
        Linear head(std::int64_t h, std::int64_t hd) const {
            const std::int64_t in = w.shape[1];
            return {TensorDesc{w.buffer, h * hd * in, {hd, in}, {in, 1}}, TensorDesc{b.buffer, h * hd, {hd}, {1}},
                    has_bias, w_name, b_name};
        }
    };

    Linear upload_linear(const char* w_name, const char* b_name, std::int64_t out, std::int64_t in) {
        const std::vector<float>& w = *w_.find(w_name);
        const std::vector<float>& b = *w_.find(b_name);
        const bool has_bias = std::string(b_name) == "b_out" ? c_.out_proj : c_.qkv_bias;
        Linear l{contiguous(upload_made(out * in, [&] { return w; }), {out, in}), TensorDesc{}, has_bias, w_name,
                 b_name};
        if (l.has_bias) l.b = contiguous(upload_made(out, [&] { return b; }), {out});
        return l;
    }

    // A constant: made and uploaded on the first run only (made not at all for a shapes-only
    // walk, which needs only its size).
    template <class Make>
    int upload_made(std::int64_t elements, Make make) {
        if (res_.next_constant < res_.constants.size()) return res_.constants[res_.next_constant++];
        const int id = be_.create_buffer(elements);
        if (work_ == Work::Compute) {
            const std::vector<float> data = make();
            be_.write(id, data);
        }
        res_.constants.push_back(id);
        ++res_.next_constant;
        return id;
    }
    // An activation buffer: allocated on the first run, reused after.
    int alloc(const Shape& shape) {
        if (res_.next_activation < res_.activations.size()) return res_.activations[res_.next_activation++];
        const int id = be_.create_buffer(numel(shape));
        res_.activations.push_back(id);
        ++res_.next_activation;
        return id;
    }

    // A [B, T, n] tensor looked at as the 2-D [B*T, n] matrix the projection multiplies.
    static TensorDesc rows(const TensorDesc& t) { return view(t, {t.shape[0] * t.shape[1], t.shape[2]}); }

    // Records queries, keys and values made from (per tensor) `from`.
    Qkv record_qkv(const TensorDesc& q, const TensorDesc& k, const TensorDesc& v, Storage storage,
                   const std::vector<Source>& qf, const std::vector<Source>& kf, const std::vector<Source>& vf) {
        return {rec_.tensor("queries", q, storage, qf), rec_.tensor("keys", k, storage, kf),
                rec_.tensor("values", v, storage, vf)};
    }

    // ---- step 0: x [B, T, D_in] -----------------------------------------------------
    void input() {
        rec_.begin(Op::Input);
        const TensorDesc x = contiguous(upload_made(B * T * Di, [&] { return in_.x; }), {B, T, Di});
        rec_.computed(0, 0);
        x_ = rec_.tensor("x", x, Storage::New, {});
        rec_.end();
    }

    struct QkvLinears {
        Linear q, k, v;
    };
    QkvLinears upload_qkv() {
        return {upload_linear("w_query", "b_query", D, Di), upload_linear("w_key", "b_key", D, Di),
                upload_linear("w_value", "b_value", D, Di)};
    }

    // Three matmuls x @ W^T into new [B, T, width] tensors, counted and recorded (the caller
    // opens and closes the step): split mode with the whole weights, loop mode with a head's.
    Qkv project_three(const QkvLinears& w, std::int64_t width) {
        const auto fresh = [&] { return contiguous(alloc({B, T, width}), {B, T, width}); };
        const TensorDesc q = fresh(), k = fresh(), v = fresh();
        be_.matmul(rows(x_.t), w.q.w, true, w.q.bias(), rows(q));
        be_.matmul(rows(x_.t), w.k.w, true, w.k.bias(), rows(k));
        be_.matmul(rows(x_.t), w.v.w, true, w.v.bias(), rows(v));
        rec_.computed(3, 3 * 2.0 * B * T * Di * width);
        return record_qkv(q, k, v, Storage::New, w.q.links(x_.src), w.k.links(x_.src), w.v.links(x_.src));
    }

    // ---- step 1 (split): Q, K, V = x @ W^T, one D_in x D_out matmul each ---------------
    Qkv project_split() {
        const QkvLinears w = upload_qkv();
        rec_.begin(Op::Project);
        const Qkv t = project_three(w, D);
        rec_.end();
        return t;
    }

    // ---- steps 1-2 (fused): qkv = x @ W_qkv^T, one D_in x 3*D_out matmul, then chunk ----
    Qkv project_fused() {
        // W_qkv is W_query, W_key, W_value stacked row-wise ([3*D_out, D_in] in nn.Linear layout).
        auto stack = [](const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v) {
            std::vector<float> all(q);
            all.insert(all.end(), k.begin(), k.end());
            all.insert(all.end(), v.begin(), v.end());
            return all;
        };
        const TensorDesc w =
            contiguous(upload_made(3 * D * Di, [&] { return stack(w_.w_query, w_.w_key, w_.w_value); }), {3 * D, Di});
        TensorDesc b;
        if (c_.qkv_bias)
            b = contiguous(upload_made(3 * D, [&] { return stack(w_.b_query, w_.b_key, w_.b_value); }), {3 * D});
        rec_.begin(Op::Project);
        const TensorDesc qkv = contiguous(alloc({B, T, 3 * D}), {B, T, 3 * D});
        be_.matmul(rows(x_.t), w, true, c_.qkv_bias ? &b : nullptr, rows(qkv));
        rec_.computed(1, 2.0 * B * T * Di * 3 * D);
        std::vector<Source> from{x_.src, Source::of_weight("w_query"), Source::of_weight("w_key"),
                                 Source::of_weight("w_value")};
        if (c_.qkv_bias)
            for (const char* bias : {"b_query", "b_key", "b_value"}) from.push_back(Source::of_weight(bias));
        const Val whole = rec_.tensor("qkv", qkv, Storage::New, from);
        rec_.end();

        rec_.begin(Op::Split);
        rec_.computed(0, 0);
        const Qkv t = record_qkv(narrow_last(qkv, 0, D), narrow_last(qkv, D, D), narrow_last(qkv, 2 * D, D),
                                 Storage::View, {whole.src}, {whole.src}, {whole.src});
        rec_.end();
        return t;
    }

    // ---- view [B,T,D_out] -> [B,T,H,hd], then transpose -> [B,H,T,hd] -----------------
    Qkv heads_view(const Qkv& in) {
        const Shape split_shape{B, T, H, hd};
        rec_.begin(Op::View);
        rec_.computed(0, 0);
        const Qkv viewed = record_qkv(view(in.q.t, split_shape), view(in.k.t, split_shape), view(in.v.t, split_shape),
                                      Storage::View, {in.q.src}, {in.k.src}, {in.v.src});
        rec_.end();

        rec_.begin(Op::Transpose);
        rec_.computed(0, 0);
        const Qkv t = record_qkv(transpose(viewed.q.t, 1, 2), transpose(viewed.k.t, 1, 2), transpose(viewed.v.t, 1, 2),
                                 Storage::View, {viewed.q.src}, {viewed.k.src}, {viewed.v.src});
        rec_.end();
        return t;
    }

    // ---- scores, mask, scale, softmax, dropout, context: for all heads (head = -1) or one
    // head (loop mode). q, k, v: [..., T, hd]. Returns context_vec [..., T, hd].
    Val attention(const Qkv& t, int head) {
        const std::int64_t heads_here = head < 0 ? H : 1;
        Shape tt = t.q.t.shape;
        tt.back() = T;  // [..., T, T]

        rec_.begin(Op::Scores, head);
        const TensorDesc grid = contiguous(alloc(tt), tt);
        be_.matmul(t.q.t, t.k.t, true, nullptr, grid);
        rec_.computed(1, 2.0 * B * heads_here * T * T * hd);
        Val scores = rec_.tensor("attn_scores", grid, Storage::New, {t.q.src, t.k.src});
        rec_.end();

        if (c_.scale_first) {
            scores = scale(scores, head);
            scores = mask(scores, head);
        } else {
            scores = mask(scores, head);
            scores = scale(scores, head);
        }

        rec_.begin(Op::Softmax, head);
        const TensorDesc probs = contiguous(alloc(tt), tt);
        be_.softmax(scores.t, probs);
        rec_.computed(0, 0);
        Val weights = rec_.tensor("attn_weights", probs, Storage::New, {scores.src});
        rec_.end();

        if (c_.dropout > 0) weights = dropout(weights, head);

        rec_.begin(Op::Context, head);
        Shape ctx_shape = tt;
        ctx_shape.back() = hd;
        const TensorDesc ctx = contiguous(alloc(ctx_shape), ctx_shape);
        be_.matmul(weights.t, t.v.t, false, nullptr, ctx);
        rec_.computed(1, 2.0 * B * heads_here * T * T * hd);
        const Val out = rec_.tensor("context_vec", ctx, Storage::New, {weights.src, t.v.src});
        rec_.end();
        return out;
    }

    Val mask(const Val& scores, int head) {
        if (!c_.causal) return scores;
        rec_.begin(Op::Mask, head);
        be_.causal_mask(scores.t);
        rec_.computed(0, 0);
        const Val out = rec_.tensor("attn_scores", scores.t, Storage::InPlace, {scores.src});
        rec_.end();
        return out;
    }

    Val scale(const Val& scores, int head) {
        rec_.begin(Op::Scale, head);
        be_.scale(scores.t, static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd))));
        rec_.computed(0, 0);
        const Val out = rec_.tensor("attn_scores", scores.t, Storage::InPlace, {scores.src});
        rec_.end();
        return out;
    }

    Val dropout(const Val& weights, int head) {
        // The mask is cut from one [B, H, T, T] draw, so loop mode's heads drop the same cells
        // as the batched modes. It is drawn whenever the pass computes, whether or not values
        // are recorded.
        const TensorDesc keep_mask = contiguous(upload_made(numel(weights.t.shape), [&] {
            const std::int64_t per_head = T * T;
            std::vector<float> keep_all = make_dropout_mask(c_.seed, B * H * per_head, c_.dropout);
            if (head < 0) return keep_all;
            std::vector<float> keep;
            for (std::int64_t b = 0; b < B; ++b) {
                auto first = keep_all.begin() + (b * H + head) * per_head;
                keep.insert(keep.end(), first, first + per_head);
            }
            return keep;
        }), weights.t.shape);
        rec_.begin(Op::Dropout, head);
        const TensorDesc out = contiguous(alloc(weights.t.shape), weights.t.shape);
        be_.multiply(weights.t, keep_mask, static_cast<float>(1.0 / (1.0 - c_.dropout)), out);
        rec_.computed(0, 0);
        const Val mask_rec = rec_.tensor("dropout_mask", keep_mask, Storage::New, {});
        const Val result = rec_.tensor("attn_weights", out, Storage::New, {weights.src, mask_rec.src});
        rec_.end();
        return result;
    }

    // ---- transpose back [B,H,T,hd] -> [B,T,H,hd], then merge (copy) -> [B,T,D_out] ------
    Val merge(const Val& ctx) {
        rec_.begin(Op::TransposeBack);
        rec_.computed(0, 0);
        const Val back = rec_.tensor("context_vec", transpose(ctx.t, 1, 2), Storage::View, {ctx.src});
        rec_.end();

        rec_.begin(Op::Merge);
        const int buf = alloc({B, T, D});
        be_.copy(back.t, contiguous(buf, back.t.shape));
        rec_.computed(0, 0);
        const Val merged = rec_.tensor("context_vec", contiguous(buf, {B, T, D}), Storage::Copy, {back.src});
        rec_.end();
        return merged;
    }

    // ---- loop mode: per head h, three [D_in, hd] matmuls and its own attention; concat ---
    // Head h's three small projections (loop mode).
    Qkv project_head(std::int64_t h, const QkvLinears& w) {
        rec_.begin(Op::Project, static_cast<int>(h));
        const Qkv t = project_three({w.q.head(h, hd), w.k.head(h, hd), w.v.head(h, hd)}, hd);
        rec_.end();
        return t;
    }

    Val loop_heads() {
        const QkvLinears w = upload_qkv();
        std::vector<Val> outputs;
        for (std::int64_t h = 0; h < H; ++h) outputs.push_back(attention(project_head(h, w), static_cast<int>(h)));

        rec_.begin(Op::Concat);
        const int buf = alloc({B, T, D});
        std::vector<Source> from;  // head h's output is from[h]
        for (std::int64_t h = 0; h < H; ++h) {
            be_.copy(outputs[h].t, TensorDesc{buf, h * hd, {B, T, hd}, {T * D, D, 1}});
            from.push_back(outputs[h].src);
        }
        rec_.computed(0, 0);
        const Val merged = rec_.tensor("context_vec", contiguous(buf, {B, T, D}), Storage::Copy, from);
        rec_.end();
        return merged;
    }

    // ---- output projection [B,T,D_out] @ W_out^T + b_out ------------------------------
    void out_proj(const Val& ctx) {
        const Linear w = upload_linear("w_out", "b_out", D, D);
        rec_.begin(Op::OutProj);
        const TensorDesc out = contiguous(alloc({B, T, D}), {B, T, D});
        be_.matmul(rows(ctx.t), w.w, true, w.bias(), rows(out));
        rec_.computed(1, 2.0 * B * T * D * D);
        rec_.tensor("output", out, Storage::New, w.links(ctx.src));
        rec_.end();
    }

    const Config& c_;
    const Inputs& in_;
    const Weights& w_;
    Backend& be_;
    Resources& res_;
    Recorder rec_;
    const Work work_;
    const std::int64_t B, T, Di, D, H, hd;
    Val x_;
};

void check_sizes(const Config& c, const Inputs& in, const Weights& w) {
    auto expect = [](const std::vector<float>& v, std::int64_t n, const char* what) {
        if (static_cast<std::int64_t>(v.size()) != n)
            throw ConfigError(std::string(what) + " holds " + std::to_string(v.size()) + " numbers, expected " +
                              std::to_string(n));
    };
    expect(in.x, c.batch * c.num_tokens() * c.d_in, "x");
    expect(w.w_query, c.d_out * c.d_in, "w_query");
    expect(w.w_key, c.d_out * c.d_in, "w_key");
    expect(w.w_value, c.d_out * c.d_in, "w_value");
    if (c.qkv_bias) {
        expect(w.b_query, c.d_out, "b_query");
        expect(w.b_key, c.d_out, "b_key");
        expect(w.b_value, c.d_out, "b_value");
    }
    if (c.out_proj) {
        expect(w.w_out, c.d_out * c.d_out, "w_out");
        expect(w.b_out, c.d_out, "b_out");
    }
}

// Hands out buffer ids, counts their sizes and computes nothing: the engine's walk through
// the steps, shapes only.
class ShapeOnlyBackend final : public Backend {
public:
    const char* name() const override { return "none"; }
    int create_buffer(std::int64_t elements) override {
        elements_ += elements;
        sizes_.push_back(elements);
        return next_++;
    }
    std::int64_t size_of(int id) const { return id >= 0 && id < next_ ? sizes_[static_cast<std::size_t>(id)] : 0; }
    void write(int, const std::vector<float>&) override {}
    void read(int, std::vector<float>& out) override { out.clear(); }
    void release_buffers() override {}
    void release(const std::vector<int>&) override {}
    std::int64_t held_bytes() const override { return 0; }
    std::int64_t used_bytes() const override { return 0; }
    void matmul(const TensorDesc&, const TensorDesc&, bool, const TensorDesc*, const TensorDesc&) override {}
    void causal_mask(const TensorDesc&) override {}
    void scale(const TensorDesc&, float) override {}
    void softmax(const TensorDesc&, const TensorDesc&) override {}
    void multiply(const TensorDesc&, const TensorDesc&, float, const TensorDesc&) override {}
    void copy(const TensorDesc&, const TensorDesc&) override {}
    BackendStats take_stats() override { return {}; }

    std::int64_t elements_ = 0;  // all buffers created

private:
    std::vector<std::int64_t> sizes_;  // per buffer id
    int next_ = 0;
};

// The steps of `c` walked with no numbers; `backend` sees every buffer a run would create.
Trace walk(const Config& config, ShapeOnlyBackend& backend) {
    Trace trace;
    trace.config = config;
    Inputs inputs;
    Weights weights;  // empty: the walk never reads them
    Resources resources;
    Forward(config, inputs, weights, backend, resources, trace.steps, Work::ShapesOnly, false).run();
    for (Step& s : trace.steps) s.ms = 0;
    return trace;
}

}  // namespace

MemoryEstimate estimate_memory(const Config& c) {
    ShapeOnlyBackend backend;
    const Trace shapes = walk(c, backend);
    const double f = sizeof(float);
    MemoryEstimate e;
    e.backend_bytes = f * static_cast<double>(backend.elements_);
    // Inputs and weights are held twice on the host (the caller's, the trace's copy); fused
    // mode stacks W_qkv once more while uploading it; a recorded step reads back at most its
    // largest buffer at a time.
    double host = static_cast<double>(c.batch * c.num_tokens() * c.d_in) + 3.0 * c.d_out * c.d_in +
                  (c.qkv_bias ? 3.0 * c.d_out : 0) + (c.out_proj ? static_cast<double>(c.d_out) * (c.d_out + 1) : 0);
    host *= 2;
    if (c.mode == Mode::Fused) host += 3.0 * c.d_out * c.d_in + (c.qkv_bias ? 3.0 * c.d_out : 0);
    double trace = 0, readback = 0;  // readback: the most one step holds (each buffer read once)
    for (const Step& s : shapes.steps) {
        std::map<int, double> read;
        for (const TensorRecord& t : s.tensors) {
            trace += static_cast<double>(numel(t.shape));
            read[t.buffer] = static_cast<double>(backend.size_of(t.buffer));
        }
        double step_total = 0;
        for (const auto& [id, n] : read) step_total += n;
        readback = std::max(readback, step_total);
    }
    e.host_bytes = f * (host + readback);
    e.trace_bytes = f * trace;
    return e;
}

bool CheckedConfig::fits_budget() const { return memory.total() <= static_cast<double>(config.memory_budget); }

void CheckedConfig::require_budget() const {
    if (fits_budget()) return;
    throw ConfigError("this configuration needs about " + human_bytes(memory.total()) + " (backend buffers " +
                      human_bytes(memory.backend_bytes) + ", host copies " + human_bytes(memory.host_bytes) +
                      ", trace " + human_bytes(memory.trace_bytes) + "), over the memory budget of " +
                      human_bytes(static_cast<double>(config.memory_budget)) +
                      "; use fewer tokens or a smaller D_out, or raise --memory-budget");
}

CheckedConfig check_config(const Config& c) {
    validate(c);
    return CheckedConfig{c, estimate_memory(c)};
}

struct Runner::State {
    Config config;
    const Inputs& inputs;
    const Weights& weights;
    Backend& backend;
    Resources resources;
};

Runner::Runner(const CheckedConfig& checked, const Inputs& inputs, const Weights& weights, Backend& backend) {
    checked.require_budget();
    check_sizes(checked.config, inputs, weights);
    state_ = std::make_unique<State>(State{checked.config, inputs, weights, backend, {}});
}

Runner::Runner(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend)
    : Runner(check_config(config), inputs, weights, backend) {}

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
    if (options.record_values) {
        trace.inputs = st.inputs;
        trace.weights = st.weights;
    }
    st.resources.rewind();
    Forward f(st.config, st.inputs, st.weights, st.backend, st.resources, trace.steps, Work::Compute,
              options.record_values);
    if (options.projections_only) f.run_projections();
    else f.run();
    if (!options.record_values && !trace.steps.empty()) {
        // The result, read back once at the end.
        TensorRecord& out = trace.steps.back().tensors.back();
        std::vector<float> buffer;
        st.backend.read(out.buffer, buffer);
        out.data = gather(buffer, TensorDesc{out.buffer, out.offset, out.shape, out.strides});
    }
    return trace;
}

Trace run(const CheckedConfig& config, const Inputs& inputs, const Weights& weights, Backend& backend) {
    return Runner(config, inputs, weights, backend).run();
}

Trace run(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend) {
    return Runner(config, inputs, weights, backend).run();
}

Trace plan(const CheckedConfig& checked) {
    ShapeOnlyBackend backend;
    return walk(checked.config, backend);
}

Trace plan(const Config& config) { return plan(check_config(config)); }

}  // namespace headsplit
