#include "headsplit/engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>

#include <unistd.h>

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/teaching/narration.hpp"
#include "headsplit/teaching/numbers.hpp"

namespace headsplit {

namespace {

using Clock = std::chrono::steady_clock;

// Flash mode keeps the values of its first tiles only, up to this many numbers (128 MiB):
// every tile of a classroom example, the first rows of tiles of a long pass.
constexpr double kFlashTileValues = 32.0 * 1024 * 1024;

// A step's values are left to when they are first shown (TileTensor, GridValues) from this
// many numbers (64 KiB): below that, reading them now costs less than the bookkeeping.
constexpr std::int64_t kDeferredValues = 16384;

// Rows q0 .. q0 + n - 1 of flash's m or l ([B, H, T]), or of its acc ([B, H, T, hd]).
TensorDesc flash_rows(const TensorDesc& whole, std::int64_t q0, std::int64_t n) {
    Shape shape = whole.shape;
    shape[2] = n;
    return TensorDesc{whole.buffer, whole.offset + q0 * whole.strides[2], shape, whole.strides};
}

// `values` in a new buffer of `backend`, row-major in `shape`.
TensorDesc upload(Backend& backend, const std::vector<float>& values, const Shape& shape) {
    const int id = backend.create_buffer(numel(shape));
    backend.write(id, values);
    return contiguous(id, shape);
}

// The values of `t` as they are now, from a backend whose buffers are host memory.
std::vector<float> read_host(Backend& backend, const TensorDesc& t) {
    std::int64_t size = 0;
    const float* host = backend.host_view(t.buffer, &size);
    if (!host) throw std::logic_error("read_host: the backend lends no host view");
    return gather(host, size, t);
}

// A flash tile's values made again when first asked for (the run's backend computes as the
// CPU's does): the run's queries, keys, values and key mask, kept once per run, go through a
// CPU backend's flash_attention over the tile's query block, from key 0 to the tile's last
// key (TileTensor). Those are the same calls the run makes for a kept tile, one tile after
// another, so the numbers are the same; the run itself then computes the tiles in larger
// pieces.
struct FlashSnapshot {
    std::vector<float> q, k, v, mask;  // [B, H, T, hd], [B, G, S, hd] twice, [B, S] (or none)
    Shape q_shape, kv_shape;
    FlashArgs args;  // factor, causal, block
};

// Tensor `which` of tile step (q0, nq, k0, nk): 0 tile_scores, 1 m, 2 l, 3 acc. Each record
// replays for itself (a step shown makes four replays of its query block up to the tile):
// nothing is shared between them, so nothing is handed out twice or raced for.
class TileTensor final : public DeferredValues {
public:
    TileTensor(std::shared_ptr<const FlashSnapshot> in, std::int64_t q0, std::int64_t nq, std::int64_t k0,
               std::int64_t nk, int which)
        : in_(std::move(in)), q0_(q0), nq_(nq), k0_(k0), nk_(nk), which_(which) {}

private:
    std::vector<float> make() const override {
        const FlashSnapshot& in = *in_;
        const std::int64_t B = in.q_shape[0], H = in.q_shape[1], T = in.q_shape[2], hd = in.q_shape[3];
        const std::int64_t blk = in.args.block;
        auto cpu = make_cpu_backend();
        FlashArgs a = in.args;
        a.q = upload(*cpu, in.q, in.q_shape);
        a.k = upload(*cpu, in.k, in.kv_shape);
        a.v = upload(*cpu, in.v, in.kv_shape);
        const TensorDesc mask = in.mask.empty() ? TensorDesc{} : upload(*cpu, in.mask, {B, in.kv_shape[2]});
        a.key_mask = in.mask.empty() ? nullptr : &mask;
        a.m = contiguous(cpu->create_buffer(B * H * T), {B, H, T});
        a.l = contiguous(cpu->create_buffer(B * H * T), {B, H, T});
        a.acc = contiguous(cpu->create_buffer(B * H * T * hd), {B, H, T, hd});
        a.tile = contiguous(cpu->create_buffer(B * H * blk * blk), {B, H, blk, blk});
        a.q_begin = q0_, a.q_end = q0_ + nq_, a.k_begin = 0, a.k_end = k0_ + nk_, a.normalize = false;
        cpu->flash_attention(a);
        const TensorDesc out[] = {{a.tile.buffer, 0, {B, H, nq_, nk_}, {H * blk * blk, blk * blk, blk, 1}},
                                  flash_rows(a.m, q0_, nq_), flash_rows(a.l, q0_, nq_), flash_rows(a.acc, q0_, nq_)};
        return read_host(*cpu, out[which_]);
    }

    std::shared_ptr<const FlashSnapshot> in_;
    std::int64_t q0_, nq_, k0_, nk_;
    int which_;
};

// A score grid's values made again when first shown (the run's backend computes as the CPU
// does): Q @ K^T from the run's queries and keys on a CPU backend, then that backend's scale,
// mask, padding and softmax in the steps' order, up to the step shown. Those are the calls a
// run makes when it records, one step after another, so the numbers are the same; the run
// itself then takes the one pass of a run that records nothing (the masked softmax, the work
// above a causal diagonal skipped).
struct GridSnapshot {
    std::vector<float> q, k, key_mask;  // [..., Tq, hd], [..., Tk, hd], [B, Tk] (or none)
    Shape q_shape, k_shape, mask_shape;
    float factor = 1.0f;
};

class GridValues final : public DeferredValues {
public:
    GridValues(std::shared_ptr<const GridSnapshot> in, std::vector<Op> ops) : in_(std::move(in)), ops_(std::move(ops)) {}

private:
    std::vector<float> make() const override {
        const GridSnapshot& in = *in_;
        auto cpu = make_cpu_backend();
        const TensorDesc q = upload(*cpu, in.q, in.q_shape), k = upload(*cpu, in.k, in.k_shape);
        Shape tt = in.q_shape;
        tt.back() = in.k_shape[in.k_shape.size() - 2];
        TensorDesc grid = contiguous(cpu->create_buffer(numel(tt)), tt);
        cpu->matmul(q, k, true, nullptr, grid);
        for (Op op : ops_) {
            if (op == Op::Scale) cpu->scale(grid, in.factor);
            else if (op == Op::Mask) cpu->causal_mask(grid);
            else if (op == Op::PadMask) cpu->masked_fill(grid, upload(*cpu, in.key_mask, in.mask_shape));
            else if (op == Op::Softmax) {
                const TensorDesc probs = contiguous(cpu->create_buffer(numel(tt)), tt);
                cpu->softmax(grid, probs);
                cpu->release({grid.buffer});  // at most two grids held at once, with the copy out
                grid = probs;
            }
        }
        return read_host(*cpu, grid);
    }

