#include "forward.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "forward_flash.hpp"
#include "forward_steps.hpp"
#include "replay_plan.hpp"
#include "backward.hpp"
#include "tape.hpp"

namespace headsplit::detail {

namespace {

// One forward pass: each op a call on the backend, reported to the observer as a step. Names
// follow the teaching code: queries, keys, values, attn_scores, attn_weights, context_vec.
class Forward : private Steps {
public:
    Forward(const Config& c, const Inputs& in, const Weights& w, Backend& be, Resources& res, StepObserver& obs,
            Work work)
        : Steps(obs, c.num_tokens(), c.num_keys()), c_(c), in_(in), w_(w), be_(be), buf_(be, res, work), B(c.batch),
          T(c.num_tokens()), S(c.num_keys()), Di(c.d_in), Dk(c.key_dim()), D(c.d_out), H(c.heads),
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

    // The whole pass, op by op. G: key/value heads (H unless grouped); S: keys (T unless
    // cross-attention).
    void run() {
        input();  // x [B, T, D_in] (the context [B, S, D_ctx], the key padding mask [B, S])
        if (c_.decoding()) {
            decode();  // rounds of the steps below on a growing KV cache, then assemble [B, T, D_out]
            return;
        }
        const Inputs2 in = whole_inputs();
        tape_.x = x_, tape_.context = context_, tape_.key_mask = key_mask_;
        Val ctx;  // context_vec [B, T, D_out]
        if (c_.mode == Mode::Loop) {
            ctx = loop_heads(in);  // per head: q [B, T, hd], k, v [B, S, hd], its attention; concat
        } else {
            tape_.rows = project(in);
            Qkv qkv = heads_view(tape_.rows, T, S);  // q [B, T, D_out] -> [B, H, T, hd]; k, v [B, G, S, hd]
            if (c_.mode == Mode::Flash) {
                // tiles of [B, H, blk, blk], then acc / l [B, H, T, hd]
                tape_.heads.push_back({-1, qkv, qkv, {}, {}, {}});
                ctx = tape_.flash_out = flash_tiles(c_, be_, buf_, *this, qkv, key_mask(), scale_factor(), &tape_.flash_m,
                                                    &tape_.flash_l);
            } else {
                tape_.heads.push_back({-1, qkv, qkv, {}, {}, {}});
                if (c_.grouped()) qkv = tape_.heads.back().qkv = repeat_kv(qkv);  // k, v [B, G, S, hd] -> [B, H, S, hd]
                ctx = attention(qkv, -1, c_.causal, key_mask());  // [B, H, T, hd]
            }
            ctx = merge(ctx, T);  // [B, H, T, hd] -> [B, T, D_out]
        }
        tape_.merged = ctx;
        if (c_.out_proj) out_proj(ctx, T);  // output [B, T, D_out]
    }

    // What run() kept for the backward pass.
    const Tape& tape() const { return tape_; }

private:
    // What the projections read: the queries' rows (x, or some of its tokens when decoding)
    // and the keys' and values' rows (the same, or the context in cross-attention).
    struct Inputs2 {
        Val q;
        std::int64_t tq = 0;
        Val kv;
        std::int64_t tk = 0;
    };

    // The key padding mask, or none.
    const Val* key_mask() const { return key_mask_.t.buffer >= 0 ? &key_mask_ : nullptr; }

