#pragma once
// Deferred values and fused paths, decided here in one place. A large score grid's and a
// flash tile's numbers are made again when first shown (backends/replay.hpp), from copies
// taken here when the run's backend has a Backend::replay_maker() (plan_grid, snapshot_flash:
// none when they are read as the run goes); attention whose values are not read as it goes
// takes the fused path (plan_grid).
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/replay.hpp"
#include "headsplit/backends/backend.hpp"
#include "headsplit/base/op.hpp"
#include "headsplit/base/tensor.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::detail {

// Flash mode keeps the values of its first tiles only, up to this many numbers (128 MiB):
// every tile of a classroom example, the first rows of tiles of a long pass.
constexpr double kFlashTileValues = 32.0 * 1024 * 1024;

// A step's values are left to when they are first shown (tile_values, grid_values) from this
// many numbers (64 KiB): below that, reading them now costs less than the bookkeeping.
constexpr std::int64_t kDeferredValues = 16384;

// How attention's steps run, decided here once: they record the same steps either way.
// Recording nothing, or the grid's values made again later (deferred), the mask, the
// padding, the scale and the softmax run as one pass per row in the softmax step (`fused`:
// their steps stay, computing nothing; the same numbers, read and written once), and under a
// causal mask of a square grid the work above the diagonal is skipped (`skip_upper`: the
// scores there are never read, the weights there are 0).
struct Fusion {
    bool fused = false, skip_upper = false;
};

// How the score grid q @ k^T ([..., Tq, hd] x [..., Tk, hd]^T) runs: the copies its recorded
// values are made again from, or none (only when `recording` values on a backend with a
// replay_maker(), for a grid of at least kDeferredValues numbers), and its Fusion. `key_mask`:
// the [B, Tk] key padding mask, or none.
struct GridPlan {
    std::shared_ptr<const GridSnapshot> snapshot;
    Fusion fusion;
};
GridPlan plan_grid(Backend& backend, bool recording, const TensorDesc& q, const TensorDesc& k, float factor,
                   const TensorDesc* key_mask, bool causal);
// The grid after Q @ K^T and then `ops` (scale, mask, pad_mask, softmax), made when first shown.
std::shared_ptr<const DeferredValues> grid_values(std::shared_ptr<const GridSnapshot> in, std::vector<Op> ops);

// The copies flash's tiles are made again from, or none: only when `recording` values on a
// backend with a replay_maker(), for tiles of at least kDeferredValues numbers
// (`tile_values`: a tile's scores, m, l and acc for all heads).
std::shared_ptr<const FlashSnapshot> snapshot_flash(Backend& backend, bool recording, const FlashArgs& a,
                                                    std::int64_t tile_values);
// Tensor `which` of tile step (q0, nq, k0, nk): 0 tile_scores, 1 m, 2 l, 3 acc, made when
// first shown.
std::shared_ptr<const DeferredValues> tile_values(std::shared_ptr<const FlashSnapshot> in, std::int64_t q0,
                                                  std::int64_t nq, std::int64_t k0, std::int64_t nk, int which);

}  // namespace headsplit::detail
