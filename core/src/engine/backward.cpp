#include "backward.hpp"

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backward_flash.hpp"
#include "forward_steps.hpp"

namespace headsplit::detail {

namespace {

// The backward pass, op by op, the forward's steps in reverse. Each gradient is named after
// its tensor ("d_queries" is dL/d queries, L = sum(dout * output)); each function names, in
// its comment, the forward line it inverts.
class Backward : private Steps {
public:
    Backward(const Config& c, const Inputs& in, const Tape& tape, Backend& be, Resources& res, StepObserver& obs,
             Work work)
        : Steps(obs, c.num_tokens(), c.num_keys()), c_(c), in_(in), tp_(tape), be_(be), buf_(be, res, work),
          B(c.batch), T(c.num_tokens()), S(c.num_keys()), Di(c.d_in), Dk(c.key_dim()), D(c.d_out), H(c.heads),
          G(c.kv_head_count()), hd(c.head_dim()), KV(c.kv_width()), r(c.group_size()) {}

    void run() {
        const Val dout = upload_dout();
        Val d_ctx = c_.out_proj ? out_proj_back(dout) : dout;  // d context_vec [B, T, D_out]
        if (c_.mode == Mode::Loop) {
            loop_heads_back(d_ctx);
            return;
        }
        // [B, T, D_out] -> [B, T, H, hd] -> [B, H, T, hd]: views
        d_ctx = transpose_back_grad(merge_back(d_ctx));
        Qkv d;
        if (c_.mode == Mode::Flash) {  // the rows' lse and delta, then tile by tile: [B, H, T, hd]; [B, G, S, hd]
            d = flash_back(c_, be_, buf_, *this, tp_, d_ctx, scale());
        } else {
            d = attention_back(tp_.heads.front(), d_ctx);  // d queries [B, H, T, hd]; d keys, d values [B, H, S, hd]
            if (c_.grouped()) d = repeat_kv_back(d);       // d keys, d values [B, G, S, hd]
        }
        d = view_back(transpose_grad(d));                  // [B, T, H, hd] views, then copies [B, T, D_out]
        if (c_.mode == Mode::Fused) project_back_fused(split_back(d));
        else project_back_split(d);
    }

private:
    // ---- the gradient that arrives: dout [B, T, D_out], as out.backward(dout) takes it; not
    // recorded until the first step that reads it
    Val upload_dout() { return {contiguous(buf_.upload_from(B * T * D, in_.dout), {B, T, D}), {}}; }
    // `d` as recorded: dout is recorded (as "d_output", made from nothing) by the step that
    // first reads it, the output projection's backward or, without it, the merge's or concat's.
    Val arrived(const Val& d) {
        if (d.src.step >= 0) return d;
        return record("d_output", d.t, Storage::New, {}, {Axis::Batch, Axis::Token, Axis::Feature});
    }

    // ---- output = context_vec @ W_out^T + b_out: its backward, three products of [B*T] rows
    //   d context_vec = dout @ W_out;  dW_out = dout^T @ context_vec (one matmul over all
    //   B*T rows);  db_out = dout summed over the rows
    Val out_proj_back(const Val& dout) {
        const Linear& w = tp_.w_out;
        begin(Op::OutProjBack);
        const TensorDesc dw = buf_.fresh({D, D});
        be_.matmul(transpose(rows(dout.t), 0, 1), rows(tp_.merged.t), false, nullptr, dw);
        const TensorDesc db = column_sums(dout.t);
        const TensorDesc dctx = buf_.fresh({B, T, D});
        be_.matmul(rows(dout.t), w.w, false, nullptr, rows(dctx));
        obs_.computed(2, 2.0 * 2.0 * B * T * D * D);
        const Val d = arrived(dout);
        record("dW_out", dw, Storage::New, {d.src, tp_.merged.src}, {Axis::Feature, Axis::Feature});
        record("db_out", db, Storage::New, {d.src}, {Axis::Feature});
        const Val out = record("d_context_vec", dctx, Storage::New, {d.src, Source::of_weight("w_out")},
                               row_axes(3, Axis::Feature));
        obs_.end();
        return out;
    }

