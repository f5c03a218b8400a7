#include "headsplit/backends/cpu_backend.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xview.hpp>
#include "cpu_flash_back.hpp"
#include "cpu_rows.hpp"
#include "sgemm.hpp"
#include "headsplit/base/slices.hpp"

namespace headsplit {

namespace {

// How BLAS reads a rows x cols matrix whose row stride is `srow` and column stride `scol`.
struct BlasMatrix {
    bool transposed = false;  // stored column-major
    std::int64_t ld = 1;      // leading dimension
};

BlasMatrix blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t srow, std::int64_t scol) {
    if ((scol == 1 || cols == 1) && (rows == 1 || srow >= cols)) return {false, rows == 1 ? std::max<std::int64_t>(cols, 1) : srow};
    if ((srow == 1 || rows == 1) && (cols == 1 || scol >= rows)) return {true, cols == 1 ? std::max<std::int64_t>(rows, 1) : scol};
    throw std::invalid_argument("matmul operand with strides (" + std::to_string(srow) + ", " +
                                std::to_string(scol) + ") has no unit stride; copy it first");
}

// Offset of batch element `i` (row-major over `batch_shape`) in a tensor whose leading dims
// are the last `t.rank() - 2` of `batch_shape` (missing leading dims broadcast).
std::int64_t batch_offset(const TensorDesc& t, const Shape& batch_shape, std::int64_t i) {
    const int tb = t.rank() - 2;
    const int cb = static_cast<int>(batch_shape.size());
    std::int64_t off = t.offset;
    for (int d = cb - 1; d >= 0; --d) {
        const std::int64_t idx = i % batch_shape[d];
        i /= batch_shape[d];
        const int td = d - (cb - tb);
        if (td >= 0 && t.shape[td] != 1) off += idx * t.strides[td];
    }
    return off;
}

// An xtensor view of a strided tensor in place (no copy).
auto strided(std::vector<float>& buf, const TensorDesc& t) {
    std::vector<std::size_t> shape(t.shape.begin(), t.shape.end());
    std::vector<std::ptrdiff_t> strides(t.strides.begin(), t.strides.end());
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (shape[d] == 1) strides[d] = 0;  // xtensor's convention for broadcastable dims
    // xtensor sizes an adapted buffer by its element count; the strides reach the rest.
    return xt::adapt(buf.data() + t.offset, static_cast<std::size_t>(t.numel()), xt::no_ownership(), shape, strides);
}

// Runs body(first, last) over [0, n) rows on two threads (this machine's cores; cpu::sgemm
// shares a large product the same way), serially when the work is small or the second
// thread is taken.
template <class Body>
void parallel_rows(std::int64_t n, std::int64_t work_per_row, Body body) {
    if (in_sliced_job()) {  // the single-threaded page: blocks of rows, a slice point after each
        const std::int64_t block = std::max<std::int64_t>(1, (1 << 22) / std::max<std::int64_t>(work_per_row, 1));
        for (std::int64_t r0 = 0; r0 < n; r0 += block) {
            body(r0, std::min(n, r0 + block));
            slice_point();
        }
        return;
    }
    const std::int64_t half = n / 2;
    if (n * work_per_row < (1 << 16) ||
        !cpu::run_beside([&] { body(half, n); }, [&] { body(std::int64_t{0}, half); }))
        body(std::int64_t{0}, n);
}

// causal_matmul's row blocks: large enough for BLAS to run well, small enough to skip most
// of the work above the diagonal (B blocks skip (B - 1) / 2B of the full product).
constexpr std::int64_t kCausalRows = 128;

// Row-major without gaps: the engine's score grids always are, so these take plain loops.
bool dense(const TensorDesc& t) { return t.is_contiguous(); }


// One thread's share of flash attention (FlashArgs), a run of query rows of one head at a
// time: each key block as two GEMMs (the scores, then p @ V) around one pass over the rows.
// `run_tile` takes the tiles of `block` x `block` that the trace shows, one by one (a kept tile
// copies its scores out). `run_rows`, for a call that keeps no tile (the forward that records
// nothing, the tiles after the kept ones), cuts the same work into larger pieces: up to
// kWideRows query rows against kWideKeys keys per pair of GEMMs, fewer and bigger calls
// (OpenBLAS packs each operand once per call). The online softmax is the same per row, so
// the results differ from the tiles' only by rounding.
constexpr std::int64_t kWideRows = 128, kWideKeys = 512;

struct FlashKernel {
    const FlashArgs& a;
    const float *q, *k, *v, *mask;
    float *m, *l, *acc, *tile;
    std::int64_t B, H, T, hd, S, group, blk;

