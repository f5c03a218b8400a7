#pragma once
// The small interface every compute backend implements (like ggml_backend_i). The engine
// asks for matmul / mask / scale / softmax / multiply / copy on strided tensors that live
// in the backend's own buffers; it never branches on which backend it has.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headsplit/base/tensor.hpp"

namespace headsplit {

// Which backend a configuration asks for.
enum class BackendKind { Cpu, Gl };
const char* backend_name(BackendKind b);  // "cpu" | "gl"

// What ran where during one step, beside the engine's own matmul count.
struct BackendStats {
    std::int64_t dispatches = 0;  // kernel launches / BLAS calls
    std::int64_t workgroups = 0;  // GL: compute workgroups dispatched; CPU: 0
    std::int64_t buffers_created = 0;  // new device allocations (GL reuses released buffers)
};

// Flash attention over tiles: exact attention with an online softmax that never holds a
// whole score grid (FlashAttention). For each query block of `block` rows starting in
// [q_begin, q_end) and each key block of `block` keys starting in [k_begin, k_end) whose tile
// runs (Config::tile_runs: under a causal mask a tile wholly above the diagonal is skipped),
// for every batch element and head, in key-block order:
//   s = q_blk @ k_blk^T * factor, -inf where masked (causal: key j > query i; key_mask[b, j] != 0)
//   m_new = max(m, rowmax s); p = exp(s - m_new); c = exp(m - m_new)
//   l = l * c + rowsum p;  acc = acc * c + p @ v_blk;  m = m_new
// The key block that starts at key 0 starts its rows afresh (m = -inf, l = 0, acc = 0). Then,
// with `normalize`, every query row of [q_begin, q_end) ends as acc /= l, in place (k_begin ==
// k_end: only that). The same numbers, to rounding, whichever ranges the work is cut into (a
// pass that keeps no tile may take larger pieces than the tiles).
// The GL backend on a software renderer runs flash from copies of K and V of its own
// ([B, G, S, hd], contiguous), each one chunk of at most this many floats longer; the memory
// estimate counts them for every GL flash run.
constexpr std::int64_t kFlashChunkFloats = 16384;

struct FlashArgs {
    TensorDesc q;            // [B, H, T, hd]
    TensorDesc k, v;         // [B, G, S, hd]: query head h reads key/value head h / (H / G)
    TensorDesc m, l;         // [B, H, T], contiguous
    TensorDesc acc;          // [B, H, T, hd], contiguous
    TensorDesc tile;         // buffer >= 0: [B, H, block, block], contiguous: the scores s of the
                             // (one) tile computed, for the trace; buffer < 0: not kept
    const TensorDesc* key_mask = nullptr;  // [B, S], or none
    float factor = 1.0f;
    bool causal = false;
    bool normalize = false;
    std::int64_t block = 1;
    std::int64_t q_begin = 0, q_end = 0, k_begin = 0, k_end = 0;
};

// Flash attention's backward (FlashAttention-2): from what the forward kept, its output `out`
// and each row's m and l, never a score grid. With `rows`, each query row first:
//   lse = m + log l;  delta = rowsum(d_out * out);  and dq, dk, dv zeroed.
// Otherwise, for every tile (query block in [q_begin, q_end), key block in [k_begin, k_end),
// both in `block`s, skipped as Config::tile_runs skips it), every batch element and head:
//   s = q_blk @ k_blk^T * factor, masked as the forward's;  p = exp(s - lse) (0 where masked)
//   dv_blk += p^T @ d_out_blk;  dp = d_out_blk @ v_blk^T;  ds = p * (dp - delta)
//   dq_blk += ds @ k_blk * factor;  dk_blk += ds^T @ q_blk * factor
// Query head h adds to key/value head h / (H / G)'s dk and dv. With `tile` (buffer >= 0, one
// tile in range), that tile's p is written there, [B, H, block, block].
struct FlashBackArgs {
    TensorDesc q, k, v;       // [B, H, T, hd]; [B, G, S, hd]
    TensorDesc out, d_out;    // [B, H, T, hd], any strides
    TensorDesc m, l;          // [B, H, T], contiguous: the forward's
    TensorDesc lse, delta;    // [B, H, T], contiguous
    TensorDesc dq;            // [B, H, T, hd], contiguous
    TensorDesc dk, dv;        // [B, G, S, hd], contiguous
    TensorDesc tile;          // [B, H, block, block], contiguous, or buffer < 0
    const TensorDesc* key_mask = nullptr;  // [B, S], or none
    float factor = 1.0f;
    bool causal = false;
    bool rows = false;
    std::int64_t block = 1;
    std::int64_t q_begin = 0, q_end = 0, k_begin = 0, k_end = 0;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual const char* name() const = 0;
    // What makes a fresh backend that computes this one's numbers on the host (the CPU
    // backend's: make_cpu_backend), or nullptr where none does. With one, the engine may leave
    // a large step's values to be computed again there when first shown (DeferredValues).
    using Maker = std::unique_ptr<Backend> (*)();
    virtual Maker replay_maker() const { return nullptr; }

