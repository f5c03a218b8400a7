#include "replay_plan.hpp"

#include <functional>
#include <utility>

namespace headsplit::detail {

namespace {

// Values made by `make`, a replay, when first asked for. Each record replays for itself (a
// flash step shown makes four replays of its query block up to the tile): nothing is shared
// between them, so nothing is handed out twice or raced for.
class Replayed final : public DeferredValues {
public:
    explicit Replayed(std::function<std::vector<float>()> make) : make_(std::move(make)) {}

private:
    std::vector<float> make() const override { return make_(); }

    std::function<std::vector<float>()> make_;
};

}  // namespace

GridPlan plan_grid(Backend& backend, bool recording, const TensorDesc& q, const TensorDesc& k, float factor,
                   const TensorDesc* key_mask, bool causal) {
    const std::int64_t tq = q.shape[q.rank() - 2], tk = k.shape[k.rank() - 2];
    Shape grid = q.shape;
    grid.back() = tk;
    GridPlan plan;
    if (recording && backend.replay_maker() && numel(grid) >= kDeferredValues)
        plan.snapshot = take_grid_snapshot(backend, q, k, factor, key_mask);
    // Recording nothing, or the values made again later, nothing reads the steps one by one.
    const bool quiet = !recording || plan.snapshot;
    plan.fusion = {quiet, quiet && causal && tq == tk};
    return plan;
}

std::shared_ptr<const DeferredValues> grid_values(std::shared_ptr<const GridSnapshot> in, std::vector<Op> ops) {
    if (!in) return nullptr;
    return std::make_shared<const Replayed>([in = std::move(in), ops = std::move(ops)] { return replay_grid(*in, ops); });
}

std::shared_ptr<const FlashSnapshot> snapshot_flash(Backend& backend, bool recording, const FlashArgs& a,
                                                    std::int64_t tile_values) {
    if (!recording || !backend.replay_maker() || tile_values < kDeferredValues) return nullptr;
    return take_flash_snapshot(backend, a);
}

std::shared_ptr<const DeferredValues> tile_values(std::shared_ptr<const FlashSnapshot> in, std::int64_t q0,
                                                  std::int64_t nq, std::int64_t k0, std::int64_t nk, int which) {
    return std::make_shared<const Replayed>(
        [in = std::move(in), q0, nq, k0, nk, which] { return replay_tile(*in, q0, nq, k0, nk, which); });
}

}  // namespace headsplit::detail