    bool tile_runs(std::int64_t i, std::int64_t j) const {
        return !a.causal || j * blk <= std::min((i + 1) * blk, T) - 1;
    }

    // Rows [q0, q0 + nq) of head h of batch element b against keys [k0, k0 + nk), scores in
    // `s` (nq x nk, turned into p in place): the online softmax step of FlashArgs.
    void step(std::int64_t b, std::int64_t h, std::int64_t q0, std::int64_t nq, std::int64_t k0, std::int64_t nk,
              float* s, float* kept) const {
        const float ninf = -std::numeric_limits<float>::infinity();
        const std::int64_t bh = b * H + h, g = h / group;
        const float* qb = q + b * a.q.strides[0] + h * a.q.strides[1] + q0 * a.q.strides[2];
        const float* kb = k + b * a.k.strides[0] + g * a.k.strides[1] + k0 * a.k.strides[2];
        const float* vb = v + b * a.v.strides[0] + g * a.v.strides[1] + k0 * a.v.strides[2];
        float* mr = m + bh * T + q0;
        float* lr = l + bh * T + q0;
        float* ar = acc + (bh * T + q0) * hd;
        const float* maskb = mask ? mask + b * a.key_mask->strides[0] : nullptr;
        const std::int64_t mks = mask ? a.key_mask->strides[1] : 0;
        const bool fresh = k0 == 0;
        // s = q_rows @ k_keys^T * factor   [nq, nk]
        cpu::sgemm(false, true, static_cast<int>(nq), static_cast<int>(nk), static_cast<int>(hd), a.factor, qb,
                   static_cast<int>(a.q.strides[2]), kb, static_cast<int>(a.k.strides[2]), 0.0f, s, static_cast<int>(nk));
        for (std::int64_t r = 0; r < nq; ++r) {
            const std::int64_t pos = q0 + r;
            float* sr = s + r * nk;
            // Keys this row may see here: up to its own position when causal.
            const std::int64_t seen = a.causal ? std::max<std::int64_t>(0, std::min(nk, pos - k0 + 1)) : nk;
            std::fill(sr + seen, sr + nk, ninf);
            if (maskb)
                for (std::int64_t key = 0; key < seen; ++key)
                    if (maskb[(k0 + key) * mks] != 0.0f) sr[key] = ninf;
            if (kept) std::copy(sr, sr + nk, kept + (bh * blk + r) * blk);
            const float m_old = fresh ? ninf : mr[r];
            const float m_new = std::max(m_old, cpu::row_max(sr, seen));
            // Nothing seen yet (every key so far masked): the row stays empty.
            const float c = m_old == ninf ? 0.0f : cpu::exp_approx(m_old - m_new);
            float* arow = ar + r * hd;
            if (fresh) std::fill(arow, arow + hd, 0.0f);
            else if (c != 1.0f) cpu::scale_row(arow, arow, hd, c);
            float sum = 0;
            if (m_new == ninf) std::fill(sr, sr + seen, 0.0f);
            else sum = cpu::exp_sum(sr, sr, seen, m_new);
            std::fill(sr + seen, sr + nk, 0.0f);
            lr[r] = (fresh ? 0.0f : lr[r] * c) + sum;
            mr[r] = m_new;
        }
        // acc += p @ v_keys   [nq, hd]
        cpu::sgemm(false, false, static_cast<int>(nq), static_cast<int>(hd), static_cast<int>(nk), 1.0f, s,
                   static_cast<int>(nk), vb, static_cast<int>(a.v.strides[2]), 1.0f, ar, static_cast<int>(hd));
    }

    // Keys [k_begin, k_end) that rows before `row_end` may see.
    std::int64_t key_end(std::int64_t row_end) const { return a.causal ? std::min(a.k_end, row_end) : a.k_end; }