    // Buffers: ids handed out by create_buffer stay valid until release_buffers(); their
    // contents are unspecified until written.
    virtual int create_buffer(std::int64_t elements) = 0;
    virtual void write(int buffer, const std::vector<float>& data) = 0;
    virtual void read(int buffer, std::vector<float>& out) = 0;  // the whole buffer
    // A backend whose buffers are host memory lends them for reading (valid until the next
    // call that computes or allocates; `elements` set to the size): no copy of the whole
    // buffer to record a window of it. nullptr: use read().
    virtual const float* host_view(int buffer, std::int64_t* elements) {
        (void)buffer;
        (void)elements;
        return nullptr;
    }
    virtual void release_buffers() = 0;
    // Releases these buffers only (a Runner's, when it ends); others stay valid.
    virtual void release(const std::vector<int>& buffers) = 0;
    // Bytes of buffer memory this backend holds now (in use plus kept for reuse).
    virtual std::int64_t held_bytes() const = 0;
    // Bytes of the buffers handed out and not yet released.
    virtual std::int64_t used_bytes() const = 0;

    // c[...] = a[...] @ B[...] (+ bias), over the leading (batch) dims of c.
    //   a: [..., M, K]. b: [..., K, N], or [..., N, K] when b_transposed (nn.Linear weights,
    //   keys in Q @ K^T). Leading dims of a or b may be absent (broadcast).
    //   bias: nullptr or [N], added to every row. c: [..., M, N], last dim unit-stride.
    // Each matrix needs one unit stride in its last two dims (row- or column-major).
    virtual void matmul(const TensorDesc& a, const TensorDesc& b, bool b_transposed,
                        const TensorDesc* bias, const TensorDesc& c) = 0;
    // The same matmul (no bias) where a causal mask will follow and nothing is recorded: when
    // `scores` (c = Q @ K^T), only c[..., i, j] with j <= i must be right (the fused mask and
    // softmax read no other); otherwise (c = weights @ V) a's row i is 0 beyond column i and
    // need not be read. A backend may skip the work above the diagonal; the default does it all.
    virtual void causal_matmul(const TensorDesc& a, const TensorDesc& b, bool b_transposed, const TensorDesc& c,
                               bool scores) {
        (void)scores;
        matmul(a, b, b_transposed, nullptr, c);
    }
    // scores[..., i, j] = -inf where j > i (in place).
    virtual void causal_mask(const TensorDesc& scores) = 0;
    // scores[b, ..., i, j] = -inf where key_mask[b, j] != 0 (in place): the key padding mask.
    //   scores: [B, ..., T, S]; key_mask: [B, S], any strides.
    virtual void masked_fill(const TensorDesc& scores, const TensorDesc& key_mask) = 0;
    // t *= factor (in place).
    virtual void scale(const TensorDesc& t, float factor) = 0;
    // out = softmax(in, dim=-1); in and out must not overlap.
    virtual void softmax(const TensorDesc& in, const TensorDesc& out) = 0;
    // The mask, scale and softmax steps as one pass per row (a forward that records nothing):
    // out = softmax(where(masked, -inf, scores * factor), dim=-1), masked = j > i (causal) or
    // key_mask[b, j] != 0 (key_mask may be nullptr). scores is only read. The numbers equal
    // causal_mask + masked_fill + scale + softmax's.
    virtual void masked_softmax(const TensorDesc& scores, const TensorDesc& out, float factor, bool causal,
                                const TensorDesc* key_mask) = 0;
    // FlashArgs above.
    virtual void flash_attention(const FlashArgs& args) = 0;
    // out = a * b * factor, elementwise (dropout: weights * keep_mask / (1 - p)).
    virtual void multiply(const TensorDesc& a, const TensorDesc& b, float factor, const TensorDesc& out) = 0;
    // dst = src element by element in row-major order of the shape (the .contiguous() copy;
    // with a stride of 0 in src, repeat_interleave). Any rank.
    virtual void copy(const TensorDesc& src, const TensorDesc& dst) = 0;

    // What the backward pass needs besides matmul (whose a may be a transposed view, as in
    // dW = dY^T @ X), scale, multiply and copy:
    // out = a + b, elementwise (a gradient that arrives by two paths, summed). Any rank.
    virtual void add(const TensorDesc& a, const TensorDesc& b, const TensorDesc& out) = 0;
    // The softmax's backward along the last dim, row by row: d_scores = A * (dA - rowsum(dA * A)),
    // A the softmax's output and dA its gradient. d_scores must not overlap either.
    virtual void softmax_backward(const TensorDesc& weights, const TensorDesc& d_weights, const TensorDesc& d_scores) = 0;
    // grad[b, ..., i, j] = 0 (in place) where the forward's mask put -inf: j > i when `causal`;
    // key_mask[b, j] != 0 when key_mask is given ([B, S], any strides). A masked score had no
    // effect on the output, so its gradient is 0, never NaN.
    virtual void mask_gradient(const TensorDesc& grad, bool causal, const TensorDesc* key_mask) = 0;
    // FlashBackArgs above.
    virtual void flash_backward(const FlashBackArgs& args) = 0;

    // Blocks until all submitted work is done, so that a step's time is its compute time.
    virtual void finish() {}
    // Counters since the last call.
    virtual BackendStats take_stats() = 0;
};

}  // namespace headsplit
