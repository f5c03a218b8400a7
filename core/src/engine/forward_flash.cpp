#include "forward_flash.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "replay_plan.hpp"

namespace headsplit::detail {

namespace {

// Flash's walk over its tiles: the backend call's arguments, and what has run and been kept.
struct FlashWalk {
    FlashArgs a;
    TensorDesc tile;                                // [B, H, blk, blk]
    std::shared_ptr<const FlashSnapshot> snapshot;  // the tiles' values made later, or none
    bool one_pass = false;                          // recording nothing
    double kept = 0;                                // tile values recorded so far
    bool keeping = true;  // the first tiles only: once one is left out, so are the rest
    bool ran = false;     // the tiles not computed one by one have been computed
};
// A query block's m, l and acc as last recorded.
struct FlashRows {
    Val m, l, acc;
};

// Flash mode's steps, reported through the forward pass's seam (Steps).
class FlashTiles {
public:
    FlashTiles(const Config& c, Backend& be, Buffers& buf, Steps& steps)
        : c_(c), be_(be), buf_(buf), steps_(steps), obs_(steps.observer()), B(c.batch), T(c.num_tokens()),
          S(c.num_keys()), H(c.heads), hd(c.head_dim()) {}

    // Recording nothing, the first tile step runs every tile and the division in one pass
    // (the others keep their steps, with no compute); recording, the tiles whose values are
    // kept run one by one, and the first tile left out runs the rest.
    Val run(const Qkv& t, const Val* key_mask, float factor, TensorDesc* m_out, TensorDesc* l_out) {
        const std::int64_t blk = c_.flash_block();
        const TensorDesc m = buf_.fresh({B, H, T}), l = buf_.fresh({B, H, T}), acc = buf_.fresh({B, H, T, hd});
        if (m_out) *m_out = m;
        if (l_out) *l_out = l;
        FlashWalk w;
        w.tile = buf_.fresh({B, H, blk, blk});
        const TensorDesc keys_mask =
            key_mask ? TensorDesc{key_mask->t.buffer, key_mask->t.offset, {B, S}, key_mask->t.strides} : TensorDesc{};
        FlashArgs& a = w.a;
        a.q = t.q.t;
        a.k = t.k.t;
        a.v = t.v.t;
        a.m = m;
        a.l = l;
        a.acc = acc;
        a.key_mask = key_mask ? &keys_mask : nullptr;
        a.factor = factor;
        a.causal = c_.causal;
        a.block = blk;
        w.one_pass = !obs_.reads_values();
        // Recording on a backend with a replay maker, the tiles' values are made again
        // when first shown (tile_values), from copies of the queries, keys and values; the run
        // computes every tile in one pass as if it recorded nothing.
        w.snapshot = snapshot_flash(be_, !w.one_pass, a, B * H * blk * (blk + hd + 2));
        std::vector<Source> last;  // each query block's final acc and l
        for (std::int64_t i = 0; i < c_.query_blocks(); ++i) {
            FlashRows rows;
            for (std::int64_t j = 0; j < c_.key_blocks(); ++j)
                if (c_.tile_runs(i, j)) tile(w, t, key_mask, i, j, rows);
            last.push_back(rows.acc.src);
            last.push_back(rows.l.src);
        }

        // context_vec = acc / l: [B, H, T, hd], in place
        steps_.whole_pass();
        steps_.begin(Op::Normalize);
        if (!w.one_pass) {
            a.q_begin = 0, a.q_end = T, a.k_begin = a.k_end = 0, a.normalize = true;
            a.tile = TensorDesc{};
            be_.flash_attention(a);
        }
        obs_.computed(0, 0);
        const Val out = steps_.record("context_vec", acc, Storage::InPlace, last, row_axes(4, Axis::Feature));
        obs_.end();
        return out;
    }

private:
    // ---- tile (i, j): query block i [B, H, nq, hd] against key block j [B, G, nk, hd]:
    // tile_scores [B, H, nq, nk], then the rows' running max m and sum l [B, H, nq] and their
    // acc [B, H, nq, hd], updated online. `prev`: the block's m, l, acc as last recorded.
    void tile(FlashWalk& w, const Qkv& t, const Val* key_mask, std::int64_t i, std::int64_t j, FlashRows& prev) {
        const std::int64_t blk = w.a.block;
        const std::int64_t q0 = i * blk, nq = std::min(blk, T - q0);
        const std::int64_t k0 = j * blk, nk = std::min(blk, S - k0);
        const double values = static_cast<double>(B * H * (nq * nk + 2 * nq + nq * hd));
        steps_.set_rows(q0, nq);
        steps_.set_keys(k0, nk);
        w.keeping = w.keeping && w.kept + values <= kFlashTileValues;
        if (w.keeping) w.kept += values;
        StepTag tag = steps_.tag(Op::Tile);
        tag.tile_q = static_cast<int>(i), tag.tile_k = static_cast<int>(j), tag.keep_values = w.keeping;
        obs_.begin(tag);
        compute(w, q0, nq, k0, nk);
        obs_.computed(2, 4.0 * B * H * nq * nk * hd);
        const auto later = [&](int which) -> Later {
            if (!w.snapshot || !w.keeping) return nullptr;
            return tile_values(w.snapshot, q0, nq, k0, nk, which);
        };
        const TensorDesc s{w.tile.buffer, 0, {B, H, nq, nk}, {H * blk * blk, blk * blk, blk, 1}};
        // The scores read the key padding mask too, where there is one (<pad> keys get -inf).
        std::vector<Source> read{t.q.src, t.k.src};
        if (key_mask) read.push_back(key_mask->src);
        const Val scores = steps_.record("tile_scores", s, Storage::New, read, row_axes(4, Axis::Key), later(0));
        const bool first = prev.m.src.step < 0;
        const Storage st = first ? Storage::New : Storage::InPlace;
        // Updated in place: the rows as they were come first (the buffer they share).
        const auto from = [&](std::vector<Source> links, const Val& before) {
            if (!first) links.insert(links.begin(), before.src);
            return links;
        };
        const Axes per_row{Axis::Batch, Axis::Head, Axis::Token};  // one number per row of each head
        prev.m = steps_.record("m", flash_rows(w.a.m, q0, nq), st, from({scores.src}, prev.m), per_row, later(1));
        prev.l = steps_.record("l", flash_rows(w.a.l, q0, nq), st, from({scores.src, prev.m.src}, prev.l), per_row,
                               later(2));
        prev.acc = steps_.record("acc", flash_rows(w.a.acc, q0, nq), st,
                                 from({scores.src, prev.m.src, t.v.src}, prev.acc), row_axes(4, Axis::Feature),
                                 later(3));
        obs_.end();
    }