    Linear upload_linear(const char* w_name, const char* b_name, std::int64_t out, std::int64_t in) {
        const std::vector<float>& w = *w_.find(w_name);
        const std::vector<float>& b = *w_.find(b_name);
        const bool has_bias = std::string(b_name) == "b_out" ? c_.out_proj : c_.qkv_bias;
        Linear l{contiguous(buf_.upload_from(out * in, w), {out, in}), TensorDesc{}, has_bias, w_name,
                 b_name};
        if (l.has_bias) l.b = contiguous(buf_.upload_from(out, b), {out});
        return l;
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
    // Records queries, keys and values made from (per tensor) `from`.
    Qkv record_qkv(const TensorDesc& q, const TensorDesc& k, const TensorDesc& v, Storage storage,
                   const std::vector<Source>& qf, const std::vector<Source>& kf, const std::vector<Source>& vf,
                   Arrangement a) {
        return {record("queries", q, storage, qf, qkv_axes(a, false)),
                record("keys", k, storage, kf, qkv_axes(a, true)),
                record("values", v, storage, vf, qkv_axes(a, true))};
    }

    // ---- step 0: x [B, T, D_in] (and the context [B, S, D_context], the key padding mask [B, S])
    void input() {
        begin(Op::Input);
        const TensorDesc x = contiguous(buf_.upload_from(B * T * Di, in_.x), {B, T, Di});
        TensorDesc context, key_mask;
        if (c_.cross()) context = contiguous(buf_.upload_from(B * S * Dk, in_.context), {B, S, Dk});
        if (c_.padded()) key_mask = contiguous(buf_.upload_from(B * S, in_.key_padding_mask), {B, S});
        obs_.computed(0, 0);
        x_ = record("x", x, Storage::New, {}, {Axis::Batch, Axis::Token, Axis::Feature});
        if (c_.cross()) context_ = record("context", context, Storage::New, {}, {Axis::Batch, Axis::Key, Axis::Feature});
        if (c_.padded()) key_mask_ = record("key_padding_mask", key_mask, Storage::New, {}, {Axis::Batch, Axis::Key});
        obs_.end();
    }

    Inputs2 whole_inputs() const { return {x_, T, c_.cross() ? context_ : x_, S}; }

    struct QkvLinears {
        Linear q, k, v;
    };
    QkvLinears upload_qkv() {
        const QkvLinears w{upload_linear("w_query", "b_query", D, Di), upload_linear("w_key", "b_key", KV, Dk),
                           upload_linear("w_value", "b_value", KV, Dk)};
        tape_.w_query = w.q, tape_.w_key = w.k, tape_.w_value = w.v;
        return w;
    }

    // Three matmuls x @ W^T into new tensors, counted and recorded (the caller opens and
    // closes the step): split mode with the whole weights, loop mode with a head's.
    Qkv project_three(const QkvLinears& w, const Inputs2& in) {
        const std::int64_t qw = w.q.w.shape[0], kw = w.k.w.shape[0];
        const TensorDesc q = buf_.fresh({B, in.tq, qw});
        const TensorDesc k = buf_.fresh({B, in.tk, kw}), v = buf_.fresh({B, in.tk, kw});
        linear(be_, in.q.t, w.q, q);
        linear(be_, in.kv.t, w.k, k);
        linear(be_, in.kv.t, w.v, v);
        obs_.computed(3, 2.0 * B * (in.tq * Di * qw + 2.0 * in.tk * Dk * kw));
        return record_qkv(q, k, v, Storage::New, w.q.links(in.q.src), w.k.links(in.kv.src), w.v.links(in.kv.src),
                          Arrangement::Rows);
    }

    Qkv project(const Inputs2& in) { return c_.mode == Mode::Fused ? project_fused(in) : project_split(in); }

    // ---- step 1 (split): Q, K, V = x @ W^T, one matmul each ---------------------------
    Qkv project_split(const Inputs2& in) {
        const QkvLinears w = upload_qkv();
        begin(Op::Project);
        const Qkv t = project_three(w, in);
        obs_.end();
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
        Linear w{contiguous(buf_.upload_made(width * Di, [&] { return stack(w_.w_query, w_.w_key, w_.w_value); }),
                            {width, Di}),
                 TensorDesc{}, c_.qkv_bias, "", ""};
        if (c_.qkv_bias)
            w.b = contiguous(buf_.upload_made(width, [&] { return stack(w_.b_query, w_.b_key, w_.b_value); }), {width});
        begin(Op::Project);
        const TensorDesc qkv = buf_.fresh({B, in.tq, width});
        linear(be_, in.q.t, w, qkv);
        obs_.computed(1, 2.0 * B * in.tq * Di * width);
        std::vector<Source> from{in.q.src, Source::of_weight("w_query"), Source::of_weight("w_key"),
                                 Source::of_weight("w_value")};
        if (c_.qkv_bias)
            for (const char* bias : {"b_query", "b_key", "b_value"}) from.push_back(Source::of_weight(bias));
        const Val whole = record("qkv", qkv, Storage::New, from, {Axis::Batch, Axis::Token, Axis::Feature});
        obs_.end();
        tape_.w_qkv = w, tape_.qkv = whole;

        begin(Op::Split);
        obs_.computed(0, 0);
        const Qkv t = record_qkv(narrow_last(qkv, 0, D), narrow_last(qkv, D, KV), narrow_last(qkv, D + KV, KV),
                                 Storage::View, {whole.src}, {whole.src}, {whole.src}, Arrangement::Rows);
        obs_.end();
        return t;
    }

    // ---- view [B,T,D_out] -> [B,T,H,hd] (keys, values: G heads), then transpose -> [B,H,T,hd]
    Qkv heads_view(const Qkv& in, std::int64_t tq, std::int64_t tk) {
        begin(Op::View);
        obs_.computed(0, 0);
        const Qkv viewed = record_qkv(view(in.q.t, {B, tq, H, hd}), view(in.k.t, {B, tk, G, hd}),
                                      view(in.v.t, {B, tk, G, hd}), Storage::View, {in.q.src}, {in.k.src}, {in.v.src},
                                      Arrangement::RowsOfHeads);
        obs_.end();

        begin(Op::Transpose);
        obs_.computed(0, 0);
        const Qkv t = record_qkv(transpose(viewed.q.t, 1, 2), transpose(viewed.k.t, 1, 2), transpose(viewed.v.t, 1, 2),
                                 Storage::View, {viewed.q.src}, {viewed.k.src}, {viewed.v.src}, Arrangement::HeadPanels);
        obs_.end();
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
            const TensorDesc out = buf_.fresh({B, H, n, hd});
            be_.copy(expanded, view(out, {B, G, r, n, hd}));
            return out;
        };
        begin(Op::RepeatKv);
        const TensorDesc k = repeat(t.k.t), v = repeat(t.v.t);
        obs_.computed(0, 0);
        const Axes repeated{Axis::Batch, Axis::Head, Axis::Key, Axis::Feature};
        const Val keys = record("keys", k, Storage::Copy, {t.k.src}, repeated);
        const Val values = record("values", v, Storage::Copy, {t.v.src}, repeated);
        obs_.end();
        return {t.q, keys, values};
    }

