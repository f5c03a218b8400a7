#include "headsplit/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

namespace headsplit {

namespace {

using Clock = std::chrono::steady_clock;

std::string num(double v) {
    std::ostringstream s;
    s.precision(4);
    s << v;
    return s.str();
}

// Builds one Step at a time: times the compute between begin() and computed(), then reads
// each backend buffer back at most once for the tensors the step records.
class Recorder {
public:
    Recorder(Backend& backend, std::vector<Step>& steps, bool values)
        : backend_(backend), steps_(steps), values_(values) {}

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

    void tensor(const std::string& name, const TensorDesc& t, Storage storage) {
        if (!values_) {
            step_.tensors.push_back(TensorRecord{name, t.shape, t.strides, t.offset, t.buffer, storage, {}});
            return;
        }
        auto it = readback_.find(t.buffer);
        if (it == readback_.end()) {
            it = readback_.emplace(t.buffer, std::vector<float>()).first;
            backend_.read(t.buffer, it->second);
        }
        step_.tensors.push_back(TensorRecord{name, t.shape, t.strides, t.offset, t.buffer, storage,
                                             gather(it->second, t)});
    }

    void end(std::string code, std::string explain) {
        step_.code = std::move(code);
        step_.explain = std::move(explain);
        steps_.push_back(std::move(step_));
        readback_.clear();
    }

private:
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
};

// One forward pass. Names follow the teaching code: queries, keys, values, attn_scores,
// attn_weights, context_vec.
class Forward {
public:
    Forward(const Config& c, const Inputs& in, const Weights& w, Backend& be, Resources& res, std::vector<Step>& steps,
            bool values)
        : c_(c), in_(in), w_(w), be_(be), res_(res), rec_(be, steps, values), values_(values),
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
        TensorDesc ctx;
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
        TensorDesc q, k, v;
    };

    // An nn.Linear on the backend: weight [out, in] and, when present, bias [out].
    struct Linear {
        TensorDesc w, b;
        bool has_bias = false;
        const TensorDesc* bias() const { return has_bias ? &b : nullptr; }
        // Head h's share: rows h*hd .. (h+1)*hd-1 of the weight (columns of W in x @ W)
        // and the same entries of the bias. No copy: a window on the same buffers.
        Linear head(std::int64_t h, std::int64_t hd) const {
            const std::int64_t in = w.shape[1];
            return {TensorDesc{w.buffer, h * hd * in, {hd, in}, {in, 1}}, TensorDesc{b.buffer, h * hd, {hd}, {1}},
                    has_bias};
        }
    };

    Linear upload_linear(const std::vector<float>& w, const std::vector<float>& b, std::int64_t out, std::int64_t in) {
        Linear l{contiguous(upload(w), {out, in}), TensorDesc{}, !b.empty()};
        if (l.has_bias) l.b = contiguous(upload(b), {out});
        return l;
    }