    // Query block i's tiles in range, one by one. `s` holds blk x blk floats.
    void run_tile(std::int64_t b, std::int64_t h, std::int64_t i, float* s) const {
        const std::int64_t q0 = i * blk, nq = std::min(blk, T - q0);
        const std::int64_t j_end = (a.k_end + blk - 1) / blk;
        for (std::int64_t j = a.k_begin / blk; j < j_end; ++j)
            if (tile_runs(i, j)) step(b, h, q0, nq, j * blk, std::min(blk, S - j * blk), s, tile);
        if (a.normalize) divide(b, h, q0, nq);
    }

    // Rows [q0, q0 + nq) (nq <= kWideRows) through keys [k_begin, k_end) in pieces of
    // kWideKeys. `s` holds kWideRows x kWideKeys floats. It takes the ranges exactly, where
    // FlashArgs speaks of whole blocks starting in them: the same thing for the ranges the
    // engine passes, which start on block boundaries (k_begin is 0 or a tile's first key).
    void run_rows(std::int64_t b, std::int64_t h, std::int64_t q0, std::int64_t nq, float* s) const {
        const std::int64_t end = key_end(q0 + nq);
        for (std::int64_t k0 = a.k_begin; k0 < end; k0 += kWideKeys) step(b, h, q0, nq, k0, std::min(kWideKeys, end - k0), s, nullptr);
        if (a.normalize) divide(b, h, q0, nq);
    }

    void divide(std::int64_t b, std::int64_t h, std::int64_t q0, std::int64_t nq) const {
        float* ar = acc + ((b * H + h) * T + q0) * hd;
        const float* lr = l + (b * H + h) * T + q0;
        for (std::int64_t r = 0; r < nq; ++r) cpu::scale_row(ar + r * hd, ar + r * hd, hd, 1.0f / lr[r]);
    }
};

class CpuBackend final : public Backend {
public:
    const char* name() const override { return "cpu"; }
    Maker replay_maker() const override { return &make_cpu_backend; }

    int create_buffer(std::int64_t elements) override {
        ++stats_.buffers_created;
        int id = static_cast<int>(buffers_.size());
        if (!free_.empty()) {  // a released id is handed out again
            id = free_.back();
            free_.pop_back();
        } else {
            buffers_.emplace_back();
        }
        zeros_in_slices(buffers_[static_cast<std::size_t>(id)], static_cast<std::size_t>(elements));
        return id;
    }
    void write(int buffer, const std::vector<float>& data) override {
        auto& b = buffers_.at(buffer);
        if (data.size() != b.size()) throw std::invalid_argument("write: size mismatch");
        b = data;
    }
    void read(int buffer, std::vector<float>& out) override { out = buffers_.at(buffer); }
    const float* host_view(int buffer, std::int64_t* elements) override {
        const std::vector<float>& b = buffers_.at(buffer);
        *elements = static_cast<std::int64_t>(b.size());
        return b.data();
    }
    void release_buffers() override {
        buffers_.clear();
        free_.clear();
    }
    void release(const std::vector<int>& ids) override {
        for (int id : ids) {
            if (id < 0 || id >= static_cast<int>(buffers_.size())) continue;
            std::vector<float>().swap(buffers_[static_cast<std::size_t>(id)]);
            free_.push_back(id);
        }
    }
    std::int64_t held_bytes() const override { return used_bytes(); }
    std::int64_t used_bytes() const override {
        std::int64_t n = 0;
        for (const auto& b : buffers_) n += static_cast<std::int64_t>(b.size() * sizeof(float));
        return n;
    }