    std::shared_ptr<const GridSnapshot> in_;
    std::vector<Op> ops_;  // after Q @ K^T
};

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
        : config_(config), backend_(backend), steps_(steps), values_(values) {
        whole_pass();
    }

    void begin(Op op, int head = -1) {
        backend_.finish();
        backend_.take_stats();
        step_ = Step{};
        step_.index = static_cast<int>(steps_.size());
        step_.op = op;
        step_.head = head;
        step_.round = round_;
        step_.rows = rows_;
        step_.keys = keys_;
        step_.tile_values = true;
        readback_.clear();
        start_ = Clock::now();
    }

    bool values() const { return values_; }
    // The step begun is flash tile (query block i, key block j); `keep`: its values are
    // recorded (when the run records values at all).
    void set_tile(int i, int j, bool keep) {
        step_.tile_q = i;
        step_.tile_k = j;
        step_.tile_values = keep;
    }
    // Steps begun from now on belong to this decoding round (-1: none).
    void set_round(int round) { round_ = round; }
    // Steps begun from now on hold these query rows and key positions (a round's token, a
    // tile's blocks); whole_pass() puts back all T rows and all S keys.
    void set_rows(std::int64_t first, std::int64_t count) { rows_ = {first, count}; }
    void set_keys(std::int64_t first, std::int64_t count) { keys_ = {first, count}; }
    void whole_pass() {
        rows_ = {0, config_.num_tokens()};
        keys_ = {0, config_.num_keys()};
    }

    void computed(std::int64_t matmuls, double flops) {
        backend_.finish();
        step_.ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
        step_.stats = backend_.take_stats();
        step_.matmuls = matmuls;
        step_.flops = flops;
    }

    // Records `t` as tensor `name` of the step, made from `from`, its dims counting `axes`;
    // returns the link to it. Its token and key axes hold the step's rows and keys.
    // `later`: its values are made when first asked for, not read now.
    Val tensor(const std::string& name, const TensorDesc& t, Storage storage, std::vector<Source> from, Axes axes,
               std::shared_ptr<const DeferredValues> later = nullptr) {
        check_axes(name, t.shape, axes);
        TensorRecord r{name, t.shape, t.strides, t.offset, t.buffer, storage, {}, nullptr, std::move(from), std::move(axes)};
        if (values_ && step_.tile_values && later) {
            r.deferred = std::move(later);
        } else if (values_ && step_.tile_values) {
            std::int64_t size = 0;
            if (const float* host = backend_.host_view(t.buffer, &size)) {  // host memory: no whole-buffer copy
                r.data = gather(host, size, t);
            } else {
                auto it = readback_.find(t.buffer);
                if (it == readback_.end()) {
                    it = readback_.emplace(t.buffer, std::vector<float>()).first;
                    backend_.read(t.buffer, it->second);
                }
                r.data = gather(it->second, t);
            }
        }
        step_.tensors.push_back(std::move(r));
        return {t, Source::of_step(step_.index, name)};
    }

    void end() {
        Narration words = narrate(step_, config_);
        step_.code = std::move(words.code);
        step_.explain = std::move(words.explain);
        steps_.push_back(std::move(step_));
        readback_.clear();
    }

private:
    // A recorded tensor's axes must name each dim once, and its token and key dims must hold
    // the step's rows and keys: a mistake here is the engine's, not the user's.
    void check_axes(const std::string& name, const Shape& shape, const Axes& axes) const {
        bool ok = axes.size() == shape.size();
        for (std::size_t i = 0; ok && i < axes.size(); ++i) {
            if (axes[i] == Axis::Token) ok = shape[i] == step_.rows.count;
            if (axes[i] == Axis::Key) ok = shape[i] == step_.keys.count;
        }
        if (!ok)
            throw std::logic_error("step " + std::to_string(step_.index) + " (" + op_name(step_.op) + "): tensor " +
                                   name + " " + shape_str(shape) + " does not match its axes, rows or keys");
    }

    const Config& config_;
    Backend& backend_;
    std::vector<Step>& steps_;
    const bool values_;
    Step step_;
    int round_ = -1;
    Span rows_, keys_;
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
          B(c.batch), T(c.num_tokens()), S(c.num_keys()), Di(c.d_in), Dk(c.key_dim()), D(c.d_out), H(c.heads),
          G(c.kv_head_count()), hd(c.head_dim()), KV(c.kv_width()) {}

    // Q, K, V only (the bench's "projections" stage): one matmul each, one fused, or 3 per head.
    void run_projections() {
        input();
        const Inputs2 in = whole_inputs();
        if (c_.mode == Mode::Loop) {
            const QkvLinears w = upload_qkv();
            for (std::int64_t h = 0; h < H; ++h) project_head(h, w, in);
        } else {
            project(in);
        }
    }

    void run() {
        input();
        if (c_.decoding()) {
            decode();
            return;
        }
        const Inputs2 in = whole_inputs();
        Val ctx;
        if (c_.mode == Mode::Loop) {
            ctx = loop_heads(in);
        } else if (c_.mode == Mode::Flash) {
            ctx = merge(flash(heads_view(project(in), T, S), key_mask_.t.buffer >= 0 ? &key_mask_ : nullptr), T);
        } else {
            Qkv qkv = heads_view(project(in), T, S);
            if (c_.grouped()) qkv = repeat_kv(qkv);
            ctx = merge(attention(qkv, -1, c_.causal, key_mask_.t.buffer >= 0 ? &key_mask_ : nullptr), T);
        }
        if (c_.out_proj) out_proj(ctx, T);
    }

private:
    struct Qkv {
        Val q, k, v;
    };
    // What the projections read: the queries' rows (x, or some of its tokens when decoding)
    // and the keys' and values' rows (the same, or the context in cross-attention).
    struct Inputs2 {
        Val q;
        std::int64_t tq = 0;
        Val kv;
        std::int64_t tk = 0;
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
        Linear l{contiguous(upload_from(out * in, w), {out, in}), TensorDesc{}, has_bias, w_name,
                 b_name};
        if (l.has_bias) l.b = contiguous(upload_from(out, b), {out});
        return l;
    }

