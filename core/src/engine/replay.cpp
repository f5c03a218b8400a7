#include "replay.hpp"

#include <stdexcept>

namespace headsplit::detail {

// Rows q0 .. q0 + n - 1 of flash's m or l ([B, H, T]), or of its acc ([B, H, T, hd]).
TensorDesc flash_rows(const TensorDesc& whole, std::int64_t q0, std::int64_t n) {
    Shape shape = whole.shape;
    shape[2] = n;
    return TensorDesc{whole.buffer, whole.offset + q0 * whole.strides[2], shape, whole.strides};
}

namespace {

// `values` in a new buffer of `backend`, row-major in `shape`.
TensorDesc upload(Backend& backend, const std::vector<float>& values, const Shape& shape) {
    const int id = backend.create_buffer(numel(shape));
    backend.write(id, values);
    return contiguous(id, shape);
}

}  // namespace

// The values of `t` as they are now, from a backend whose buffers are host memory.
std::vector<float> read_host(Backend& backend, const TensorDesc& t) {
    std::int64_t size = 0;
    const float* host = backend.host_view(t.buffer, &size);
    if (!host) throw std::logic_error("read_host: the backend lends no host view");
    return gather(host, size, t);
}

namespace {

// A flash tile's values made again when first asked for (the run's backend has a replay
// maker): the run's queries, keys, values and key mask, kept once per run, go through a
// fresh such backend's flash_attention over the tile's query block, from key 0 to the
// tile's last key (TileTensor). Those are the same calls the run makes for a kept tile, one
// tile after another, so the numbers are the same; the run itself then computes the tiles in
// larger pieces.
//
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
        auto cpu = in.make_backend();
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

// A score grid's values made again when first shown (the run's backend has a replay maker):
// Q @ K^T from the run's queries and keys on a fresh such backend, then that backend's scale,
// mask, padding and softmax in the steps' order, up to the step shown. Those are the calls a
// run makes when it records, one step after another, so the numbers are the same; the run
// itself then takes the one pass of a run that records nothing (the masked softmax, the work
// above a causal diagonal skipped).
class GridValues final : public DeferredValues {
public:
    GridValues(std::shared_ptr<const GridSnapshot> in, std::vector<Op> ops) : in_(std::move(in)), ops_(std::move(ops)) {}

private:
    std::vector<float> make() const override {
        const GridSnapshot& in = *in_;
        auto cpu = in.make_backend();
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

// The copies a recorded score grid is made again from, or none (GridPlan).
std::shared_ptr<const GridSnapshot> snapshot_grid(Backend& backend, bool recording, const TensorDesc& q,
                                                  const TensorDesc& k, std::int64_t grid_values, float factor,
                                                  const TensorDesc* key_mask) {
    if (!recording || !backend.replay_maker() || grid_values < kDeferredValues) return nullptr;
    auto snapshot = std::make_shared<GridSnapshot>();
    snapshot->make_backend = backend.replay_maker();
    snapshot->q = read_host(backend, q);
    snapshot->k = read_host(backend, k);
    snapshot->q_shape = q.shape;
    snapshot->k_shape = k.shape;
    snapshot->factor = factor;
    if (key_mask) {
        snapshot->key_mask = read_host(backend, *key_mask);
        snapshot->mask_shape = key_mask->shape;
    }
    return snapshot;
}

}  // namespace

GridPlan plan_grid(Backend& backend, bool recording, const TensorDesc& q, const TensorDesc& k, float factor,
                   const TensorDesc* key_mask, bool causal) {
    const std::int64_t tq = q.shape[q.rank() - 2], tk = k.shape[k.rank() - 2];
    Shape grid = q.shape;
    grid.back() = tk;
    GridPlan plan;
    plan.snapshot = snapshot_grid(backend, recording, q, k, numel(grid), factor, key_mask);
    // Recording nothing, or the values made again later, nothing reads the steps one by one.
    const bool quiet = !recording || plan.snapshot;
    plan.fusion = {quiet, quiet && causal && tq == tk};
    return plan;
}

std::shared_ptr<const DeferredValues> grid_values(std::shared_ptr<const GridSnapshot> in, std::vector<Op> ops) {
    if (!in) return nullptr;
    return std::make_shared<const GridValues>(std::move(in), std::move(ops));
}

std::shared_ptr<const FlashSnapshot> snapshot_flash(Backend& backend, bool recording, const FlashArgs& a,
                                                    std::int64_t tile_values) {
    if (!recording || !backend.replay_maker() || tile_values < kDeferredValues) return nullptr;
    auto snapshot = std::make_shared<FlashSnapshot>();
    snapshot->make_backend = backend.replay_maker();
    snapshot->q = read_host(backend, a.q);
    snapshot->k = read_host(backend, a.k);
    snapshot->v = read_host(backend, a.v);
    if (a.key_mask) snapshot->mask = read_host(backend, *a.key_mask);
    snapshot->q_shape = a.q.shape;
    snapshot->kv_shape = a.k.shape;
    snapshot->args = a;
    snapshot->args.key_mask = nullptr;  // the replay points these at its own buffers
    snapshot->args.q = snapshot->args.k = snapshot->args.v = TensorDesc{};
    return snapshot;
}

std::shared_ptr<const DeferredValues> tile_values(std::shared_ptr<const FlashSnapshot> in, std::int64_t q0,
                                                  std::int64_t nq, std::int64_t k0, std::int64_t nk, int which) {
    return std::make_shared<const TileTensor>(std::move(in), q0, nq, k0, nk, which);
}

}  // namespace headsplit::detail