    // A constant: made and uploaded on the first run only.
    template <class Make>
    int upload_made(Make make) {
        if (res_.next_constant < res_.constants.size()) return res_.constants[res_.next_constant++];
        const std::vector<float> data = make();
        const int id = be_.create_buffer(static_cast<std::int64_t>(data.size()));
        be_.write(id, data);
        res_.constants.push_back(id);
        ++res_.next_constant;
        return id;
    }
    int upload(const std::vector<float>& data) {
        return upload_made([&] { return data; });
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

    void record_qkv(const Qkv& t, Storage storage) {
        rec_.tensor("queries", t.q, storage);
        rec_.tensor("keys", t.k, storage);
        rec_.tensor("values", t.v, storage);
    }

    // ---- step 0: x [B, T, D_in] -----------------------------------------------------
    void input() {
        rec_.begin(Op::Input);
        x_ = contiguous(upload(in_.x), {B, T, Di});
        rec_.computed(0, 0);
        rec_.tensor("x", x_, Storage::New);
        rec_.end("b, num_tokens, d_in = x.shape",
                 "The input: a batch of " + std::to_string(B) + " sentence of " + std::to_string(T) +
                     " tokens, each token a row of D_in = " + std::to_string(Di) + " numbers.");
    }

    struct QkvLinears {
        Linear q, k, v;
    };
    QkvLinears upload_qkv() {
        return {upload_linear(w_.w_query, w_.b_query, D, Di), upload_linear(w_.w_key, w_.b_key, D, Di),
                upload_linear(w_.w_value, w_.b_value, D, Di)};
    }

    // Three matmuls x @ W^T into new [B, T, width] tensors, counted and recorded (the caller
    // opens and closes the step): split mode with the whole weights, loop mode with a head's.
    Qkv project_three(const QkvLinears& w, std::int64_t width) {
        const auto fresh = [&] { return contiguous(alloc({B, T, width}), {B, T, width}); };
        Qkv t{fresh(), fresh(), fresh()};
        be_.matmul(rows(x_), w.q.w, true, w.q.bias(), rows(t.q));
        be_.matmul(rows(x_), w.k.w, true, w.k.bias(), rows(t.k));
        be_.matmul(rows(x_), w.v.w, true, w.v.bias(), rows(t.v));
        rec_.computed(3, 3 * 2.0 * B * T * Di * width);
        record_qkv(t, Storage::New);
        return t;
    }

    // ---- step 1 (split): Q, K, V = x @ W^T, one D_in x D_out matmul each ---------------
    Qkv project_split() {
        const QkvLinears w = upload_qkv();
        rec_.begin(Op::Project);
        const Qkv t = project_three(w, D);
        rec_.end("queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)",
                 "Three matmuls, one per projection: x " + shape_str(x_.shape) + " times a " +
                     std::to_string(Di) + " x " + std::to_string(D) + " weight gives queries, keys and values "
                     "with all " + std::to_string(H) + " heads side by side in the last dimension.");
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
            contiguous(upload_made([&] { return stack(w_.w_query, w_.w_key, w_.w_value); }), {3 * D, Di});
        TensorDesc b;
        if (c_.qkv_bias)
            b = contiguous(upload_made([&] { return stack(w_.b_query, w_.b_key, w_.b_value); }), {3 * D});
        rec_.begin(Op::Project);
        const TensorDesc qkv = contiguous(alloc({B, T, 3 * D}), {B, T, 3 * D});
        be_.matmul(rows(x_), w, true, c_.qkv_bias ? &b : nullptr, rows(qkv));
        rec_.computed(1, 2.0 * B * T * Di * 3 * D);
        rec_.tensor("qkv", qkv, Storage::New);
        rec_.end("qkv = self.W_qkv(x)",
                 "One matmul does all three projections: x " + shape_str(x_.shape) + " times the stacked " +
                     std::to_string(Di) + " x " + std::to_string(3 * D) + " weight W_qkv gives " +
                     shape_str(qkv.shape) + ", queries, keys and values side by side.");

        rec_.begin(Op::Split);
        Qkv t{narrow_last(qkv, 0, D), narrow_last(qkv, D, D), narrow_last(qkv, 2 * D, D)};
        rec_.computed(0, 0);
        record_qkv(t, Storage::View);
        rec_.end("queries, keys, values = qkv.chunk(3, dim=-1)",
                 "chunk cuts the last dimension into three windows of " + std::to_string(D) +
                     "; each is a view with row stride " + std::to_string(3 * D) + ", nothing is copied.");
        return t;
    }

    // ---- view [B,T,D_out] -> [B,T,H,hd], then transpose -> [B,H,T,hd] -----------------
    Qkv heads_view(Qkv t) {
        const Shape split_shape{B, T, H, hd};
        rec_.begin(Op::View);
        t = {view(t.q, split_shape), view(t.k, split_shape), view(t.v, split_shape)};
        rec_.computed(0, 0);
        record_qkv(t, Storage::View);
        rec_.end("queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)  # keys, values alike",
                 "The last dimension of " + std::to_string(D) + " is read as " + std::to_string(H) + " heads x " +
                     std::to_string(hd) + " features: only the shape and strides change, no number moves.");

        rec_.begin(Op::Transpose);
        t = {transpose(t.q, 1, 2), transpose(t.k, 1, 2), transpose(t.v, 1, 2)};
        rec_.computed(0, 0);
        record_qkv(t, Storage::View);
        rec_.end("queries = queries.transpose(1, 2)  # keys, values alike",
                 "Tokens and heads swap places, grouping the data by head so all " + std::to_string(H) +
                     " heads can be computed at once; only the strides are swapped.");
        return t;
    }

    // ---- scores, mask, scale, softmax, dropout, context: for all heads (head = -1) or one
    // head (loop mode). q, k, v: [..., T, hd]. Returns context_vec [..., T, hd].
    TensorDesc attention(const Qkv& t, int head) {
        const bool all = head < 0;
        const std::int64_t heads_here = all ? H : 1;
        Shape tt = t.q.shape;
        tt.back() = T;  // [..., T, T]
        const std::string grid = std::to_string(T) + " x " + std::to_string(T);

        rec_.begin(Op::Scores, head);
        const TensorDesc scores = contiguous(alloc(tt), tt);
        be_.matmul(t.q, t.k, true, nullptr, scores);
        rec_.computed(1, 2.0 * B * heads_here * T * T * hd);
        rec_.tensor("attn_scores", scores, Storage::New);
        rec_.end(all ? "attn_scores = queries @ keys.transpose(2, 3)" : "attn_scores = queries @ keys.transpose(1, 2)",
                 all ? "Every query is dotted with every key of its head: one batched matmul gives a " + grid +
                           " score grid for each of the " + std::to_string(H) + " heads."
                     : "Head " + std::to_string(head) + " dots each of its queries with each of its keys: a " +
                           grid + " score grid.");

        if (c_.scale_first) {
            scale(scores, head);
            mask(scores, head);
        } else {
            mask(scores, head);
            scale(scores, head);
        }

        rec_.begin(Op::Softmax, head);
        TensorDesc weights = contiguous(alloc(tt), tt);
        be_.softmax(scores, weights);
        rec_.computed(0, 0);
        rec_.tensor("attn_weights", weights, Storage::New);
        rec_.end("attn_weights = torch.softmax(attn_scores, dim=-1)",
                 std::string("Softmax turns each row into attention weights that are positive and sum to 1") +
                     (c_.causal ? "; the -inf cells become exactly 0." : "."));

        if (c_.dropout > 0) weights = dropout(weights, head);

        rec_.begin(Op::Context, head);
        Shape ctx_shape = tt;
        ctx_shape.back() = hd;
        const TensorDesc ctx = contiguous(alloc(ctx_shape), ctx_shape);
        be_.matmul(weights, t.v, false, nullptr, ctx);
        rec_.computed(1, 2.0 * B * heads_here * T * T * hd);
        rec_.tensor("context_vec", ctx, Storage::New);
        rec_.end("context_vec = attn_weights @ values",
                 std::string("Each token's new vector is the weighted average of the value vectors, ") +
                     (all ? "for every head in one batched matmul." : "for head " + std::to_string(head) + "."));
        return ctx;
    }

    void mask(const TensorDesc& scores, int head) {
        if (!c_.causal) return;
        rec_.begin(Op::Mask, head);
        be_.causal_mask(scores);
        rec_.computed(0, 0);
        rec_.tensor("attn_scores", scores, Storage::InPlace);
        rec_.end("attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
                 "The causal mask: a token may not look at later tokens, so every score above the diagonal "
                 "becomes -inf, in place.");
    }

    void scale(const TensorDesc& scores, int head) {
        rec_.begin(Op::Scale, head);
        const double root = std::sqrt(static_cast<double>(hd));
        be_.scale(scores, static_cast<float>(1.0 / root));
        rec_.computed(0, 0);
        rec_.tensor("attn_scores", scores, Storage::InPlace);
        rec_.end("attn_scores.div_(self.head_dim ** 0.5)",
                 "The scores are divided by sqrt(head_dim) = sqrt(" + std::to_string(hd) + ") = " + num(root) +
                     ", in place, so that the softmax does not saturate as head_dim grows.");
    }

    TensorDesc dropout(const TensorDesc& weights, int head) {
        // The mask is cut from one [B, H, T, T] draw, so loop mode's heads drop the same cells
        // as the batched modes.
        const TensorDesc mask = contiguous(upload_made([&] {
            const std::int64_t per_head = T * T;
            std::vector<float> keep_all =
                values_ ? make_dropout_mask(c_.seed, B * H * per_head, c_.dropout) : std::vector<float>();
            if (head < 0 || !values_) return keep_all;
            std::vector<float> keep;
            for (std::int64_t b = 0; b < B; ++b) {
                auto first = keep_all.begin() + (b * H + head) * per_head;
                keep.insert(keep.end(), first, first + per_head);
            }
            return keep;
        }), weights.shape);
        rec_.begin(Op::Dropout, head);
        const TensorDesc out = contiguous(alloc(weights.shape), weights.shape);
        be_.multiply(weights, mask, static_cast<float>(1.0 / (1.0 - c_.dropout)), out);
        rec_.computed(0, 0);
        rec_.tensor("dropout_mask", mask, Storage::New);
        rec_.tensor("attn_weights", out, Storage::New);
        rec_.end("attn_weights = self.dropout(attn_weights)",
                 "Dropout (training only) zeroes each weight with probability p = " + num(c_.dropout) +
                     " and scales the survivors by 1 / (1 - p) = " + num(1.0 / (1.0 - c_.dropout)) + ".");
        return out;
    }

    // ---- transpose back [B,H,T,hd] -> [B,T,H,hd], then merge (copy) -> [B,T,D_out] ------
    TensorDesc merge(const TensorDesc& ctx) {
        rec_.begin(Op::TransposeBack);
        const TensorDesc back = transpose(ctx, 1, 2);
        rec_.computed(0, 0);
        rec_.tensor("context_vec", back, Storage::View);
        rec_.end("context_vec = context_vec.transpose(1, 2)",
                 "Heads and tokens swap back, so each token's " + std::to_string(H) +
                     " head outputs sit next to each other; only the strides change.");

        rec_.begin(Op::Merge);
        const int buf = alloc({B, T, D});
        be_.copy(back, contiguous(buf, back.shape));
        const TensorDesc merged = contiguous(buf, {B, T, D});
        rec_.computed(0, 0);
        rec_.tensor("context_vec", merged, Storage::Copy);
        rec_.end("context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
                 "The transposed tensor is not laid out row by row, so .contiguous() copies it into a new "
                 "buffer; then " + std::to_string(H) + " x " + std::to_string(hd) + " is flattened back into D_out = " +
                     std::to_string(D) + ".");
        return merged;
    }

    // ---- loop mode: per head h, three [D_in, hd] matmuls and its own attention; concat ---
    // Head h's three small projections (loop mode).
    Qkv project_head(std::int64_t h, const QkvLinears& w) {
        rec_.begin(Op::Project, static_cast<int>(h));
        const Qkv t = project_three({w.q.head(h, hd), w.k.head(h, hd), w.v.head(h, hd)}, hd);
        rec_.end("queries = self.heads[" + std::to_string(h) + "].W_query(x)  # keys, values alike",
                 "Head " + std::to_string(h) + " runs its own three small matmuls: x " + shape_str(x_.shape) +
                     " times its " + std::to_string(Di) + " x " + std::to_string(hd) +
                     " slices of W_query, W_key and W_value.");
        return t;
    }

    TensorDesc loop_heads() {
        const QkvLinears w = upload_qkv();
        std::vector<TensorDesc> outputs;
        for (std::int64_t h = 0; h < H; ++h) outputs.push_back(attention(project_head(h, w), static_cast<int>(h)));

        rec_.begin(Op::Concat);
        const int buf = alloc({B, T, D});
        for (std::int64_t h = 0; h < H; ++h)
            be_.copy(outputs[h], TensorDesc{buf, h * hd, {B, T, hd}, {T * D, D, 1}});
        const TensorDesc merged = contiguous(buf, {B, T, D});
        rec_.computed(0, 0);
        rec_.tensor("context_vec", merged, Storage::Copy);
        rec_.end("context_vec = torch.cat([head(x) for head in self.heads], dim=-1)",
                 "The " + std::to_string(H) + " head outputs of " + std::to_string(hd) +
                     " features are copied side by side into one " + shape_str(merged.shape) + " tensor.");
        return merged;
    }

    // ---- output projection [B,T,D_out] @ W_out^T + b_out ------------------------------
    void out_proj(const TensorDesc& ctx) {
        const Linear w = upload_linear(w_.w_out, w_.b_out, D, D);
        rec_.begin(Op::OutProj);
        const TensorDesc out = contiguous(alloc({B, T, D}), {B, T, D});
        be_.matmul(rows(ctx), w.w, true, w.bias(), rows(out));
        rec_.computed(1, 2.0 * B * T * D * D);
        rec_.tensor("output", out, Storage::New);
        rec_.end("output = self.out_proj(context_vec)",
                 "A last linear layer (W_out " + std::to_string(D) + " x " + std::to_string(D) +
                     " plus bias) mixes the heads' features into the output.");
    }

    const Config& c_;
    const Inputs& in_;
    const Weights& w_;
    Backend& be_;
    Resources& res_;
    Recorder rec_;
    const bool values_;  // false: plan() walks the steps for their shapes, computing nothing
    const std::int64_t B, T, Di, D, H, hd;
    TensorDesc x_;
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

}  // namespace

MemoryEstimate estimate_memory(const Config& c) {
    const double B = static_cast<double>(c.batch), T = static_cast<double>(c.num_tokens());
    const double Di = static_cast<double>(c.d_in), D = static_cast<double>(c.d_out);
    const double H = static_cast<double>(c.heads);
    const double f = sizeof(float);
    const double tokens_x = B * T * Di, btd = B * T * D, grid = B * H * T * T;
    const bool drop = c.dropout > 0;

    double weights = 3 * D * Di + (c.qkv_bias ? 3 * D : 0) + (c.out_proj ? D * D + D : 0);
    MemoryEstimate e;
    // Host copy in the Trace, the backend's copy, and fused mode's stacked W_qkv staging.
    e.weights_bytes = f * weights * (c.mode == Mode::Fused ? 3 : 2);

    // Backend buffers: x, Q/K/V (or qkv), scores, weights, dropout mask + output, context,
    // merged, output.
    double buffers = tokens_x + 3 * btd + 2 * grid + (drop ? 2 * grid : 0) + 2 * btd + (c.out_proj ? btd : 0);
    // The largest readback a step holds while it is recorded.
    const double largest = std::max<double>({tokens_x, 3 * btd, grid, c.mode == Mode::Loop ? btd : 0.0});
    e.buffers_bytes = f * (buffers + largest);

    // Recorded values, step by step.
    double trace = tokens_x;                                   // input
    const double per_grid_steps = 3 + (c.causal ? 1 : 0) + (drop ? 2 : 0);  // scores, scale, softmax (+mask, +dropout x2)
    if (c.mode == Mode::Loop) {
        trace += 3 * btd + grid * per_grid_steps + btd + btd;  // heads' q/k/v, grids, contexts, concat
    } else {
        const double qkv_steps = c.mode == Mode::Fused ? 4 : 3;  // (qkv,) split, view, transpose
        trace += qkv_steps * 3 * btd + grid * per_grid_steps + 3 * btd;  // + context, back, merge
    }
    if (c.out_proj) trace += btd;
    e.trace_bytes = f * trace;
    return e;
}

void check_memory_budget(const Config& c) {
    const MemoryEstimate e = estimate_memory(c);
    if (e.total() <= static_cast<double>(c.memory_budget)) return;
    throw ConfigError("this configuration needs about " + human_bytes(e.total()) + " (weights " +
                      human_bytes(e.weights_bytes) + ", working buffers " + human_bytes(e.buffers_bytes) +
                      ", trace " + human_bytes(e.trace_bytes) + "), over the memory budget of " +
                      human_bytes(static_cast<double>(c.memory_budget)) +
                      "; use fewer tokens or a smaller D_out, or raise --memory-budget");
}

struct Runner::State {
    Config config;
    const Inputs& inputs;
    const Weights& weights;
    Backend& backend;
    Resources resources;
};

Runner::Runner(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend) {
    validate(config);
    check_memory_budget(config);
    check_sizes(config, inputs, weights);
    backend.release_buffers();
    state_ = std::make_unique<State>(State{config, inputs, weights, backend, {}});
}

Runner::~Runner() = default;

Trace Runner::run(const RunOptions& options) {
    State& st = *state_;
    Trace trace;
    trace.config = st.config;
    if (options.record_values) {
        trace.inputs = st.inputs;
        trace.weights = st.weights;
    }
    st.resources.rewind();
    Forward f(st.config, st.inputs, st.weights, st.backend, st.resources, trace.steps, options.record_values);
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

Trace run(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend) {
    return Runner(config, inputs, weights, backend).run();
}

namespace {

// Hands out buffer ids and does nothing: the engine's walk through the steps, shapes only.
class ShapeOnlyBackend final : public Backend {
public:
    const char* name() const override { return "none"; }
    int create_buffer(std::int64_t) override { return next_++; }
    void write(int, const std::vector<float>&) override {}
    void read(int, std::vector<float>& out) override { out.clear(); }
    void release_buffers() override { next_ = 0; }
    std::int64_t held_bytes() const override { return 0; }
    void matmul(const TensorDesc&, const TensorDesc&, bool, const TensorDesc*, const TensorDesc&) override {}
    void causal_mask(const TensorDesc&) override {}
    void scale(const TensorDesc&, float) override {}
    void softmax(const TensorDesc&, const TensorDesc&) override {}
    void multiply(const TensorDesc&, const TensorDesc&, float, const TensorDesc&) override {}
    void copy(const TensorDesc&, const TensorDesc&) override {}
    BackendStats take_stats() override { return {}; }

private:
    int next_ = 0;
};

}  // namespace

Trace plan(const Config& config) {
    validate(config);
    Trace trace;
    trace.config = config;
    ShapeOnlyBackend backend;
    // Sized but empty weights would cost D^2 floats; the walk never reads them.
    Inputs inputs;
    Weights weights;
    Resources resources;
    Forward(config, inputs, weights, backend, resources, trace.steps, false).run();
    for (Step& s : trace.steps) s.ms = 0;
    return trace;
}

}  // namespace headsplit