    // ---- context_vec = context.transpose(1, 2).contiguous().view(B, T, D_out): going back,
    // d context_vec [B, T, D_out] read as [B, T, H, hd] is a view (the merge's copy is free here)
    Val merge_back(const Val& given) {
        begin(Op::MergeBack);
        obs_.computed(0, 0);
        const Val d = arrived(given);
        const Val out = record("d_context_vec", view(d.t, {B, T, H, hd}), Storage::View, {d.src},
                               {Axis::Batch, Axis::Token, Axis::Head, Axis::Feature});
        obs_.end();
        return out;
    }

    // ---- context = context.transpose(1, 2): the gradient's transpose back, [B, T, H, hd] -> [B, H, T, hd]
    Val transpose_back_grad(const Val& d) {
        begin(Op::TransposeBackGrad);
        obs_.computed(0, 0);
        const Val out = record("d_context_vec", transpose(d.t, 1, 2), Storage::View, {d.src}, row_axes(4, Axis::Feature));
        obs_.end();
        return out;
    }

    // ---- scores, mask, scale, softmax, dropout, context in reverse, for all heads (split,
    // fused) or one (loop). d_ctx: d context_vec [..., T, hd]. Returns d queries [..., T, hd],
    // d keys and d values [..., S, hd] as the scores read them.
    Qkv attention_back(const HeadTape& ht, const Val& d_ctx) {
        const int head = ht.head;
        Val d_values, d_weights;
        context_back(ht, d_ctx, d_values, d_weights);
        if (c_.dropout > 0) d_weights = dropout_back(ht, d_weights);
        Val d_scores = softmax_back(ht, d_weights);
        // The forward's in-place chain, last first: [scale], [mask], [padding], [scale].
        if (!c_.scale_first) d_scores = scale_back(d_scores, head);
        if (c_.padded()) d_scores = pad_mask_back(d_scores, head);
        if (c_.causal) d_scores = mask_back(d_scores, head);
        if (c_.scale_first) d_scores = scale_back(d_scores, head);
        Val d_queries, d_keys;
        scores_back(ht, d_scores, d_queries, d_keys);
        return {d_queries, d_keys, d_values};
    }

    double attention_flops(int head) const { return 2.0 * B * (head < 0 ? H : 1) * T * S * hd; }

    // ---- context_vec = attn_weights @ values:
    //   d attn_weights = d context_vec @ values^T;  d values = attn_weights^T @ d context_vec
    void context_back(const HeadTape& ht, const Val& d_ctx, Val& d_values, Val& d_weights) {
        const int n = ht.dropped.t.rank();
        begin(Op::ContextBack, ht.head);
        const TensorDesc dv = buf_.fresh(ht.qkv.v.t.shape);
        be_.matmul(transpose(ht.dropped.t, n - 2, n - 1), d_ctx.t, false, nullptr, dv);
        const TensorDesc dw = buf_.fresh(ht.dropped.t.shape);
        be_.matmul(d_ctx.t, ht.qkv.v.t, true, nullptr, dw);
        obs_.computed(2, 2.0 * attention_flops(ht.head));
        d_values = record("d_values", dv, Storage::New, {ht.dropped.src, d_ctx.src}, kv_axes(n));
        d_weights = record("d_attn_weights", dw, Storage::New, {d_ctx.src, ht.qkv.v.src}, row_axes(n, Axis::Key));
        obs_.end();
    }

    // ---- attn_weights = dropout(attn_weights): the same keep mask, the same 1 / (1 - p)
    Val dropout_back(const HeadTape& ht, const Val& d) {
        begin(Op::DropoutBack, ht.head);
        const TensorDesc out = buf_.fresh(d.t.shape);
        be_.multiply(d.t, ht.keep_mask.t, static_cast<float>(1.0 / (1.0 - c_.dropout)), out);
        obs_.computed(0, 0);
        const Val v = record("d_attn_weights", out, Storage::New, {d.src, ht.keep_mask.src}, row_axes(out.rank(), Axis::Key));
        obs_.end();
        return v;
    }

    // ---- attn_weights = softmax(attn_scores, dim=-1):
    //   d attn_scores = A * (dA - rowsum(dA * A)), row by row
    Val softmax_back(const HeadTape& ht, const Val& d) {
        begin(Op::SoftmaxBack, ht.head);
        const TensorDesc out = buf_.fresh(d.t.shape);
        be_.softmax_backward(ht.weights.t, d.t, out);
        obs_.computed(0, 0);
        const Val v = record("d_attn_scores", out, Storage::New, {ht.weights.src, d.src}, row_axes(out.rank(), Axis::Key));
        obs_.end();
        return v;
    }