    // A constant: made and uploaded on the first run only (made not at all for a shapes-only
    // walk, which needs only its size). `make` returns the values, or a reference to them.
    template <class Make>
    int upload_made(std::int64_t elements, Make make) {
        if (res_.next_constant < res_.constants.size()) return res_.constants[res_.next_constant++];
        const int id = be_.create_buffer(elements);
        if (work_ == Work::Compute) {
            const std::vector<float>& data = make();  // a temporary lives to the end of the block
            be_.write(id, data);
        }
        res_.constants.push_back(id);
        ++res_.next_constant;
        return id;
    }
    // A constant that exists already (a weight, an input): uploaded from where it is, not
    // copied first (9.4 MB of gpt2-small's weights).
    int upload_from(std::int64_t elements, const std::vector<float>& values) {
        return upload_made(elements, [&]() -> const std::vector<float>& { return values; });
    }
    // An activation buffer: allocated on the first run, reused after.
    int alloc(const Shape& shape) {
        if (res_.next_activation < res_.activations.size()) return res_.activations[res_.next_activation++];
        const int id = be_.create_buffer(numel(shape));
        res_.activations.push_back(id);
        ++res_.next_activation;
        return id;
    }
    TensorDesc fresh(const Shape& shape) { return contiguous(alloc(shape), shape); }

    // c = a @ w^T (+ b): a [B, n, in] as one [B*n, in] matrix when its rows lie back to back,
    // else batched over B (some tokens of x, when decoding).
    void linear(const TensorDesc& a, const Linear& w, const TensorDesc& c) {
        if (a.is_contiguous()) {
            be_.matmul(view(a, {a.shape[0] * a.shape[1], a.shape[2]}), w.w, true, w.bias(),
                       view(c, {c.shape[0] * c.shape[1], c.shape[2]}));
        } else {
            be_.matmul(a, w.w, true, w.bias(), c);
        }
    }

    // How queries, keys and values are arranged: rows of features ([B, n, D]), rows split
    // into heads ([B, n, H, hd]) or a panel per head ([B, H, n, hd]).
    enum class Arrangement { Rows, RowsOfHeads, HeadPanels };
    // Their axes: queries count tokens and heads; keys and values count keys and key/value
    // heads (fewer than the heads when grouped).
    Axes qkv_axes(Arrangement a, bool kv) const {
        const Axis row = kv ? Axis::Key : Axis::Token;
        const Axis head = kv && c_.grouped() ? Axis::KvHead : Axis::Head;
        switch (a) {
            case Arrangement::Rows: return {Axis::Batch, row, Axis::Feature};
            case Arrangement::RowsOfHeads: return {Axis::Batch, row, head, Axis::Feature};
            case Arrangement::HeadPanels: break;
        }
        return {Axis::Batch, head, row, Axis::Feature};
    }
    // Axes of a tensor of queries' rows: [B, H, n, X] per head or [B, n, X] (loop mode's heads
    // and merged rows), X keys (a score grid) or features.
    static Axes row_axes(std::size_t rank, Axis last) {
        if (rank == 4) return {Axis::Batch, Axis::Head, Axis::Token, last};
        return {Axis::Batch, Axis::Token, last};
    }

    // Records queries, keys and values made from (per tensor) `from`.
    Qkv record_qkv(const TensorDesc& q, const TensorDesc& k, const TensorDesc& v, Storage storage,
                   const std::vector<Source>& qf, const std::vector<Source>& kf, const std::vector<Source>& vf,
                   Arrangement a) {
        return {rec_.tensor("queries", q, storage, qf, qkv_axes(a, false)),
                rec_.tensor("keys", k, storage, kf, qkv_axes(a, true)),
                rec_.tensor("values", v, storage, vf, qkv_axes(a, true))};
    }

    // ---- step 0: x [B, T, D_in] (and the context [B, S, D_context], the key padding mask [B, S])
    void input() {
        rec_.begin(Op::Input);
        const TensorDesc x = contiguous(upload_from(B * T * Di, in_.x), {B, T, Di});
        TensorDesc context, key_mask;
        if (c_.cross()) context = contiguous(upload_from(B * S * Dk, in_.context), {B, S, Dk});
        if (c_.padded()) key_mask = contiguous(upload_from(B * S, in_.key_padding_mask), {B, S});
        rec_.computed(0, 0);
        x_ = rec_.tensor("x", x, Storage::New, {}, {Axis::Batch, Axis::Token, Axis::Feature});
        if (c_.cross()) context_ = rec_.tensor("context", context, Storage::New, {}, {Axis::Batch, Axis::Key, Axis::Feature});
        if (c_.padded()) key_mask_ = rec_.tensor("key_padding_mask", key_mask, Storage::New, {}, {Axis::Batch, Axis::Key});
        rec_.end();
    }

    Inputs2 whole_inputs() const { return {x_, T, c_.cross() ? context_ : x_, S}; }

    struct QkvLinears {
        Linear q, k, v;
    };
    QkvLinears upload_qkv() {
        return {upload_linear("w_query", "b_query", D, Di), upload_linear("w_key", "b_key", KV, Dk),
                upload_linear("w_value", "b_value", KV, Dk)};
    }

    // Three matmuls x @ W^T into new tensors, counted and recorded (the caller opens and
    // closes the step): split mode with the whole weights, loop mode with a head's.
    Qkv project_three(const QkvLinears& w, const Inputs2& in) {
        const std::int64_t qw = w.q.w.shape[0], kw = w.k.w.shape[0];
        const TensorDesc q = fresh({B, in.tq, qw}), k = fresh({B, in.tk, kw}), v = fresh({B, in.tk, kw});
        linear(in.q.t, w.q, q);
        linear(in.kv.t, w.k, k);
        linear(in.kv.t, w.v, v);
        rec_.computed(3, 2.0 * B * (in.tq * Di * qw + 2.0 * in.tk * Dk * kw));
        return record_qkv(q, k, v, Storage::New, w.q.links(in.q.src), w.k.links(in.kv.src), w.v.links(in.kv.src),
                          Arrangement::Rows);
    }

    Qkv project(const Inputs2& in) { return c_.mode == Mode::Fused ? project_fused(in) : project_split(in); }

    // ---- step 1 (split): Q, K, V = x @ W^T, one matmul each ---------------------------
    Qkv project_split(const Inputs2& in) {
        const QkvLinears w = upload_qkv();
        rec_.begin(Op::Project);
        const Qkv t = project_three(w, in);
        rec_.end();
        return t;
    }