    // ---- scores, mask, scale, softmax, dropout, context: for all heads (head = -1) or one
    // head (loop mode). q: [..., Tq, hd], k, v: [..., Tk, hd]. Returns context_vec [..., Tq, hd].
    Val attention(const Qkv& t, int head, bool causal, const Val* key_mask) {
        const std::int64_t tk = t.k.t.shape[t.k.t.rank() - 2];
        const TensorDesc keys_mask =
            key_mask ? TensorDesc{key_mask->t.buffer, key_mask->t.offset, {B, tk}, key_mask->t.strides} : TensorDesc{};
        const TensorDesc* pad = key_mask ? &keys_mask : nullptr;  // [B, Tk]
        const GridPlan plan = plan_grid(be_, obs_.reads_values(), t.q.t, t.k.t, scale_factor(), pad, causal);
        const bool fused = plan.fusion.fused;
        std::vector<Op> chain;  // the grid's steps so far, after Q @ K^T
        const auto then = [&](Op op) {
            chain.push_back(op);
            return grid_values(plan.snapshot, chain);
        };

        // attn_scores = q @ k^T: [..., Tq, hd] x [..., Tk, hd]^T -> [..., Tq, Tk]
        Val scores = qk_scores(t, head, plan.fusion.skip_upper, grid_values(plan.snapshot, chain));
        // scale, causal mask, key padding: in place on [..., Tq, Tk] (left to the softmax when fused)
        if (c_.scale_first) scores = scale(scores, head, fused, then(Op::Scale));
        if (causal) scores = mask(scores, head, fused, then(Op::Mask));
        if (key_mask) scores = pad_mask(scores, head, *key_mask, tk, fused, then(Op::PadMask));
        if (!c_.scale_first) scores = scale(scores, head, fused, then(Op::Scale));
        // attn_weights = softmax(attn_scores, dim=-1): [..., Tq, Tk]
        Val weights = softmax(scores, head, fused, causal, pad, then(Op::Softmax));
        HeadTape* kept = tape_.heads.empty() ? nullptr : &tape_.heads.back();  // none when decoding
        if (kept) kept->weights = kept->dropped = weights;
        // attn_weights = dropout(attn_weights): [..., Tq, Tk]
        if (c_.dropout > 0) weights = dropout(weights, head);
        if (kept && c_.dropout > 0) kept->dropped = weights;
        // context_vec = attn_weights @ v: [..., Tq, Tk] x [..., Tk, hd] -> [..., Tq, hd]
        return weighted_values(weights, t, head, plan.fusion.skip_upper);
    }

    // Multiply-adds x 2 of one of attention's two matmuls, for all heads or one.
    double attention_flops(int head, std::int64_t tq, std::int64_t tk) const {
        const std::int64_t heads_here = head < 0 ? H : 1;
        return 2.0 * B * heads_here * tq * tk * hd;
    }

