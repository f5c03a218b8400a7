#include "backward_flash.hpp"

#include <algorithm>
#include <vector>

#include "replay_plan.hpp"

namespace headsplit::detail {

namespace {

class FlashBack {
public:
    FlashBack(const Config& c, Backend& be, Buffers& buf, Steps& steps, const Tape& tape)
        : c_(c), be_(be), buf_(buf), steps_(steps), obs_(steps.observer()), tp_(tape), B(c.batch), T(c.num_tokens()),
          S(c.num_keys()), H(c.heads), G(c.kv_head_count()), hd(c.head_dim()) {}

    Qkv run(const Val& d_ctx, float factor) {
        const HeadTape& ht = tp_.heads.front();
        const std::int64_t blk = c_.flash_block();
        // m, l, lse and delta side by side in one buffer [4, B, H, T] (the GL kernel reads them so).
        const TensorDesc stats = buf_.fresh({4, B, H, T});
        const auto stat = [&](std::int64_t i) { return TensorDesc{stats.buffer, i * B * H * T, {B, H, T}, {H * T, T, 1}}; };
        const TensorDesc dq = buf_.fresh({B, H, T, hd}), dk = buf_.fresh({B, G, S, hd}), dv = buf_.fresh({B, G, S, hd});
        const TensorDesc tile = buf_.fresh({B, H, blk, blk});
        const TensorDesc keys_mask = tp_.key_mask.t.buffer >= 0
                                         ? TensorDesc{tp_.key_mask.t.buffer, tp_.key_mask.t.offset, {B, S}, tp_.key_mask.t.strides}
                                         : TensorDesc{};
        FlashBackArgs a;
        a.q = ht.qkv.q.t, a.k = ht.qkv.k.t, a.v = ht.qkv.v.t;
        a.out = tp_.flash_out.t, a.d_out = d_ctx.t;
        a.m = stat(0), a.l = stat(1), a.lse = stat(2), a.delta = stat(3);
        a.dq = dq, a.dk = dk, a.dv = dv;
        a.key_mask = keys_mask.buffer >= 0 ? &keys_mask : nullptr;
        a.factor = factor, a.causal = c_.causal, a.block = blk;

        // ---- lse = m + log l; delta = rowsum(d context_vec * context_vec)   [B, H, T]
        steps_.whole_pass();
        steps_.begin(Op::FlashBackRows);
        be_.copy(tp_.flash_m, a.m);
        be_.copy(tp_.flash_l, a.l);
        a.rows = true;
        be_.flash_backward(a);
        a.rows = false;
        obs_.computed(0, 0);
        const Axes per_row{Axis::Batch, Axis::Head, Axis::Token};
        const Val lse = steps_.record("lse", a.lse, Storage::New, {tp_.flash_out.src}, per_row);
        const Val delta = steps_.record("delta", a.delta, Storage::New, {d_ctx.src, tp_.flash_out.src}, per_row);
        obs_.end();

        // ---- the tiles, key blocks outer: recomputed, their gradients added
        std::vector<Source> q_last(static_cast<std::size_t>(c_.query_blocks())), k_last(static_cast<std::size_t>(c_.key_blocks())),
            v_last(k_last.size());
        const bool one_pass = !obs_.reads_values();
        bool ran = false, keeping = true;  // the first tiles' values only, as the forward's
        double kept = 0;
        for (std::int64_t j = 0; j < c_.key_blocks(); ++j)
            for (std::int64_t i = 0; i < c_.query_blocks(); ++i) {
                if (!c_.tile_runs(i, j)) continue;
                const std::int64_t q0 = i * blk, nq = std::min(blk, T - q0), k0 = j * blk, nk = std::min(blk, S - k0);
                const double values = static_cast<double>(B * H * nq * (nk + hd) + 2 * B * G * nk * hd);
                keeping = keeping && kept + values <= kFlashTileValues;
                const bool keep = keeping;
                if (keep) kept += values;
                steps_.set_rows(q0, nq);
                steps_.set_keys(k0, nk);
                StepTag tag = steps_.tag(Op::TileBack);
                tag.tile_q = static_cast<int>(i), tag.tile_k = static_cast<int>(j), tag.keep_values = keep;
                obs_.begin(tag);
                if (!one_pass) {  // this tile alone, its p kept for the trace
                    a.q_begin = q0, a.q_end = q0 + nq, a.k_begin = k0, a.k_end = k0 + nk;
                    a.tile = keep ? tile : TensorDesc{};  // a tile left out is still computed alone
                    be_.flash_backward(a);
                } else if (!ran) {  // recording nothing: every tile in one call
                    a.q_begin = 0, a.q_end = T, a.k_begin = 0, a.k_end = S, a.tile = TensorDesc{};
                    be_.flash_backward(a);
                    ran = true;
                }
                obs_.computed(5, 10.0 * B * H * nq * nk * hd);
                record_tile(ht, tile, dq, dk, dv, lse, delta, i, j, q0, nq, k0, nk, q_last, k_last, v_last);
                obs_.end();
            }
        steps_.whole_pass();
        return {{dq, q_last.back()}, {dk, k_last.back()}, {dv, v_last.back()}};
    }

private:
    // A tile's p, and the windows of dq (its query rows), dk and dv (its key rows) it added to:
    // new where the tile is the first to touch them, else in place after the last that did.
    void record_tile(const HeadTape& ht, const TensorDesc& tile, const TensorDesc& dq, const TensorDesc& dk,
                     const TensorDesc& dv, const Val& lse, const Val& delta, std::int64_t i, std::int64_t j,
                     std::int64_t q0, std::int64_t nq, std::int64_t k0, std::int64_t nk, std::vector<Source>& q_last,
                     std::vector<Source>& k_last, std::vector<Source>& v_last) {
        const std::int64_t blk = c_.flash_block();
        const TensorDesc p{tile.buffer, 0, {B, H, nq, nk}, {H * blk * blk, blk * blk, blk, 1}};
        std::vector<Source> read{ht.qkv.q.src, ht.qkv.k.src, lse.src};
        if (tp_.key_mask.t.buffer >= 0) read.push_back(tp_.key_mask.src);
        const Val probs = steps_.record("tile_probs", p, Storage::New, read, row_axes(4, Axis::Key));
        const auto window = [&](const TensorDesc& t, std::int64_t first, std::int64_t n) {
            return TensorDesc{t.buffer, first * hd, {t.shape[0], t.shape[1], n, hd}, t.strides};
        };
        const auto add = [&](Source& last, std::vector<Source> from) {
            if (last.step >= 0) from.insert(from.begin(), last);
            return std::pair<Storage, std::vector<Source>>{last.step >= 0 ? Storage::InPlace : Storage::New, std::move(from)};
        };
        const Axis kv_head = c_.grouped() ? Axis::KvHead : Axis::Head;
        const Axes kv_axes{Axis::Batch, kv_head, Axis::Key, Axis::Feature};
        auto [qs, qf] = add(q_last[static_cast<std::size_t>(i)], {probs.src, delta.src, ht.qkv.k.src});
        q_last[static_cast<std::size_t>(i)] = steps_.record("d_queries", window(dq, q0, nq), qs, qf, row_axes(4, Axis::Feature)).src;
        auto [ks, kf] = add(k_last[static_cast<std::size_t>(j)], {probs.src, delta.src, ht.qkv.q.src});
        k_last[static_cast<std::size_t>(j)] = steps_.record("d_keys", window(dk, k0, nk), ks, kf, kv_axes).src;
        auto [vs, vf] = add(v_last[static_cast<std::size_t>(j)], {probs.src});
        v_last[static_cast<std::size_t>(j)] = steps_.record("d_values", window(dv, k0, nk), vs, vf, kv_axes).src;
    }

    const Config& c_;
    Backend& be_;
    Buffers& buf_;
    Steps& steps_;
    StepObserver& obs_;
    const Tape& tp_;
    const std::int64_t B, T, S, H, G, hd;
};

}  // namespace

Qkv flash_back(const Config& c, Backend& backend, Buffers& buffers, Steps& steps, const Tape& tape, const Val& d_ctx,
               float factor) {
    return FlashBack(c, backend, buffers, steps, tape).run(d_ctx, factor);
}

}  // namespace headsplit::detail