    // ---- steps 1-2 (fused): qkv = x @ W_qkv^T, one matmul, then split -------------------
    Qkv project_fused(const Inputs2& in) {
        // W_qkv is W_query, W_key, W_value stacked row-wise ([D_out + 2 kv_width, D_in]).
        auto stack = [](const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v) {
            std::vector<float> all(q);
            all.insert(all.end(), k.begin(), k.end());
            all.insert(all.end(), v.begin(), v.end());
            return all;
        };
        const std::int64_t width = D + 2 * KV;
        Linear w{contiguous(upload_made(width * Di, [&] { return stack(w_.w_query, w_.w_key, w_.w_value); }),
                            {width, Di}),
                 TensorDesc{}, c_.qkv_bias, "", ""};
        if (c_.qkv_bias)
            w.b = contiguous(upload_made(width, [&] { return stack(w_.b_query, w_.b_key, w_.b_value); }), {width});
        rec_.begin(Op::Project);
        const TensorDesc qkv = fresh({B, in.tq, width});
        linear(in.q.t, w, qkv);
        rec_.computed(1, 2.0 * B * in.tq * Di * width);
        std::vector<Source> from{in.q.src, Source::of_weight("w_query"), Source::of_weight("w_key"),
                                 Source::of_weight("w_value")};
        if (c_.qkv_bias)
            for (const char* bias : {"b_query", "b_key", "b_value"}) from.push_back(Source::of_weight(bias));
        const Val whole = rec_.tensor("qkv", qkv, Storage::New, from, {Axis::Batch, Axis::Token, Axis::Feature});
        rec_.end();

        rec_.begin(Op::Split);
        rec_.computed(0, 0);
        const Qkv t = record_qkv(narrow_last(qkv, 0, D), narrow_last(qkv, D, KV), narrow_last(qkv, D + KV, KV),
                                 Storage::View, {whole.src}, {whole.src}, {whole.src}, Arrangement::Rows);
        rec_.end();
        return t;
    }

    // ---- view [B,T,D_out] -> [B,T,H,hd] (keys, values: G heads), then transpose -> [B,H,T,hd]
    Qkv heads_view(const Qkv& in, std::int64_t tq, std::int64_t tk) {
        rec_.begin(Op::View);
        rec_.computed(0, 0);
        const Qkv viewed = record_qkv(view(in.q.t, {B, tq, H, hd}), view(in.k.t, {B, tk, G, hd}),
                                      view(in.v.t, {B, tk, G, hd}), Storage::View, {in.q.src}, {in.k.src}, {in.v.src},
                                      Arrangement::RowsOfHeads);
        rec_.end();

        rec_.begin(Op::Transpose);
        rec_.computed(0, 0);
        const Qkv t = record_qkv(transpose(viewed.q.t, 1, 2), transpose(viewed.k.t, 1, 2), transpose(viewed.v.t, 1, 2),
                                 Storage::View, {viewed.q.src}, {viewed.k.src}, {viewed.v.src}, Arrangement::HeadPanels);
        rec_.end();
        return t;
    }

    // ---- GQA / MQA: keys, values [B,G,S,hd] -> [B,H,S,hd], KV head g for query heads
    // g*r .. g*r+r-1 (repeat_interleave). The copy reads the source through an expand-style
    // view with stride 0 on the repeat axis.
    Qkv repeat_kv(const Qkv& t) {
        const std::int64_t r = c_.group_size();
        const auto repeat = [&](const TensorDesc& src) {
            const Shape& s = src.strides;
            const std::int64_t n = src.shape[2];
            const TensorDesc expanded{src.buffer, src.offset, {B, G, r, n, hd}, {s[0], s[1], 0, s[2], s[3]}};
            const TensorDesc out = fresh({B, H, n, hd});
            be_.copy(expanded, view(out, {B, G, r, n, hd}));
            return out;
        };
        rec_.begin(Op::RepeatKv);
        const TensorDesc k = repeat(t.k.t), v = repeat(t.v.t);
        rec_.computed(0, 0);
        const Axes repeated{Axis::Batch, Axis::Head, Axis::Key, Axis::Feature};
        const Val keys = rec_.tensor("keys", k, Storage::Copy, {t.k.src}, repeated);
        const Val values = rec_.tensor("values", v, Storage::Copy, {t.v.src}, repeated);
        rec_.end();
        return {t.q, keys, values};
    }

    // ---- scores, mask, scale, softmax, dropout, context: for all heads (head = -1) or one
    // head (loop mode). q: [..., Tq, hd], k, v: [..., Tk, hd]. Returns context_vec [..., Tq, hd].
    Val attention(const Qkv& t, int head, bool causal, const Val* key_mask) {
        const std::int64_t heads_here = head < 0 ? H : 1;
        const std::int64_t tq = t.q.t.shape[t.q.t.rank() - 2], tk = t.k.t.shape[t.k.t.rank() - 2];
        Shape tt = t.q.t.shape;
        tt.back() = tk;  // [..., Tq, Tk]

        // Recording on a backend that computes as the CPU does, the grid's values are made
        // again when first shown (GridValues), from copies of the queries and keys.
        std::shared_ptr<GridSnapshot> snapshot;
        if (rec_.values() && be_.computes_as_cpu() && numel(tt) >= kDeferredValues) {
            snapshot = std::make_shared<GridSnapshot>();
            snapshot->q = read_host(be_, t.q.t);
            snapshot->k = read_host(be_, t.k.t);
            snapshot->q_shape = t.q.t.shape;
            snapshot->k_shape = t.k.t.shape;
            snapshot->factor = scale_factor();
            if (key_mask) {
                const TensorDesc keys{key_mask->t.buffer, key_mask->t.offset, {B, tk}, key_mask->t.strides};
                snapshot->key_mask = read_host(be_, keys);
                snapshot->mask_shape = keys.shape;
            }
        }
        std::vector<Op> chain;  // the grid's steps so far, after Q @ K^T
        const auto later = [&]() -> std::shared_ptr<const DeferredValues> {
            return snapshot ? std::make_shared<const GridValues>(snapshot, chain) : nullptr;
        };
        // Recording nothing (or the grid's values made later), under a causal mask: the work
        // above the diagonal may be skipped (the scores there are never read, the weights there
        // are 0).
        const bool quiet = !rec_.values() || snapshot;
        const bool skip_upper = quiet && causal && tq == tk;
        rec_.begin(Op::Scores, head);
        const TensorDesc grid = fresh(tt);
        if (skip_upper) be_.causal_matmul(t.q.t, t.k.t, true, grid, true);
        else be_.matmul(t.q.t, t.k.t, true, nullptr, grid);
        rec_.computed(1, 2.0 * B * heads_here * tq * tk * hd);
        Val scores = rec_.tensor("attn_scores", grid, Storage::New, {t.q.src, t.k.src}, row_axes(tt.size(), Axis::Key),
                                 later());
        rec_.end();

        // Recording nothing (or the values made later), the mask, the padding, the scale and
        // the softmax run as one pass per row in the softmax step (their steps stay, computing
        // nothing): the same numbers, read and written once.
        const bool fused = quiet;
        const auto then = [&](Op op) {
            chain.push_back(op);
            return later();
        };
        if (c_.scale_first) scores = scale(scores, head, fused, then(Op::Scale));
        if (causal) scores = mask(scores, head, fused, then(Op::Mask));
        if (key_mask) scores = pad_mask(scores, head, *key_mask, tk, fused, then(Op::PadMask));
        if (!c_.scale_first) scores = scale(scores, head, fused, then(Op::Scale));

        rec_.begin(Op::Softmax, head);
        const TensorDesc probs = fresh(tt);
        if (fused) {
            const TensorDesc keys_mask = key_mask ? TensorDesc{key_mask->t.buffer, key_mask->t.offset, {B, tk},
                                                               key_mask->t.strides}
                                                  : TensorDesc{};
            be_.masked_softmax(scores.t, probs, scale_factor(), causal, key_mask ? &keys_mask : nullptr);
        } else {
            be_.softmax(scores.t, probs);
        }
        rec_.computed(0, 0);
        Val weights = rec_.tensor("attn_weights", probs, Storage::New, {scores.src}, row_axes(tt.size(), Axis::Key),
                                  then(Op::Softmax));
        rec_.end();

        if (c_.dropout > 0) weights = dropout(weights, head);

        rec_.begin(Op::Context, head);
        Shape ctx_shape = tt;
        ctx_shape.back() = hd;
        const TensorDesc ctx = fresh(ctx_shape);
        if (skip_upper) be_.causal_matmul(weights.t, t.v.t, false, ctx, false);
        else be_.matmul(weights.t, t.v.t, false, nullptr, ctx);
        rec_.computed(1, 2.0 * B * heads_here * tq * tk * hd);
        const Val out = rec_.tensor("context_vec", ctx, Storage::New, {weights.src, t.v.src},
                                    row_axes(ctx_shape.size(), Axis::Feature));
        rec_.end();
        return out;
    }