    // ---- attn_scores = q @ k^T: [..., Tq, hd] x [..., Tk, hd]^T -> [..., Tq, Tk].
    // `skip_upper`: the work above a causal diagonal is left out (nothing will read it).
    Val qk_scores(const Qkv& t, int head, bool skip_upper, Later later) {
        const std::int64_t tq = t.q.t.shape[t.q.t.rank() - 2], tk = t.k.t.shape[t.k.t.rank() - 2];
        Shape tt = t.q.t.shape;
        tt.back() = tk;  // [..., Tq, Tk]
        begin(Op::Scores, head);
        const TensorDesc grid = buf_.fresh(tt);
        if (skip_upper) be_.causal_matmul(t.q.t, t.k.t, true, grid, true);
        else be_.matmul(t.q.t, t.k.t, true, nullptr, grid);
        obs_.computed(1, attention_flops(head, tq, tk));
        const Val scores =
            record("attn_scores", grid, Storage::New, {t.q.src, t.k.src}, row_axes(tt.size(), Axis::Key), std::move(later));
        obs_.end();
        return scores;
    }

    float scale_factor() const { return c_.scale_factor(); }

    // ---- scale, causal mask, key padding: attn_scores [..., Tq, Tk] changed in place by
    // `change`, unless `fused` (the softmax step's one pass does it then). `also`: what the
    // step reads besides the scores; `later`: the values made when first shown, or none.
    template <class Change>
    Val in_place(Op op, const Val& scores, int head, bool fused, Change change, std::vector<Source> also, Later later) {
        begin(op, head);
        if (!fused) change();
        obs_.computed(0, 0);
        also.insert(also.begin(), scores.src);
        const Val out = record("attn_scores", scores.t, Storage::InPlace, std::move(also),
                               row_axes(scores.t.rank(), Axis::Key), std::move(later));
        obs_.end();
        return out;
    }
    // attn_scores = attn_scores / sqrt(head_dim)
    Val scale(const Val& s, int head, bool fused, Later later) {
        return in_place(Op::Scale, s, head, fused, [&] { be_.scale(s.t, scale_factor()); }, {}, std::move(later));
    }
    // attn_scores.masked_fill_(key j > query i, -inf)
    Val mask(const Val& s, int head, bool fused, Later later) {
        return in_place(Op::Mask, s, head, fused, [&] { be_.causal_mask(s.t); }, {}, std::move(later));
    }
    // attn_scores.masked_fill_(key_padding_mask[b, j], -inf): the first tk columns of the [B, S] mask
    Val pad_mask(const Val& s, int head, const Val& key_mask, std::int64_t tk, bool fused, Later later) {
        const TensorDesc keys{key_mask.t.buffer, key_mask.t.offset, {B, tk}, key_mask.t.strides};
        return in_place(Op::PadMask, s, head, fused, [&] { be_.masked_fill(s.t, keys); }, {key_mask.src},
                        std::move(later));
    }

