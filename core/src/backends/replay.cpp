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
    return gather(host, size, t, true);
}

std::shared_ptr<const GridSnapshot> take_grid_snapshot(Backend& backend, const TensorDesc& q, const TensorDesc& k,
                                                       float factor, const TensorDesc* key_mask) {
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

std::shared_ptr<const FlashSnapshot> take_flash_snapshot(Backend& backend, const FlashArgs& a) {
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

// Q @ K^T from the run's queries and keys on a fresh backend, then that backend's scale,
// mask, padding and softmax in the steps' order, up to the step shown. The run itself may
// take another path to the same numbers (one pass per row, the work above a causal diagonal
// skipped).
std::vector<float> replay_grid(const GridSnapshot& in, const std::vector<Op>& ops) {
    auto cpu = in.make_backend();
    const TensorDesc q = upload(*cpu, in.q, in.q_shape), k = upload(*cpu, in.k, in.k_shape);
    Shape tt = in.q_shape;
    tt.back() = in.k_shape[in.k_shape.size() - 2];
    TensorDesc grid = contiguous(cpu->create_buffer(numel(tt)), tt);
    cpu->matmul(q, k, true, nullptr, grid);
    for (Op op : ops) {
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

// The run's queries, keys, values and key mask go through a fresh backend's flash_attention
// over the tile's query block, from key 0 to the tile's last key: the calls the run makes for
// a kept tile, one tile after another. The run itself may compute the tiles in larger pieces.
std::vector<float> replay_tile(const FlashSnapshot& in, std::int64_t q0, std::int64_t nq, std::int64_t k0,
                               std::int64_t nk, int which) {
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
    a.q_begin = q0, a.q_end = q0 + nq, a.k_begin = 0, a.k_end = k0 + nk, a.normalize = false;
    cpu->flash_attention(a);
    const TensorDesc out[] = {{a.tile.buffer, 0, {B, H, nq, nk}, {H * blk * blk, blk * blk, blk, 1}},
                              flash_rows(a.m, q0, nq), flash_rows(a.l, q0, nq), flash_rows(a.acc, q0, nq)};
    return read_host(*cpu, out[which]);
}

}  // namespace headsplit::detail
