#pragma once
// Values made again: a large score grid's and a flash tile's numbers computed once more, when
// first shown, from copies of the run's queries and keys (and values) on a fresh backend from
// the run's Backend::replay_maker(). A replay makes the backend calls a run makes when it
// records, one step after another, so the numbers are the same. Replays reach backends only
// through the Backend interface; which grids and tiles are replayed is the engine's choice
// (engine/replay_plan.hpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/base/op.hpp"
#include "headsplit/base/tensor.hpp"

namespace headsplit::detail {

// Rows q0 .. q0 + n - 1 of flash's m or l ([B, H, T]), or of its acc ([B, H, T, hd]).
TensorDesc flash_rows(const TensorDesc& whole, std::int64_t q0, std::int64_t n);

// The values of `t` as they are now, from a backend whose buffers are host memory.
std::vector<float> read_host(Backend& backend, const TensorDesc& t);

// What a flash tile's replay needs: the run's queries, keys, values and key mask, kept once
// per run.
struct FlashSnapshot {
    std::vector<float> q, k, v, mask;  // [B, H, T, hd], [B, G, S, hd] twice, [B, S] (or none)
    Shape q_shape, kv_shape;
    FlashArgs args;  // factor, causal, block
    Backend::Maker make_backend = nullptr;  // the replay's backend
};

// What a score grid's replay needs: the run's queries and keys (and key padding mask).
struct GridSnapshot {
    std::vector<float> q, k, key_mask;  // [..., Tq, hd], [..., Tk, hd], [B, Tk] (or none)
    Shape q_shape, k_shape, mask_shape;
    float factor = 1.0f;
    Backend::Maker make_backend = nullptr;  // the replay's backend
};

// Copies of the inputs of the score grid q @ k^T ([..., Tq, hd] x [..., Tk, hd]^T), scaled by
// `factor`, with `key_mask` (the [B, Tk] key padding mask, or none), read now from `backend`,
// which must have a replay_maker().
std::shared_ptr<const GridSnapshot> take_grid_snapshot(Backend& backend, const TensorDesc& q, const TensorDesc& k,
                                                       float factor, const TensorDesc* key_mask);
// Copies of flash's inputs in `a`, read now from `backend`, which must have a replay_maker().
std::shared_ptr<const FlashSnapshot> take_flash_snapshot(Backend& backend, const FlashArgs& a);

// The grid after Q @ K^T and then `ops` (scale, mask, pad_mask, softmax), in that order.
std::vector<float> replay_grid(const GridSnapshot& in, const std::vector<Op>& ops);
// Tensor `which` of tile step (q0, nq, k0, nk): 0 tile_scores, 1 m, 2 l, 3 acc.
std::vector<float> replay_tile(const FlashSnapshot& in, std::int64_t q0, std::int64_t nq, std::int64_t k0,
                               std::int64_t nk, int which);

}  // namespace headsplit::detail