    // ---- flash mode: tiles of queries x keys with an online softmax (FlashAttention), then
    // acc / l. Keys and values stay [B, G, S, hd]: each query head reads its group's head in
    // place, no repeat. Recording nothing, the first tile step runs every tile and the
    // division in one pass (the others keep their steps, with no compute); recording, the
    // tiles whose values are kept run one by one, and the first tile left out runs the rest.
    Val flash(const Qkv& t, const Val* key_mask) {
        const std::int64_t blk = c_.flash_block();
        const TensorDesc m = fresh({B, H, T}), l = fresh({B, H, T}), acc = fresh({B, H, T, hd});
        const TensorDesc tile = fresh({B, H, blk, blk});
        FlashArgs a;
        a.q = t.q.t;
        a.k = t.k.t;
        a.v = t.v.t;
        a.m = m;
        a.l = l;
        a.acc = acc;
        const TensorDesc keys_mask = key_mask ? TensorDesc{key_mask->t.buffer, key_mask->t.offset, {B, S},
                                                           key_mask->t.strides}
                                              : TensorDesc{};
        a.key_mask = key_mask ? &keys_mask : nullptr;
        a.factor = scale_factor();
        a.causal = c_.causal;
        a.block = blk;
        const bool one_pass = !rec_.values();
        // Recording on a backend that computes as the CPU does, the tiles' values are made again
        // when first shown (TileTensor), from these copies of the queries, keys and values; the
        // run computes every tile in one pass as if it recorded nothing.
        std::shared_ptr<FlashSnapshot> snapshot;
        if (!one_pass && be_.computes_as_cpu() && B * H * blk * (blk + hd + 2) >= kDeferredValues) {
            snapshot = std::make_shared<FlashSnapshot>();
            snapshot->q = read_host(be_, t.q.t);
            snapshot->k = read_host(be_, t.k.t);
            snapshot->v = read_host(be_, t.v.t);
            if (key_mask) snapshot->mask = read_host(be_, keys_mask);
            snapshot->q_shape = t.q.t.shape;
            snapshot->kv_shape = t.k.t.shape;
            snapshot->args = a;
            snapshot->args.key_mask = nullptr;  // the replay points these at its own buffers
            snapshot->args.q = snapshot->args.k = snapshot->args.v = TensorDesc{};
        }
        std::vector<Source> last;  // each query block's final acc and l
        double kept = 0;           // tile values recorded so far
        bool keeping = true;       // the first tiles only: once one is left out, so are the rest
        bool ran = false;
        for (std::int64_t i = 0; i < c_.query_blocks(); ++i) {
            const std::int64_t q0 = i * blk, nq = std::min(blk, T - q0);
            Val prev_m, prev_l, prev_acc;
            for (std::int64_t j = 0; j < c_.key_blocks(); ++j) {
                if (!c_.tile_runs(i, j)) continue;
                const std::int64_t k0 = j * blk, nk = std::min(blk, S - k0);
                const double values = static_cast<double>(B * H * (nq * nk + 2 * nq + nq * hd));
                rec_.set_rows(q0, nq);
                rec_.set_keys(k0, nk);
                rec_.begin(Op::Tile);
                keeping = keeping && kept + values <= kFlashTileValues;
                if (keeping) kept += values;
                rec_.set_tile(static_cast<int>(i), static_cast<int>(j), keeping);
                if (!one_pass && keeping && !snapshot) {
                    a.q_begin = q0, a.q_end = q0 + nq, a.k_begin = k0, a.k_end = k0 + nk;
                    a.tile = tile;
                    be_.flash_attention(a);
                } else if (!ran) {
                    // Recording nothing, or the tiles' values made later: every tile in one
                    // call that keeps none (a backend may cut it into larger pieces), with the
                    // division when nothing is recorded. Else the first tile whose values are
                    // left out: it and every tile after it in two such calls (the rest of this
                    // query block, then the blocks after it).
                    a.tile = TensorDesc{};
                    const bool all = one_pass || snapshot;
                    a.q_begin = all ? 0 : q0, a.q_end = all ? T : q0 + nq, a.k_begin = all ? 0 : k0, a.k_end = S;
                    a.normalize = one_pass;
                    be_.flash_attention(a);
                    a.q_begin = q0 + nq, a.q_end = T, a.k_begin = 0;
                    if (!all && a.q_begin < T) be_.flash_attention(a);
                    ran = true;
                }
                rec_.computed(2, 4.0 * B * H * nq * nk * hd);
                const auto later = [&](int which) -> std::shared_ptr<const DeferredValues> {
                    if (!snapshot || !keeping) return nullptr;
                    return std::make_shared<const TileTensor>(snapshot, q0, nq, k0, nk, which);
                };
                const TensorDesc s{tile.buffer, 0, {B, H, nq, nk}, {H * blk * blk, blk * blk, blk, 1}};
                // The scores read the key padding mask too, where there is one (<pad> keys get -inf).
                std::vector<Source> read{t.q.src, t.k.src};
                if (key_mask) read.push_back(key_mask->src);
                const Val scores = rec_.tensor("tile_scores", s, Storage::New, read, row_axes(4, Axis::Key), later(0));
                const bool first = prev_m.src.step < 0;
                const Storage st = first ? Storage::New : Storage::InPlace;
                // Updated in place: the rows as they were come first (the buffer they share).
                const auto from = [&](std::vector<Source> links, const Val& before) {
                    if (!first) links.insert(links.begin(), before.src);
                    return links;
                };
                const Axes per_row{Axis::Batch, Axis::Head, Axis::Token};  // one number per row of each head
                prev_m = rec_.tensor("m", flash_rows(m, q0, nq), st, from({scores.src}, prev_m), per_row, later(1));
                prev_l = rec_.tensor("l", flash_rows(l, q0, nq), st, from({scores.src, prev_m.src}, prev_l), per_row,
                                     later(2));
                prev_acc = rec_.tensor("acc", flash_rows(acc, q0, nq), st,
                                       from({scores.src, prev_m.src, t.v.src}, prev_acc), row_axes(4, Axis::Feature),
                                       later(3));
                rec_.end();
            }
            last.push_back(prev_acc.src);
            last.push_back(prev_l.src);
        }

        rec_.whole_pass();
        rec_.begin(Op::Normalize);
        if (!one_pass) {
            a.q_begin = 0, a.q_end = T, a.k_begin = a.k_end = 0, a.normalize = true;
            a.tile = TensorDesc{};
            be_.flash_attention(a);
        }
        rec_.computed(0, 0);
        const Val out = rec_.tensor("context_vec", acc, Storage::InPlace, last, row_axes(4, Axis::Feature));
        rec_.end();
        return out;
    }