    // The in-place steps on d attn_scores: `change` runs on the backend, then the same
    // tensor is recorded again (also reading `also`).
    template <class Change>
    Val in_place(Op op, const Val& d, int head, Change change, std::vector<Source> also = {}) {
        begin(op, head);
        change();
        obs_.computed(0, 0);
        also.insert(also.begin(), d.src);
        const Val v = record("d_attn_scores", d.t, Storage::InPlace, std::move(also), row_axes(d.t.rank(), Axis::Key));
        obs_.end();
        return v;
    }
    // ---- attn_scores = attn_scores / sqrt(head_dim): the same factor
    Val scale_back(const Val& d, int head) {
        return in_place(Op::ScaleBack, d, head, [&] { be_.scale(d.t, scale()); });
    }
    float scale() const { return c_.scale_factor(); }
    // ---- attn_scores.masked_fill_(causal, -inf): 0 where it masked
    Val mask_back(const Val& d, int head) {
        return in_place(Op::MaskBack, d, head, [&] { be_.mask_gradient(d.t, true, nullptr); });
    }
    // ---- attn_scores.masked_fill_(key_padding_mask, -inf): 0 at padded keys
    Val pad_mask_back(const Val& d, int head) {
        const TensorDesc keys{tp_.key_mask.t.buffer, tp_.key_mask.t.offset, {B, S}, tp_.key_mask.t.strides};
        return in_place(Op::PadMaskBack, d, head, [&] { be_.mask_gradient(d.t, false, &keys); }, {tp_.key_mask.src});
    }

    // ---- attn_scores = queries @ keys^T:
    //   d queries = d attn_scores @ keys;  d keys = d attn_scores^T @ queries
    void scores_back(const HeadTape& ht, const Val& d, Val& d_queries, Val& d_keys) {
        const int n = d.t.rank();
        begin(Op::ScoresBack, ht.head);
        const TensorDesc dq = buf_.fresh(ht.qkv.q.t.shape);
        be_.matmul(d.t, ht.qkv.k.t, false, nullptr, dq);
        const TensorDesc dk = buf_.fresh(ht.qkv.k.t.shape);
        be_.matmul(transpose(d.t, n - 2, n - 1), ht.qkv.q.t, false, nullptr, dk);
        obs_.computed(2, 2.0 * attention_flops(ht.head));
        const Axes q_axes = n == 4 ? Axes{Axis::Batch, Axis::Head, Axis::Token, Axis::Feature}
                                   : Axes{Axis::Batch, Axis::Token, Axis::Feature};
        d_queries = record("d_queries", dq, Storage::New, {d.src, ht.qkv.k.src}, q_axes);
        d_keys = record("d_keys", dk, Storage::New, {d.src, ht.qkv.q.src}, kv_axes(n));
        obs_.end();
    }

    // ---- keys = repeat_interleave(keys, H / G, dim=1) (and values): each key/value head's
    // gradient is the sum of those of the query heads that share it
    Qkv repeat_kv_back(const Qkv& d) {
        const auto sum_group = [&](const TensorDesc& rep) {  // [B, H, S, hd] -> [B, G, S, hd]
            const TensorDesc out = buf_.fresh({B, G, S, hd});
            const auto member = [&](std::int64_t i) {  // query head g*r + i of every group g
                return TensorDesc{rep.buffer, rep.offset + i * rep.strides[1], {B, G, S, hd},
                                  {rep.strides[0], r * rep.strides[1], rep.strides[2], rep.strides[3]}};
            };
            be_.add(member(0), member(1), out);
            for (std::int64_t i = 2; i < r; ++i) be_.add(out, member(i), out);
            return out;
        };
        begin(Op::RepeatKvBack);
        const TensorDesc dk = sum_group(d.k.t), dv = sum_group(d.v.t);
        obs_.computed(0, 0);
        const Axes grouped{Axis::Batch, Axis::KvHead, Axis::Key, Axis::Feature};
        const Val k = record("d_keys", dk, Storage::New, {d.k.src}, grouped);
        const Val v = record("d_values", dv, Storage::New, {d.v.src}, grouped);
        obs_.end();
        return {d.q, k, v};
    }