    void matmul(const TensorDesc& a, const TensorDesc& b, bool b_transposed, const TensorDesc* bias,
                const TensorDesc& c) override {
        const int ar = a.rank(), br = b.rank(), cr = c.rank();
        const std::int64_t M = a.shape[ar - 2], K = a.shape[ar - 1];
        // Look at b as the K x N matrix it multiplies by.
        const std::int64_t bK = b_transposed ? b.shape[br - 1] : b.shape[br - 2];
        const std::int64_t N = b_transposed ? b.shape[br - 2] : b.shape[br - 1];
        const std::int64_t sbk = b_transposed ? b.strides[br - 1] : b.strides[br - 2];
        const std::int64_t sbn = b_transposed ? b.strides[br - 2] : b.strides[br - 1];
        if (bK != K || c.shape[cr - 2] != M || c.shape[cr - 1] != N || c.strides[cr - 1] != 1)
            throw std::invalid_argument("matmul " + shape_str(a.shape) + " @ " + shape_str(b.shape) +
                                        (b_transposed ? "^T" : "") + " -> " + shape_str(c.shape) +
                                        ": shapes do not match");
        const BlasMatrix la = blas_layout(M, K, a.strides[ar - 2], a.strides[ar - 1]);
        const BlasMatrix lb = blas_layout(K, N, sbk, sbn);
        const std::int64_t ldc = M == 1 ? N : c.strides[cr - 2];
        const Shape batch(c.shape.begin(), c.shape.end() - 2);
        const std::int64_t batches = numel(batch);
        float* cbuf = buffers_.at(c.buffer).data();
        const float* abuf = buffers_.at(a.buffer).data();
        const float* bbuf = buffers_.at(b.buffer).data();
        for (std::int64_t i = 0; i < batches; ++i) {
            float* cp = cbuf + batch_offset(c, batch, i);
            float beta = 0.0f;
            if (bias) {  // start every row of C at the bias, then accumulate the product
                const float* bp = buffers_.at(bias->buffer).data() + bias->offset;
                for (std::int64_t m = 0; m < M; ++m)
                    for (std::int64_t n = 0; n < N; ++n) cp[m * ldc + n] = bp[n * bias->strides[0]];
                beta = 1.0f;
            }
            cpu::sgemm(la.transposed, lb.transposed, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 1.0f,
                       abuf + batch_offset(a, batch, i), static_cast<int>(la.ld), bbuf + batch_offset(b, batch, i),
                       static_cast<int>(lb.ld), beta, cp, static_cast<int>(ldc));
            ++stats_.dispatches;
        }
    }

    // Row blocks of kCausalRows: block [r0, r1) needs keys 0 .. r1 - 1 only, in the scores
    // (Q K^T) and in the context (weights @ V, zero beyond the diagonal).
    void causal_matmul(const TensorDesc& a, const TensorDesc& b, bool b_transposed, const TensorDesc& c,
                       bool scores) override {
        const int ar = a.rank(), br = b.rank(), cr = c.rank();
        const std::int64_t rows = a.shape[ar - 2];
        for (std::int64_t r0 = 0; r0 < rows; r0 += kCausalRows) {
            const std::int64_t r1 = std::min(rows, r0 + kCausalRows);
            TensorDesc aw = a, bw = b, cw = c;
            aw.offset += r0 * a.strides[ar - 2];
            aw.shape[ar - 2] = r1 - r0;
            cw.offset += r0 * c.strides[cr - 2];
            cw.shape[cr - 2] = r1 - r0;
            bw.shape[br - 2] = r1;                        // keys 0 .. r1 - 1 (rows of K, or of V)
            if (scores) cw.shape[cr - 1] = r1;            // their scores
            else aw.shape[ar - 1] = r1;                   // their weights
            matmul(aw, bw, b_transposed, nullptr, cw);
        }
    }