    // What tile step (q0, nq, k0, nk) computes: a kept tile alone (recording its values as it
    // goes); else, the first time, every tile not computed one by one.
    void compute(FlashWalk& w, std::int64_t q0, std::int64_t nq, std::int64_t k0, std::int64_t nk) {
        FlashArgs& a = w.a;
        if (!w.one_pass && w.keeping && !w.snapshot) {
            a.q_begin = q0, a.q_end = q0 + nq, a.k_begin = k0, a.k_end = k0 + nk;
            a.tile = w.tile;
            be_.flash_attention(a);
        } else if (!w.ran) {
            // Recording nothing, or the tiles' values made later: every tile in one
            // call that keeps none (a backend may cut it into larger pieces), with the
            // division when nothing is recorded. Else the first tile whose values are
            // left out: it and every tile after it in two such calls (the rest of this
            // query block, then the blocks after it).
            a.tile = TensorDesc{};
            const bool all = w.one_pass || w.snapshot;
            a.q_begin = all ? 0 : q0, a.q_end = all ? T : q0 + nq, a.k_begin = all ? 0 : k0, a.k_end = S;
            a.normalize = w.one_pass;
            be_.flash_attention(a);
            a.q_begin = q0 + nq, a.q_end = T, a.k_begin = 0;
            if (!all && a.q_begin < T) be_.flash_attention(a);
            w.ran = true;
        }
    }

    const Config& c_;
    Backend& be_;
    Buffers& buf_;
    Steps& steps_;
    StepObserver& obs_;
    const std::int64_t B, T, S, H, hd;
};

}  // namespace

Val flash_tiles(const Config& c, Backend& backend, Buffers& buffers, Steps& steps, const Qkv& t, const Val* key_mask,
                float factor, TensorDesc* m, TensorDesc* l) {
    return FlashTiles(c, backend, buffers, steps).run(t, key_mask, factor, m, l);
}

}  // namespace headsplit::detail