    // ---- queries = queries.transpose(1, 2) (keys, values): the gradient's transpose,
    // [B, H, T, hd] -> [B, T, H, hd], no data moved
    Qkv transpose_grad(const Qkv& d) {
        begin(Op::TransposeGrad);
        obs_.computed(0, 0);
        const Axis kv_head = c_.grouped() ? Axis::KvHead : Axis::Head;
        const Qkv out{record("d_queries", transpose(d.q.t, 1, 2), Storage::View, {d.q.src},
                             {Axis::Batch, Axis::Token, Axis::Head, Axis::Feature}),
                      record("d_keys", transpose(d.k.t, 1, 2), Storage::View, {d.k.src},
                             {Axis::Batch, Axis::Key, kv_head, Axis::Feature}),
                      record("d_values", transpose(d.v.t, 1, 2), Storage::View, {d.v.src},
                             {Axis::Batch, Axis::Key, kv_head, Axis::Feature})};
        obs_.end();
        return out;
    }

    // ---- queries = queries.view(B, T, H, hd) (keys, values): going back, [B, T, H, hd] ->
    // [B, T, D_out] needs rows back to back, so here the backward copies (.contiguous()).
    // Fused: the three copies land side by side in one buffer, d qkv [B, T, D_out + 2 kv_width].
    Qkv view_back(const Qkv& d) {
        TensorDesc q, k, v;
        if (c_.mode == Mode::Fused) {
            const std::int64_t W = D + 2 * KV;
            fused_ = buf_.fresh({B, T, W});
            q = narrow_last(fused_, 0, D), k = narrow_last(fused_, D, KV), v = narrow_last(fused_, D + KV, KV);
        } else {
            q = buf_.fresh({B, T, D}), k = buf_.fresh({B, S, KV}), v = buf_.fresh({B, S, KV});
        }
        begin(Op::ViewBack);
        be_.copy(d.q.t, view(q, d.q.t.shape));
        be_.copy(d.k.t, view(k, d.k.t.shape));
        be_.copy(d.v.t, view(v, d.v.t.shape));
        obs_.computed(0, 0);
        const Qkv out{record("d_queries", q, Storage::Copy, {d.q.src}, {Axis::Batch, Axis::Token, Axis::Feature}),
                      record("d_keys", k, Storage::Copy, {d.k.src}, {Axis::Batch, Axis::Key, Axis::Feature}),
                      record("d_values", v, Storage::Copy, {d.v.src}, {Axis::Batch, Axis::Key, Axis::Feature})};
        obs_.end();
        return out;
    }

    // ---- queries, keys, values = qkv.chunk(3, dim=-1): going back, d qkv is the three side
    // by side, which view_back's copies wrote in place: a view, no data moved
    Val split_back(const Qkv& d) {
        begin(Op::SplitBack);
        obs_.computed(0, 0);
        const Val out = record("d_qkv", fused_, Storage::View, {d.q.src, d.k.src, d.v.src},
                               {Axis::Batch, Axis::Token, Axis::Feature});
        obs_.end();
        return out;
    }

    // ---- queries = x @ W_query^T (+ b_query), keys and values from x (or the context):
    //   dW_query = d queries^T @ x, ONE [D_out, D_in] matmul over all B*T rows (its row block h
    //   is head h's); d x = d queries @ W_query + d keys @ W_key + d values @ W_value
    void project_back_split(const Qkv& d) {
        const Val& kv_in = c_.cross() ? tp_.context : tp_.x;
        begin(Op::ProjectBack);
        const TensorDesc dwq = weight_grad(d.q.t, tp_.x.t), dwk = weight_grad(d.k.t, kv_in.t),
                         dwv = weight_grad(d.v.t, kv_in.t);
        const std::vector<TensorDesc> dbs = bias_grads(d);
        const TensorDesc dx = buf_.fresh({B, T, Di});
        be_.matmul(rows(d.q.t), tp_.w_query.w, false, nullptr, rows(dx));
        const TensorDesc dctx = c_.cross() ? buf_.fresh({B, S, Dk}) : dx;
        if (c_.cross()) be_.matmul(rows(d.k.t), tp_.w_key.w, false, nullptr, rows(dctx));
        else add_product(d.k.t, tp_.w_key.w, dctx);
        add_product(d.v.t, tp_.w_value.w, dctx);
        obs_.computed(6, 2.0 * projection_flops());
        record("dW_query", dwq, Storage::New, {d.q.src, tp_.x.src}, weight_axes());
        record("dW_key", dwk, Storage::New, {d.k.src, kv_in.src}, weight_axes());
        record("dW_value", dwv, Storage::New, {d.v.src, kv_in.src}, weight_axes());
        record_biases(dbs, d);
        const Source wq = Source::of_weight("w_query"), wk = Source::of_weight("w_key"), wv = Source::of_weight("w_value");
        if (c_.cross()) {
            record("d_context", dctx, Storage::New, {d.k.src, wk, d.v.src, wv}, {Axis::Batch, Axis::Key, Axis::Feature});
            record("d_x", dx, Storage::New, {d.q.src, wq}, {Axis::Batch, Axis::Token, Axis::Feature});
        } else {
            record("d_x", dx, Storage::New, {d.q.src, wq, d.k.src, wk, d.v.src, wv}, {Axis::Batch, Axis::Token, Axis::Feature});
        }
        obs_.end();
    }