    void causal_mask(const TensorDesc& scores) override {
        ++stats_.dispatches;
        const std::int64_t rows = scores.shape[scores.rank() - 2], cols = scores.shape.back();
        const float ninf = -std::numeric_limits<float>::infinity();
        if (dense(scores)) {
            // Row i of every [T, T] grid: columns after i become -inf.
            float* base = buffers_.at(scores.buffer).data() + scores.offset;
            parallel_rows(scores.numel() / cols, cols, [&](std::int64_t r0, std::int64_t r1) {
                for (std::int64_t r = r0; r < r1; ++r) {
                    const std::int64_t i = r % rows;
                    if (i + 1 < cols) std::fill(base + r * cols + i + 1, base + (r + 1) * cols, ninf);
                }
            });
            return;
        }
        auto s = strided(buffers_.at(scores.buffer), scores);
        xt::xtensor<bool, 2> future = xt::zeros<bool>(std::array<std::size_t, 2>{static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)});
        for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = i + 1; j < cols; ++j) future(i, j) = true;
        s = xt::where(future, ninf, s);
    }

    void masked_fill(const TensorDesc& scores, const TensorDesc& key_mask) override {
        ++stats_.dispatches;
        const std::int64_t cols = scores.shape.back();
        const std::int64_t n_rows = scores.numel() / std::max<std::int64_t>(cols, 1);
        const std::int64_t rows_per_batch = n_rows / std::max<std::int64_t>(key_mask.shape[0], 1);
        const float ninf = -std::numeric_limits<float>::infinity();
        const float* m = buffers_.at(key_mask.buffer).data() + key_mask.offset;
        std::vector<float>& buf = buffers_.at(scores.buffer);
        for (std::int64_t r = 0; r < n_rows; ++r) {
            const float* mb = m + (r / rows_per_batch) * key_mask.strides[0];
            const std::int64_t row_start = element_offset(scores.shape, scores.strides, scores.offset, r * cols);
            const std::int64_t sc = scores.strides.back();
            for (std::int64_t j = 0; j < cols; ++j)
                if (mb[j * key_mask.strides[1]] != 0.0f) buf[static_cast<std::size_t>(row_start + j * sc)] = ninf;
        }
    }

    void scale(const TensorDesc& t, float factor) override {
        ++stats_.dispatches;
        if (dense(t)) {
            float* p = buffers_.at(t.buffer).data() + t.offset;
            parallel_rows(t.numel(), 1, [&](std::int64_t a, std::int64_t b) {
                for (std::int64_t i = a; i < b; ++i) p[i] *= factor;
            });
            return;
        }
        auto s = strided(buffers_.at(t.buffer), t);
        s *= factor;
    }

    void softmax(const TensorDesc& in, const TensorDesc& out) override {
        ++stats_.dispatches;
        const std::int64_t cols = in.shape.back();
        if (dense(in) && dense(out)) {
            const float* x = buffers_.at(in.buffer).data() + in.offset;
            float* y = buffers_.at(out.buffer).data() + out.offset;
            parallel_rows(in.numel() / cols, cols * 8, [&](std::int64_t r0, std::int64_t r1) {
                for (std::int64_t r = r0; r < r1; ++r) {
                    const float* xr = x + r * cols;
                    float* yr = y + r * cols;
                    // pass 1: the row max, so exp never overflows; pass 2: exp and sum
                    // (-inf gives exactly 0); pass 3: normalise.
                    const float mx = cpu::row_max(xr, cols);
                    const float sum = cpu::exp_sum(xr, yr, cols, mx);
                    cpu::scale_row(yr, yr, cols, 1.0f / sum);
                }
            });
            return;
        }
        auto xs = strided(buffers_.at(in.buffer), in);
        auto ys = strided(buffers_.at(out.buffer), out);
        const std::size_t last = xs.dimension() - 1;
        // Both reductions are evaluated before use: xtensor 0.24 broadcasts a lazy keep_dims
        // reducer over a strided adaptor wrongly (rows get other rows' maxima).
        const auto row_max = xt::eval(xt::amax(xs, {last}, xt::keep_dims));
        ys = xt::exp(xs - row_max);
        const auto row_sum = xt::eval(xt::sum(ys, {last}, xt::keep_dims));
        ys /= row_sum;
    }

    void masked_softmax(const TensorDesc& scores, const TensorDesc& out, float factor, bool causal,
                        const TensorDesc* key_mask) override {
        if (!dense(scores) || !dense(out)) {  // not a layout the engine makes: the steps one by one
            copy(scores, out);
            if (causal) causal_mask(out);
            if (key_mask) masked_fill(out, *key_mask);
            scale(out, factor);
            softmax(out, out);
            return;
        }
        ++stats_.dispatches;
        const std::int64_t rows = scores.shape[scores.rank() - 2], cols = scores.shape.back();
        const std::int64_t n_rows = scores.numel() / std::max<std::int64_t>(cols, 1);
        const std::int64_t rows_per_batch = key_mask ? n_rows / std::max<std::int64_t>(key_mask->shape[0], 1) : 1;
        const float* x = buffers_.at(scores.buffer).data() + scores.offset;
        float* y = buffers_.at(out.buffer).data() + out.offset;
        const float* m = key_mask ? buffers_.at(key_mask->buffer).data() + key_mask->offset : nullptr;
        parallel_rows(n_rows, cols * 8, [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
                const float* xr = x + r * cols;
                float* yr = y + r * cols;
                const float* mr = m ? m + (r / rows_per_batch) * key_mask->strides[0] : nullptr;
                // Keys this row may see: up to its own position when causal (the rest is 0).
                const std::int64_t seen = causal ? std::min(cols, r % rows + 1) : cols;
                auto allowed = [&](std::int64_t j) { return !mr || mr[j * key_mask->strides[1]] == 0.0f; };
                const float ninf = -std::numeric_limits<float>::infinity();
                // The scaled scores, rounded as the scale step stores them, -inf where masked.
                cpu::scale_row(xr, yr, seen, factor);
                if (mr)
                    for (std::int64_t j = 0; j < seen; ++j)
                        if (!allowed(j)) yr[j] = ninf;
                const float sum = cpu::exp_sum(yr, yr, seen, cpu::row_max(yr, seen));  // -inf gives 0
                cpu::scale_row(yr, yr, seen, 1.0f / sum);
                std::fill(yr + seen, yr + cols, 0.0f);
            }
        });
    }


    void flash_attention(const FlashArgs& a) override {
        ++stats_.dispatches;
        auto at = [&](const TensorDesc& t) { return buffers_.at(t.buffer).data() + t.offset; };
        FlashKernel kern{a, at(a.q), at(a.k), at(a.v), a.key_mask ? at(*a.key_mask) : nullptr, at(a.m), at(a.l),
                         at(a.acc), a.tile.buffer >= 0 ? at(a.tile) : nullptr,
                         a.q.shape[0], a.q.shape[1], a.q.shape[2], a.q.shape[3], a.k.shape[2],
                         a.q.shape[1] / std::max<std::int64_t>(a.k.shape[1], 1), std::max<std::int64_t>(a.block, 1)};
        if (a.q_end <= a.q_begin) return;
        const cpu::OneThreadPerProduct tile_threads_only;  // the two threads here share the work
        const std::int64_t heads = kern.B * kern.H;
        if (a.tile.buffer >= 0) {  // the trace's tiles, one query block at a time
            const std::int64_t first = a.q_begin / kern.blk, blocks = (a.q_end - 1) / kern.blk + 1 - first;
            const std::int64_t keys = std::max<std::int64_t>(a.k_end - a.k_begin, 1);
            parallel_rows(heads * blocks, kern.blk * keys * kern.hd / 4, [&](std::int64_t u0, std::int64_t u1) {
                std::vector<float> s(static_cast<std::size_t>(kern.blk * kern.blk));
                for (std::int64_t u = u0; u < u1; ++u) {
                    const std::int64_t bh = u / blocks;
                    kern.run_tile(bh / kern.H, bh % kern.H, first + u % blocks, s.data());
                }
            });
            return;
        }
        // Pieces of kWideRows rows. Under a causal mask the later rows cost more: each head's
        // pieces are taken first, last, second, second to last, ..., so that both halves of
        // the units get an even share.
        const std::int64_t pieces = (a.q_end - a.q_begin + kWideRows - 1) / kWideRows;
        const std::int64_t keys = std::max<std::int64_t>(a.k_end - a.k_begin, 1);
        parallel_rows(heads * pieces, kWideRows * keys * kern.hd / 4, [&](std::int64_t u0, std::int64_t u1) {
            std::vector<float> s(static_cast<std::size_t>(kWideRows * kWideKeys));
            for (std::int64_t u = u0; u < u1; ++u) {
                const std::int64_t bh = u / pieces, n = u % pieces;
                const std::int64_t piece = n % 2 == 0 ? n / 2 : pieces - 1 - n / 2;
                const std::int64_t q0 = a.q_begin + piece * kWideRows;
                kern.run_rows(bh / kern.H, bh % kern.H, q0, std::min(kWideRows, a.q_end - q0), s.data());
            }
        });
    }

    void multiply(const TensorDesc& a, const TensorDesc& b, float factor, const TensorDesc& out) override {
        auto y = strided(buffers_.at(out.buffer), out);
        y = strided(buffers_.at(a.buffer), a) * strided(buffers_.at(b.buffer), b) * factor;
        ++stats_.dispatches;
    }

    void copy(const TensorDesc& src, const TensorDesc& dst) override {
        auto y = strided(buffers_.at(dst.buffer), dst);
        // noalias: plain `y = x` between two adaptors of one type would copy the adaptor,
        // not the numbers.
        xt::noalias(y) = strided(buffers_.at(src.buffer), src);
        ++stats_.dispatches;
    }

    void add(const TensorDesc& a, const TensorDesc& b, const TensorDesc& out) override {
        auto y = strided(buffers_.at(out.buffer), out);
        y = strided(buffers_.at(a.buffer), a) + strided(buffers_.at(b.buffer), b);
        ++stats_.dispatches;
    }

    // Row by row over the last dim, each tensor at its own strides; the row's dot product in
    // double (its terms cancel: sum_j dA_j A_j is an average of the dA_j).
    void softmax_backward(const TensorDesc& w, const TensorDesc& dw, const TensorDesc& ds) override {
        ++stats_.dispatches;
        const std::int64_t cols = w.shape.back();
        const std::int64_t n_rows = w.numel() / std::max<std::int64_t>(cols, 1);
        const float* a = buffers_.at(w.buffer).data();
        const float* g = buffers_.at(dw.buffer).data();
        float* o = buffers_.at(ds.buffer).data();
        const std::int64_t sa = w.strides.back(), sg = dw.strides.back(), so = ds.strides.back();
        parallel_rows(n_rows, cols * 4, [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
                const float* ar = a + element_offset(w.shape, w.strides, w.offset, r * cols);
                const float* gr = g + element_offset(dw.shape, dw.strides, dw.offset, r * cols);
                float* orow = o + element_offset(ds.shape, ds.strides, ds.offset, r * cols);
                double dot = 0;
                for (std::int64_t j = 0; j < cols; ++j) dot += static_cast<double>(gr[j * sg]) * ar[j * sa];
                const float d = static_cast<float>(dot);
                for (std::int64_t j = 0; j < cols; ++j) orow[j * so] = ar[j * sa] * (gr[j * sg] - d);
            }
        });
    }

    void mask_gradient(const TensorDesc& grad, bool causal, const TensorDesc* key_mask) override {
        ++stats_.dispatches;
        const std::int64_t rows = grad.shape[grad.rank() - 2], cols = grad.shape.back();
        const std::int64_t n_rows = grad.numel() / std::max<std::int64_t>(cols, 1);
        const std::int64_t rows_per_batch = key_mask ? n_rows / std::max<std::int64_t>(key_mask->shape[0], 1) : 1;
        const float* m = key_mask ? buffers_.at(key_mask->buffer).data() + key_mask->offset : nullptr;
        float* buf = buffers_.at(grad.buffer).data();
        const std::int64_t sc = grad.strides.back();
        for (std::int64_t r = 0; r < n_rows; ++r) {
            float* row = buf + element_offset(grad.shape, grad.strides, grad.offset, r * cols);
            const float* mb = m ? m + (r / rows_per_batch) * key_mask->strides[0] : nullptr;
            for (std::int64_t j = 0; j < cols; ++j)
                if ((causal && j > r % rows) || (mb && mb[j * key_mask->strides[1]] != 0.0f)) row[j * sc] = 0.0f;
        }
    }

    void flash_backward(const FlashBackArgs& a) override {
        ++stats_.dispatches;
        auto in = [&](const TensorDesc& t) -> const float* { return buffers_.at(t.buffer).data() + t.offset; };
        auto at = [&](const TensorDesc& t) { return buffers_.at(t.buffer).data() + t.offset; };
        const cpu::FlashBackData d{in(a.q),   in(a.k),   in(a.v),  in(a.out), in(a.d_out),
                                   in(a.m),   in(a.l),   a.key_mask ? in(*a.key_mask) : nullptr,
                                   at(a.lse), at(a.delta), at(a.dq), at(a.dk), at(a.dv),
                                   a.tile.buffer >= 0 ? at(a.tile) : nullptr};
        cpu::flash_backward(a, d);
    }

    BackendStats take_stats() override {
        BackendStats s = stats_;
        stats_ = {};
        return s;
    }

private:
    std::vector<std::vector<float>> buffers_;
    std::vector<int> free_;  // ids of released buffers
    BackendStats stats_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace headsplit