    // ---- attn_weights = dropout(attn_weights): [..., Tq, Tk] times a keep mask / (1 - p)
    Val dropout(const Val& weights, int head) {
        // The mask is cut from one [B, H, T, S] draw, so loop mode's heads drop the same cells
        // as the batched modes. It is drawn whenever the pass computes, whether or not values
        // are recorded.
        const TensorDesc keep_mask = contiguous(buf_.upload_made(numel(weights.t.shape), [&] {
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
        begin(Op::Dropout, head);
        const TensorDesc out = buf_.fresh(weights.t.shape);
        be_.multiply(weights.t, keep_mask, static_cast<float>(1.0 / (1.0 - c_.dropout)), out);
        obs_.computed(0, 0);
        const Axes grid = row_axes(out.rank(), Axis::Key);
        const Val mask_rec = record("dropout_mask", keep_mask, Storage::New, {}, grid);
        const Val result = record("attn_weights", out, Storage::New, {weights.src, mask_rec.src}, grid);
        obs_.end();
        if (!tape_.heads.empty()) tape_.heads.back().keep_mask = mask_rec;
        return result;
    }

    // ---- attn_weights = softmax(attn_scores, dim=-1): [..., Tq, Tk]. `fused`: the mask, the
    // padding (`pad`, [B, Tk], or none) and the scale are this step's one pass.
    Val softmax(const Val& scores, int head, bool fused, bool causal, const TensorDesc* pad, Later later) {
        begin(Op::Softmax, head);
        const TensorDesc probs = buf_.fresh(scores.t.shape);
        if (fused) be_.masked_softmax(scores.t, probs, scale_factor(), causal, pad);
        else be_.softmax(scores.t, probs);
        obs_.computed(0, 0);
        const Val weights = record("attn_weights", probs, Storage::New, {scores.src},
                                   row_axes(probs.rank(), Axis::Key), std::move(later));
        obs_.end();
        return weights;
    }

    // ---- context_vec = attn_weights @ v: [..., Tq, Tk] x [..., Tk, hd] -> [..., Tq, hd].
    // `skip_upper`: the weights above a causal diagonal are 0 and need not be read.
    Val weighted_values(const Val& weights, const Qkv& t, int head, bool skip_upper) {
        const std::int64_t tq = weights.t.shape[weights.t.rank() - 2], tk = weights.t.shape.back();
        begin(Op::Context, head);
        Shape ctx_shape = weights.t.shape;
        ctx_shape.back() = hd;
        const TensorDesc ctx = buf_.fresh(ctx_shape);
        if (skip_upper) be_.causal_matmul(weights.t, t.v.t, false, ctx, false);
        else be_.matmul(weights.t, t.v.t, false, nullptr, ctx);
        obs_.computed(1, attention_flops(head, tq, tk));
        const Val out = record("context_vec", ctx, Storage::New, {weights.src, t.v.src},
                               row_axes(ctx_shape.size(), Axis::Feature));
        obs_.end();
        return out;
    }

    // ---- transpose back [B,H,n,hd] -> [B,n,H,hd], then merge (copy) -> [B,n,D_out] ------
    Val merge(const Val& ctx, std::int64_t n) {
        begin(Op::TransposeBack);
        obs_.computed(0, 0);
        const Val back = record("context_vec", transpose(ctx.t, 1, 2), Storage::View, {ctx.src},
                                     {Axis::Batch, Axis::Token, Axis::Head, Axis::Feature});
        obs_.end();

        begin(Op::Merge);
        const int buf = buf_.alloc({B, n, D});
        be_.copy(back.t, contiguous(buf, back.t.shape));
        obs_.computed(0, 0);
        const Val merged = record("context_vec", contiguous(buf, {B, n, D}), Storage::Copy, {back.src}, row_axes(3, Axis::Feature));
        obs_.end();
        return merged;
    }

    // ---- loop mode: per head h, three small matmuls and its own attention; concat -------
    // Head h's three small projections: its rows of W_query, and those of its KV head's
    // W_key and W_value (head h / (H / G)).
    Qkv project_head(std::int64_t h, const QkvLinears& w, const Inputs2& in) {
        const std::int64_t g = h / c_.group_size();
        begin(Op::Project, static_cast<int>(h));
        const Qkv t = project_three({w.q.head(h, hd), w.k.head(g, hd), w.v.head(g, hd)}, in);
        obs_.end();
        return t;
    }

    Val loop_heads(const Inputs2& in) {
        const QkvLinears w = upload_qkv();
        std::vector<Val> outputs;
        for (std::int64_t h = 0; h < H; ++h) {
            const Qkv t = project_head(h, w, in);
            tape_.heads.push_back({static_cast<int>(h), t, t, {}, {}, {}});
            outputs.push_back(attention(t, static_cast<int>(h), c_.causal, key_mask()));
        }

        begin(Op::Concat);
        const int buf = buf_.alloc({B, T, D});
        std::vector<Source> from;  // head h's output is from[h]
        for (std::int64_t h = 0; h < H; ++h) {
            be_.copy(outputs[h].t, TensorDesc{buf, h * hd, {B, T, hd}, {T * D, D, 1}});
            from.push_back(outputs[h].src);
        }
        obs_.computed(0, 0);
        const Val merged = record("context_vec", contiguous(buf, {B, T, D}), Storage::Copy, from, row_axes(3, Axis::Feature));
        obs_.end();
        return merged;
    }

    // ---- output projection [B,n,D_out] @ W_out^T + b_out ------------------------------
    Val out_proj(const Val& ctx, std::int64_t n) {
        const Linear w = upload_linear("w_out", "b_out", D, D);
        tape_.w_out = w;
        begin(Op::OutProj);
        const TensorDesc out = buf_.fresh({B, n, D});
        linear(be_, ctx.t, w, out);
        obs_.computed(1, 2.0 * B * n * D * D);
        const Val result = record("output", out, Storage::New, w.links(ctx.src), row_axes(3, Axis::Feature));
        obs_.end();
        return result;
    }

    // ---- decoding: round 0 runs the first P tokens at once (prefill, causal); round r runs
    // token P + r - 1 alone against the KV cache [B, G, T, hd], which grows by one position
    // per round. Then the outputs of all rounds are assembled into [B, T, D_out].
    void decode() {
        const std::int64_t P = c_.decode_from;
        const TensorDesc cache_k = buf_.fresh({B, G, T, hd}), cache_v = buf_.fresh({B, G, T, hd});
        Qkv cache;  // the cache so far (keys, values), as last recorded
        std::vector<std::pair<std::int64_t, Val>> outputs;  // (first token, [B, n, D_out])
        for (int round = 0; round <= T - P; ++round) {
            const std::int64_t pos = round == 0 ? 0 : P + round - 1, n = round == 0 ? P : 1;
            set_round(round);
            set_rows(pos, n);
            set_keys(pos, n);  // the round's new keys, until they join the cache
            const TensorDesc rows{x_.t.buffer, pos * Di, {B, n, Di}, {T * Di, Di, 1}};
            const Val x{rows, x_.src};
            Qkv qkv = heads_view(project({x, n, x, n}), n, n);
            cache = cache_append(qkv, cache, cache_k, cache_v, pos, n);
            qkv = {qkv.q, cache.k, cache.v};
            if (c_.grouped()) qkv = repeat_kv(qkv);
            Val ctx = merge(attention(qkv, -1, round == 0, key_mask()), n);
            if (c_.out_proj) ctx = out_proj(ctx, n);
            outputs.emplace_back(pos, ctx);
        }
        set_round(-1);
        whole_pass();

        begin(Op::Assemble);
        const int buf = buf_.alloc({B, T, D});
        std::vector<Source> from;
        for (const auto& [pos, out] : outputs) {
            be_.copy(out.t, TensorDesc{buf, pos * D, out.t.shape, {T * D, D, 1}});
            from.push_back(out.src);
        }
        obs_.computed(0, 0);
        record(c_.out_proj ? "output" : "context_vec", contiguous(buf, {B, T, D}), Storage::Copy, from,
                    row_axes(3, Axis::Feature));
        obs_.end();
    }

    // Writes the n new positions' keys and values (from `t`, [B, G, n, hd]) into the cache at
    // `pos` and records the cache so far, [B, G, pos + n, hd], a view of the cache buffer:
    // the prefill's write fills it (copy), each later one adds a row in place.
    Qkv cache_append(const Qkv& t, const Qkv& before, const TensorDesc& cache_k, const TensorDesc& cache_v,
                     std::int64_t pos, std::int64_t n) {
        const auto window = [&](const TensorDesc& cache, std::int64_t first, std::int64_t len) {
            return TensorDesc{cache.buffer, cache.offset + first * hd, {B, G, len, hd}, cache.strides};
        };
        set_keys(0, pos + n);  // from here on the round reads the cache so far
        begin(Op::CacheAppend);
        be_.copy(t.k.t, window(cache_k, pos, n));
        be_.copy(t.v.t, window(cache_v, pos, n));
        obs_.computed(0, 0);
        const bool first = pos == 0;
        const Storage storage = first ? Storage::Copy : Storage::InPlace;
        const auto from = [&](const Val& old, const Val& fresh_rows) {
            return first ? std::vector<Source>{fresh_rows.src} : std::vector<Source>{old.src, fresh_rows.src};
        };
        const Axes cached = qkv_axes(Arrangement::HeadPanels, true);
        const Val k = record("keys", window(cache_k, 0, pos + n), storage, from(before.k, t.k), cached);
        const Val v = record("values", window(cache_v, 0, pos + n), storage, from(before.v, t.v), cached);
        obs_.end();
        return {t.q, k, v};
    }

    const Config& c_;
    const Inputs& in_;
    const Weights& w_;
    Backend& be_;
    Buffers buf_;
    const std::int64_t B, T, S, Di, Dk, D, H, G, hd, KV;
    Val x_, context_, key_mask_;
    Tape tape_;
};

}  // namespace

void run_forward(const Config& c, const Inputs& in, const Weights& w, Backend& backend, Resources& resources,
                 StepObserver& observer, Work work, bool projections_only) {
    Forward f(c, in, w, backend, resources, observer, work);
    if (projections_only) {
        f.run_projections();
        return;
    }
    f.run();
    if (c.backward) run_backward(c, in, f.tape(), backend, resources, observer, work);
}

}  // namespace headsplit::detail