    // ---- qkv = x @ W_qkv^T (+ b_qkv): dW_qkv = d qkv^T @ x and d x = d qkv @ W_qkv, one
    // matmul each
    void project_back_fused(const Val& d) {
        begin(Op::ProjectBack);
        const TensorDesc dw = weight_grad(d.t, tp_.x.t);
        const TensorDesc db = c_.qkv_bias ? column_sums(d.t) : TensorDesc{};
        const TensorDesc dx = buf_.fresh({B, T, Di});
        be_.matmul(rows(d.t), tp_.w_qkv.w, false, nullptr, rows(dx));
        obs_.computed(2, 2.0 * projection_flops());
        record("dW_qkv", dw, Storage::New, {d.src, tp_.x.src}, weight_axes());
        if (c_.qkv_bias) record("db_qkv", db, Storage::New, {d.src}, {Axis::Feature});
        record("d_x", dx, Storage::New,
               {d.src, Source::of_weight("w_query"), Source::of_weight("w_key"), Source::of_weight("w_value")},
               {Axis::Batch, Axis::Token, Axis::Feature});
        obs_.end();
    }

    struct Three {
        TensorDesc q, k, v;
    };

    // ---- loop mode: context_vec = torch.cat(heads, dim=-1); per head its attention and its
    // three small projections in reverse. Head h's 3 dW matmuls fill row block h of dW_query
    // (and its key/value head's blocks); d x gathers every head's.
    void loop_heads_back(Val d_ctx) {
        const TensorDesc dwq = buf_.fresh({D, Di}), dwk = buf_.fresh({KV, Dk}), dwv = buf_.fresh({KV, Dk});
        Three db;
        if (c_.qkv_bias) db = {buf_.fresh({D}), buf_.fresh({KV}), buf_.fresh({KV})};
        const TensorDesc dx = buf_.fresh({B, T, Di});
        const TensorDesc dctx = c_.cross() ? buf_.fresh({B, S, Dk}) : dx;
        for (const HeadTape& ht : tp_.heads) {
            const Val d_head = concat_back(d_ctx, ht.head);
            const Qkv d = attention_back(ht, d_head);
            project_back_head(ht.head, d, {dwq, dwk, dwv}, db, dx, dctx);
        }
    }

    // ---- head h's share of torch.cat(heads, dim=-1): columns h*hd .. of d context_vec, a view.
    // `d` becomes what was recorded of it (dout, the first time, without the output projection).
    Val concat_back(Val& d, int head) {
        begin(Op::ConcatBack, head);
        obs_.computed(0, 0);
        d = arrived(d);
        const TensorDesc cols{d.t.buffer, d.t.offset + head * hd, {B, T, hd}, {T * D, D, 1}};
        const Val out = record("d_context_vec", cols, Storage::View, {d.src}, row_axes(3, Axis::Feature));
        obs_.end();
        return out;
    }