    float scale_factor() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd))); }

    // `fused`: left to the softmax step's one pass (nothing computed here).
    // `later`: the values made when first shown (GridValues), or none.
    Val mask(const Val& scores, int head, bool fused, std::shared_ptr<const DeferredValues> later) {
        rec_.begin(Op::Mask, head);
        if (!fused) be_.causal_mask(scores.t);
        rec_.computed(0, 0);
        const Val out = rec_.tensor("attn_scores", scores.t, Storage::InPlace, {scores.src},
                                    row_axes(scores.t.rank(), Axis::Key), std::move(later));
        rec_.end();
        return out;
    }

    // Padded keys (the first tk columns of the [B, S] key padding mask) become -inf.
    Val pad_mask(const Val& scores, int head, const Val& key_mask, std::int64_t tk, bool fused,
                 std::shared_ptr<const DeferredValues> later) {
        rec_.begin(Op::PadMask, head);
        if (!fused) be_.masked_fill(scores.t, TensorDesc{key_mask.t.buffer, key_mask.t.offset, {B, tk}, key_mask.t.strides});
        rec_.computed(0, 0);
        const Val out = rec_.tensor("attn_scores", scores.t, Storage::InPlace, {scores.src, key_mask.src},
                                    row_axes(scores.t.rank(), Axis::Key), std::move(later));
        rec_.end();
        return out;
    }

    Val scale(const Val& scores, int head, bool fused, std::shared_ptr<const DeferredValues> later) {
        rec_.begin(Op::Scale, head);
        if (!fused) be_.scale(scores.t, scale_factor());
        rec_.computed(0, 0);
        const Val out = rec_.tensor("attn_scores", scores.t, Storage::InPlace, {scores.src},
                                    row_axes(scores.t.rank(), Axis::Key), std::move(later));
        rec_.end();
        return out;
    }

    Val dropout(const Val& weights, int head) {
        // The mask is cut from one [B, H, T, S] draw, so loop mode's heads drop the same cells
        // as the batched modes. It is drawn whenever the pass computes, whether or not values
        // are recorded.
        const TensorDesc keep_mask = contiguous(upload_made(numel(weights.t.shape), [&] {
            const std::int64_t per_head = T * S;
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
        const TensorDesc out = fresh(weights.t.shape);
        be_.multiply(weights.t, keep_mask, static_cast<float>(1.0 / (1.0 - c_.dropout)), out);
        rec_.computed(0, 0);
        const Axes grid = row_axes(out.rank(), Axis::Key);
        const Val mask_rec = rec_.tensor("dropout_mask", keep_mask, Storage::New, {}, grid);
        const Val result = rec_.tensor("attn_weights", out, Storage::New, {weights.src, mask_rec.src}, grid);
        rec_.end();
        return result;
    }

    // ---- transpose back [B,H,n,hd] -> [B,n,H,hd], then merge (copy) -> [B,n,D_out] ------
    Val merge(const Val& ctx, std::int64_t n) {
        rec_.begin(Op::TransposeBack);
        rec_.computed(0, 0);
        const Val back = rec_.tensor("context_vec", transpose(ctx.t, 1, 2), Storage::View, {ctx.src},
                                     {Axis::Batch, Axis::Token, Axis::Head, Axis::Feature});
        rec_.end();

        rec_.begin(Op::Merge);
        const int buf = alloc({B, n, D});
        be_.copy(back.t, contiguous(buf, back.t.shape));
        rec_.computed(0, 0);
        const Val merged = rec_.tensor("context_vec", contiguous(buf, {B, n, D}), Storage::Copy, {back.src}, row_axes(3, Axis::Feature));
        rec_.end();
        return merged;
    }

    // ---- loop mode: per head h, three small matmuls and its own attention; concat -------
    // Head h's three small projections: its rows of W_query, and those of its KV head's
    // W_key and W_value (head h / (H / G)).
    Qkv project_head(std::int64_t h, const QkvLinears& w, const Inputs2& in) {
        const std::int64_t g = h / c_.group_size();
        rec_.begin(Op::Project, static_cast<int>(h));
        const Qkv t = project_three({w.q.head(h, hd), w.k.head(g, hd), w.v.head(g, hd)}, in);
        rec_.end();
        return t;
    }

    Val loop_heads(const Inputs2& in) {
        const QkvLinears w = upload_qkv();
        std::vector<Val> outputs;
        for (std::int64_t h = 0; h < H; ++h)
            outputs.push_back(attention(project_head(h, w, in), static_cast<int>(h), c_.causal,
                                        key_mask_.t.buffer >= 0 ? &key_mask_ : nullptr));

        rec_.begin(Op::Concat);
        const int buf = alloc({B, T, D});
        std::vector<Source> from;  // head h's output is from[h]
        for (std::int64_t h = 0; h < H; ++h) {
            be_.copy(outputs[h].t, TensorDesc{buf, h * hd, {B, T, hd}, {T * D, D, 1}});
            from.push_back(outputs[h].src);
        }
        rec_.computed(0, 0);
        const Val merged = rec_.tensor("context_vec", contiguous(buf, {B, T, D}), Storage::Copy, from, row_axes(3, Axis::Feature));
        rec_.end();
        return merged;
    }

    // ---- output projection [B,n,D_out] @ W_out^T + b_out ------------------------------
    Val out_proj(const Val& ctx, std::int64_t n) {
        const Linear w = upload_linear("w_out", "b_out", D, D);
        rec_.begin(Op::OutProj);
        const TensorDesc out = fresh({B, n, D});
        linear(ctx.t, w, out);
        rec_.computed(1, 2.0 * B * n * D * D);
        const Val result = rec_.tensor("output", out, Storage::New, w.links(ctx.src), row_axes(3, Axis::Feature));
        rec_.end();
        return result;
    }

    // ---- decoding: round 0 runs the first P tokens at once (prefill, causal); round r runs
    // token P + r - 1 alone against the KV cache [B, G, T, hd], which grows by one position
    // per round. Then the outputs of all rounds are assembled into [B, T, D_out].
    void decode() {
        const std::int64_t P = c_.decode_from;
        const TensorDesc cache_k = fresh({B, G, T, hd}), cache_v = fresh({B, G, T, hd});
        Qkv cache;  // the cache so far (keys, values), as last recorded
        std::vector<std::pair<std::int64_t, Val>> outputs;  // (first token, [B, n, D_out])
        for (int round = 0; round <= T - P; ++round) {
            const std::int64_t pos = round == 0 ? 0 : P + round - 1, n = round == 0 ? P : 1;
            rec_.set_round(round);
            rec_.set_rows(pos, n);
            rec_.set_keys(pos, n);  // the round's new keys, until they join the cache
            const TensorDesc rows{x_.t.buffer, pos * Di, {B, n, Di}, {T * Di, Di, 1}};
            const Val x{rows, x_.src};
            Qkv qkv = heads_view(project({x, n, x, n}), n, n);
            cache = cache_append(qkv, cache, cache_k, cache_v, pos, n);
            qkv = {qkv.q, cache.k, cache.v};
            if (c_.grouped()) qkv = repeat_kv(qkv);
            Val ctx = merge(attention(qkv, -1, round == 0, key_mask_.t.buffer >= 0 ? &key_mask_ : nullptr), n);
            if (c_.out_proj) ctx = out_proj(ctx, n);
            outputs.emplace_back(pos, ctx);
        }
        rec_.set_round(-1);
        rec_.whole_pass();

        rec_.begin(Op::Assemble);
        const int buf = alloc({B, T, D});
        std::vector<Source> from;
        for (const auto& [pos, out] : outputs) {
            be_.copy(out.t, TensorDesc{buf, pos * D, out.t.shape, {T * D, D, 1}});
            from.push_back(out.src);
        }
        rec_.computed(0, 0);
        rec_.tensor(c_.out_proj ? "output" : "context_vec", contiguous(buf, {B, T, D}), Storage::Copy, from,
                    row_axes(3, Axis::Feature));
        rec_.end();
    }

    // Writes the n new positions' keys and values (from `t`, [B, G, n, hd]) into the cache at
    // `pos` and records the cache so far, [B, G, pos + n, hd], a view of the cache buffer:
    // the prefill's write fills it (copy), each later one adds a row in place.
    Qkv cache_append(const Qkv& t, const Qkv& before, const TensorDesc& cache_k, const TensorDesc& cache_v,
                     std::int64_t pos, std::int64_t n) {
        const auto window = [&](const TensorDesc& cache, std::int64_t first, std::int64_t len) {
            return TensorDesc{cache.buffer, cache.offset + first * hd, {B, G, len, hd}, cache.strides};
        };
        rec_.set_keys(0, pos + n);  // from here on the round reads the cache so far
        rec_.begin(Op::CacheAppend);
        be_.copy(t.k.t, window(cache_k, pos, n));
        be_.copy(t.v.t, window(cache_v, pos, n));
        rec_.computed(0, 0);
        const bool first = pos == 0;
        const Storage storage = first ? Storage::Copy : Storage::InPlace;
        const auto from = [&](const Val& old, const Val& fresh_rows) {
            return first ? std::vector<Source>{fresh_rows.src} : std::vector<Source>{old.src, fresh_rows.src};
        };
        const Axes cached = qkv_axes(Arrangement::HeadPanels, true);
        const Val k = rec_.tensor("keys", window(cache_k, 0, pos + n), storage, from(before.k, t.k), cached);
        const Val v = rec_.tensor("values", window(cache_v, 0, pos + n), storage, from(before.v, t.v), cached);
        rec_.end();
        return {t.q, k, v};
    }

    const Config& c_;
    const Inputs& in_;
    const Weights& w_;
    Backend& be_;
    Resources& res_;
    Recorder rec_;
    const Work work_;
    const std::int64_t B, T, S, Di, Dk, D, H, G, hd, KV;
    Val x_, context_, key_mask_;
};

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
    void masked_fill(const TensorDesc&, const TensorDesc&) override {}
    void masked_softmax(const TensorDesc&, const TensorDesc&, float, bool, const TensorDesc*) override {}
    void scale(const TensorDesc&, float) override {}
    void softmax(const TensorDesc&, const TensorDesc&) override {}
    void multiply(const TensorDesc&, const TensorDesc&, float, const TensorDesc&) override {}
    void flash_attention(const FlashArgs&) override {}
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

namespace {

// The memory estimate and the matmul FLOPs, from one shapes-only walk (a walk of 65,536
// flash tiles takes about 0.4 s: check_config makes it once).
MemoryEstimate estimate_from_walk(const Config& c, double* flops) {
    ShapeOnlyBackend backend;
    const Trace shapes = walk(c, backend);
    if (flops)
        for (const Step& s : shapes.steps) *flops += s.flops;
    const double f = sizeof(float);
    MemoryEstimate e;
    e.backend_bytes = f * static_cast<double>(backend.elements_);
    // Inputs and weights are held twice on the host (the caller's, the trace's copy); fused
    // mode stacks W_qkv once more while uploading it; a recorded step reads back at most its
    // largest buffer at a time.
    const double kv = static_cast<double>(c.kv_width()), D = static_cast<double>(c.d_out);
    const double inputs = static_cast<double>(c.batch) *
                          (static_cast<double>(c.num_tokens()) * static_cast<double>(c.d_in) +
                           (c.cross() ? static_cast<double>(c.num_keys()) * static_cast<double>(c.key_dim()) : 0) +
                           (c.padded() ? static_cast<double>(c.num_keys()) : 0));
    const double qkv_weights = D * static_cast<double>(c.d_in) + 2 * kv * static_cast<double>(c.key_dim()) +
                               (c.qkv_bias ? D + 2 * kv : 0);
    double host = inputs + qkv_weights + (c.out_proj ? D * (D + 1) : 0);
    // The JSON writes the inputs before the steps and the weights after them, a tensor at a time.
    const double json_head = std::max({inputs, D * static_cast<double>(c.d_in), kv * static_cast<double>(c.key_dim()),
                                       c.out_proj ? D * D : 0.0});
    host *= 2;
    if (c.mode == Mode::Fused) host += qkv_weights;
    double trace = 0, readback = 0;  // readback: the most one step holds (each buffer read once)
    double json_step = 0;            // the most values one step records
    for (const Step& s : shapes.steps) {
        if (!s.tile_values) continue;  // a flash tile past the first ones: no values kept
        std::map<int, double> read;
        double values = 0;
        for (const TensorRecord& t : s.tensors) {
            values += static_cast<double>(numel(t.shape));
            read[t.buffer] = static_cast<double>(backend.size_of(t.buffer));
        }
        trace += values;
        json_step = std::max(json_step, values);
        double step_total = 0;
        for (const auto& [id, n] : read) step_total += n;
        readback = std::max(readback, step_total);
    }
    e.host_bytes = f * (host + readback);
    e.trace_bytes = f * trace;
    // The steps' own records (words, shapes, links), which the walk has made as a run does.
    e.record_bytes = static_cast<double>(shapes.record_bytes());
    if (c.mode == Mode::Flash && c.backend == BackendKind::Gl)
        e.working_bytes = 2 * f *
                          (static_cast<double>(c.batch * c.kv_head_count() * c.num_keys() * c.head_dim()) +
                           static_cast<double>(kFlashChunkFloats));
    e.json_bytes = kJsonBytesPerValue * std::min(kJsonPieceValues, std::max(json_step, json_head));
    return e;
}

}  // namespace

MemoryEstimate estimate_memory(const Config& c) { return estimate_from_walk(c, nullptr); }

namespace {

// The machine's memory: a --memory-budget above it does not make a run fit (the kernel ends
// the process part way, as it did llama2-7b at a million tokens under a 64 TiB budget). 0
// where it cannot be told (the page, whose limit is the browser's).
double machine_memory() {
#if defined(__EMSCRIPTEN__)
    return 0;
#else
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
#endif
}

}  // namespace

bool CheckedConfig::fits_budget(bool with_json) const {
    const double need = memory.total() + (with_json ? memory.json_bytes : 0), machine = machine_memory();
    return need <= static_cast<double>(config.memory_budget) && (machine <= 0 || need <= machine);
}

void CheckedConfig::require_budget(bool with_json) const {
    if (fits_budget(with_json)) return;
    const double need = memory.total() + (with_json ? memory.json_bytes : 0);
    if (need <= static_cast<double>(config.memory_budget))
        throw ConfigError("this configuration needs about " + human_bytes(need) + ", more than this machine's " +
                          human_bytes(machine_memory()) + " of memory (whatever --memory-budget says); use fewer tokens or a smaller D_out");
    throw ConfigError("this configuration needs about " + human_bytes(memory.total() + (with_json ? memory.json_bytes : 0)) +
                      " (backend buffers " + human_bytes(memory.backend_bytes + memory.working_bytes) + ", host copies " +
                      human_bytes(memory.host_bytes) + ", trace " + human_bytes(memory.trace_bytes + memory.record_bytes) +
                      (with_json ? ", writing its JSON " + human_bytes(memory.json_bytes) : std::string()) +
                      "), over the memory budget of " +
                      human_bytes(static_cast<double>(config.memory_budget)) +
                      "; use fewer tokens or a smaller D_out, or raise --memory-budget");
}

CheckedConfig check_config(const Config& c) {
    validate(c);
    CheckedConfig checked;
    checked.config = c;
    checked.memory = estimate_from_walk(c, &checked.flops);
    return checked;
}

WorkEstimate estimate_work(const CheckedConfig& checked, Backend& backend) {
    constexpr std::int64_t M = 128, K = 512, N = 512;
    const int a = backend.create_buffer(M * K), b = backend.create_buffer(K * N), c = backend.create_buffer(M * N);
    std::vector<float> values(static_cast<std::size_t>(K * N));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) - 3.0f;
    backend.write(b, values);
    values.resize(static_cast<std::size_t>(M * K));
    backend.write(a, values);
    const TensorDesc da{a, 0, {M, K}, {K, 1}}, db{b, 0, {K, N}, {N, 1}}, dc{c, 0, {M, N}, {N, 1}};
    backend.matmul(da, db, false, nullptr, dc);  // the first: a kernel to compile, memory to map
    backend.finish();
    double best = 1e30;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        backend.matmul(da, db, false, nullptr, dc);
        backend.finish();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    backend.release({a, b, c});
    backend.take_stats();
    WorkEstimate w;
    w.gflops_rate = 2.0 * M * K * N / std::max(best, 1e-9) / 1e9;
    // The run's other kernels (mask, softmax, flash's tiles) go slower than a plain product:
    // llama2-7b at T = 2048 in flash mode took 1.37x its FLOPs at the measured rate on
    // llvmpipe (71 against 52 s); 1.5 keeps the estimate on the long side.
    w.seconds = 1.5 * checked.flops / (w.gflops_rate * 1e9) + (checked.memory.trace_bytes + checked.memory.record_bytes) / 1e9;
    return w;
}

void require_time(const CheckedConfig& checked, Backend& backend) {
    if (checked.flops < 2e9) return;
    const WorkEstimate w = estimate_work(checked, backend);
    if (w.seconds <= checked.config.time_budget) return;
    const auto duration = [](double s) {
        return s < 120 ? format_number(std::round(s)) + " s" : format_number(std::round(s / 6) / 10) + " minutes";
    };
    throw WorkError("this run would take about " + duration(w.seconds) + " (" +
                    format_number(std::round(checked.flops / 1e8) / 10) + " GFLOP at " +
                    format_number(std::round(w.gflops_rate * 10) / 10) + " GFLOP/s, measured on the " +
                    backend.name() + " backend just now), over the time budget of " +
                    duration(checked.config.time_budget) + "; use fewer tokens" +
                    (std::string(backend.name()) == "gl" ? ", the CPU backend" : "") +
                    " or a smaller D_out, or raise --time-budget");
}

namespace {

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
    if (options.record_values && options.copy_inputs) {
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
    if (!options.projections_only && !trace.steps.empty()) require_finite(trace.steps.back().tensors.back());
    return trace;
}

Trace run(const CheckedConfig& config, const Inputs& inputs, const Weights& weights, Backend& backend,
          const RunOptions& options) {
    require_time(config, backend);
    return Runner(config, inputs, weights, backend).run(options);
}

Trace run(const Config& config, const Inputs& inputs, const Weights& weights, Backend& backend) {
    return run(check_config(config), inputs, weights, backend);
}

Trace plan(const CheckedConfig& checked) {
    ShapeOnlyBackend backend;
    return walk(checked.config, backend);
}

Trace plan(const Config& config) { return plan(check_config(config)); }

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
            ShapeOnlyBackend backend;
            const Trace t = walk(other, backend);
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