    // ---- head h: q_h = x @ W_query[h]^T, k_h and v_h from its key/value head g's rows:
    // dW_query[h] = d q_h^T @ x (and W_key[g], W_value[g], summed over g's heads); d x += d q_h
    // @ W_query[h] + d k_h @ W_key[g] + d v_h @ W_value[g]
    void project_back_head(int h, const Qkv& d, const Three& dw, const Three& db, const TensorDesc& dx,
                           const TensorDesc& dctx) {
        const std::int64_t g = h / r;
        const bool first_of_group = h % r == 0, first = h == 0;
        const Val& kv_in = c_.cross() ? tp_.context : tp_.x;
        const auto block = [&](const TensorDesc& whole, std::int64_t i) {  // row block i of a weight's gradient
            const std::int64_t in = whole.shape[1];
            return TensorDesc{whole.buffer, i * hd * in, {hd, in}, {in, 1}};
        };
        const auto entries = [&](const TensorDesc& whole, std::int64_t i) {
            return TensorDesc{whole.buffer, i * hd, {hd}, {1}};
        };
        begin(Op::ProjectBack, h);
        const TensorDesc q_rows = block(dw.q, h), k_rows = block(dw.k, g), v_rows = block(dw.v, g);
        weight_grad_into(d.q.t, tp_.x.t, q_rows, true);
        weight_grad_into(d.k.t, kv_in.t, k_rows, first_of_group);
        weight_grad_into(d.v.t, kv_in.t, v_rows, first_of_group);
        if (c_.qkv_bias) {
            column_sums_into(d.q.t, entries(db.q, h), true);
            column_sums_into(d.k.t, entries(db.k, g), first_of_group);
            column_sums_into(d.v.t, entries(db.v, g), first_of_group);
        }
        const Linear wq = tp_.w_query.head(h, hd), wk = tp_.w_key.head(g, hd), wv = tp_.w_value.head(g, hd);
        if (first) be_.matmul(rows(d.q.t), wq.w, false, nullptr, rows(dx));
        else add_product(d.q.t, wq.w, dx);
        if (c_.cross() && first) be_.matmul(rows(d.k.t), wk.w, false, nullptr, rows(dctx));
        else add_product(d.k.t, wk.w, dctx);
        add_product(d.v.t, wv.w, dctx);
        obs_.computed(6, 2.0 * projection_flops() / static_cast<double>(H));
        record("dW_query", q_rows, Storage::New, {d.q.src, tp_.x.src}, weight_axes());
        accumulate("dW_key", g, k_rows, first_of_group, {d.k.src, kv_in.src}, weight_axes());
        accumulate("dW_value", g, v_rows, first_of_group, {d.v.src, kv_in.src}, weight_axes());
        if (c_.qkv_bias) {
            record("db_query", entries(db.q, h), Storage::New, {d.q.src}, {Axis::Feature});
            accumulate("db_key", g, entries(db.k, g), first_of_group, {d.k.src}, {Axis::Feature});
            accumulate("db_value", g, entries(db.v, g), first_of_group, {d.v.src}, {Axis::Feature});
        }
        const Source wqs = Source::of_weight("w_query"), wks = Source::of_weight("w_key"), wvs = Source::of_weight("w_value");
        if (c_.cross()) {
            accumulate("d_context", 0, dctx, first, {d.k.src, wks, d.v.src, wvs}, {Axis::Batch, Axis::Key, Axis::Feature});
            accumulate("d_x", 0, dx, first, {d.q.src, wqs}, {Axis::Batch, Axis::Token, Axis::Feature});
        } else {
            accumulate("d_x", 0, dx, first, {d.q.src, wqs, d.k.src, wks, d.v.src, wvs},
                       {Axis::Batch, Axis::Token, Axis::Feature});
        }
        obs_.end();
    }

    // Records a sum that heads add to in turn (d x; dW_key of key/value head g): new at the
    // first, then in place, made from what it held before and from `from`.
    void accumulate(const std::string& name, std::int64_t g, const TensorDesc& t, bool fresh, std::vector<Source> from,
                    Axes axes) {
        const std::string key = name + "/" + std::to_string(g);
        if (!fresh) from.insert(from.begin(), sums_.at(key));
        sums_[key] = record(name, t, fresh ? Storage::New : Storage::InPlace, std::move(from), std::move(axes)).src;
    }

    // ---- helpers -------------------------------------------------------------------
    // A [B, n, X] tensor whose rows lie back to back as one [B*n, X] matrix.
    static TensorDesc rows(const TensorDesc& t) { return view(t, {t.shape[0] * t.shape[1], t.shape[2]}); }

    // dW = d^T @ in over all B*n rows: [X, B*n] x [B*n, in] -> a new [X, in].
    TensorDesc weight_grad(const TensorDesc& d, const TensorDesc& in) {
        const TensorDesc dw = buf_.fresh({d.shape[2], in.shape[2]});
        weight_grad_into(d, in, dw, true);
        return dw;
    }
    // The same into `out`, or added to what it holds (`fresh` false).
    void weight_grad_into(const TensorDesc& d, const TensorDesc& in, const TensorDesc& out, bool fresh) {
        if (fresh) {
            be_.matmul(transpose(rows(d), 0, 1), rows(in), false, nullptr, out);
            return;
        }
        const TensorDesc part = buf_.fresh(out.shape);
        be_.matmul(transpose(rows(d), 0, 1), rows(in), false, nullptr, part);
        be_.add(out, part, out);
    }
    // acc += d @ w: [B, n, X] x [X, in] -> [B, n, in], through a fresh buffer.
    void add_product(const TensorDesc& d, const TensorDesc& w, const TensorDesc& acc) {
        const TensorDesc part = buf_.fresh(acc.shape);
        be_.matmul(rows(d), w, false, nullptr, rows(part));
        be_.add(acc, part, acc);
    }
    // A bias's gradient: d [B, n, X] summed over its B*n rows, as ones [1, B*n] @ d -> [X].
    TensorDesc column_sums(const TensorDesc& d) {
        const TensorDesc out = buf_.fresh({d.shape[2]});
        column_sums_into(d, out, true);
        return out;
    }
    void column_sums_into(const TensorDesc& d, const TensorDesc& out, bool fresh) {
        const std::int64_t n = d.shape[0] * d.shape[1];
        const TensorDesc ones = contiguous(
            buf_.upload_made(n, [&] { return std::vector<float>(static_cast<std::size_t>(n), 1.0f); }), {1, n});
        const TensorDesc row = view(out, {1, out.shape[0]});
        if (fresh) {
            be_.matmul(ones, rows(d), false, nullptr, row);
            return;
        }
        const TensorDesc part = buf_.fresh({1, out.shape[0]});
        be_.matmul(ones, rows(d), false, nullptr, part);
        be_.add(row, part, row);
    }
    std::vector<TensorDesc> bias_grads(const Qkv& d) {
        if (!c_.qkv_bias) return {};
        return {column_sums(d.q.t), column_sums(d.k.t), column_sums(d.v.t)};
    }
    void record_biases(const std::vector<TensorDesc>& dbs, const Qkv& d) {
        if (dbs.empty()) return;
        record("db_query", dbs[0], Storage::New, {d.q.src}, {Axis::Feature});
        record("db_key", dbs[1], Storage::New, {d.k.src}, {Axis::Feature});
        record("db_value", dbs[2], Storage::New, {d.v.src}, {Axis::Feature});
    }

    // The forward's Q, K, V projections' FLOPs (each of dW and d x costs as much).
    double projection_flops() const { return 2.0 * B * (T * Di * D + 2.0 * S * Dk * KV); }

    static Axes weight_axes() { return {Axis::Feature, Axis::Feature}; }
    // Keys' or values' gradient axes as the scores read them: [B, H, S, hd] (all heads, after
    // repeat_kv) or [B, S, hd] (a head).
    static Axes kv_axes(int rank) {
        if (rank == 4) return {Axis::Batch, Axis::Head, Axis::Key, Axis::Feature};
        return {Axis::Batch, Axis::Key, Axis::Feature};
    }

    const Config& c_;
    const Inputs& in_;
    const Tape& tp_;
    Backend& be_;
    Buffers buf_;
    const std::int64_t B, T, S, Di, Dk, D, H, G, hd, KV, r;
    TensorDesc fused_;  // fused: d qkv [B, T, D_out + 2 kv_width]
    std::map<std::string, Source> sums_;  // loop: what each sum was last recorded as (accumulate)
};

}  // namespace

void run_backward(const Config& c, const Inputs& in, const Tape& tape, Backend& backend, Resources& resources,
                  StepObserver& observer, Work work) {
    Backward(c, in, tape, backend, resources, observer, work).run();
}

}  // namespace headsplit::detail
