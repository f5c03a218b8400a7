#include "cpu_flash_back.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sgemm.hpp"
#include "headsplit/base/slices.hpp"

namespace headsplit::cpu {

namespace {

// The rows phase: lse and delta of every query row; dq, dk, dv zeroed.
void rows(const FlashBackArgs& a, const FlashBackData& d) {
    const std::int64_t B = a.q.shape[0], H = a.q.shape[1], T = a.q.shape[2], hd = a.q.shape[3];
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t t = 0; t < T; ++t) {
                const std::int64_t r = (b * H + h) * T + t;
                const float* o = d.out + b * a.out.strides[0] + h * a.out.strides[1] + t * a.out.strides[2];
                const float* g = d.d_out + b * a.d_out.strides[0] + h * a.d_out.strides[1] + t * a.d_out.strides[2];
                double dot = 0;
                for (std::int64_t e = 0; e < hd; ++e) dot += static_cast<double>(o[e * a.out.strides[3]]) * g[e * a.d_out.strides[3]];
                d.delta[r] = static_cast<float>(dot);
                d.lse[r] = d.m[r] + std::log(d.l[r]);
            }
    std::fill(d.dq, d.dq + a.dq.numel(), 0.0f);
    std::fill(d.dk, d.dk + a.dk.numel(), 0.0f);
    std::fill(d.dv, d.dv + a.dv.numel(), 0.0f);
}

// One tile of batch element b, query head h: rows [q0, q0 + nq) against keys [k0, k0 + nk).
// `p` and `ds` hold nq x nk floats each.
void tile(const FlashBackArgs& a, const FlashBackData& d, std::int64_t b, std::int64_t h, std::int64_t q0,
          std::int64_t nq, std::int64_t k0, std::int64_t nk, float* p, float* ds) {
    const std::int64_t H = a.q.shape[1], T = a.q.shape[2], hd = a.q.shape[3], G = a.k.shape[1], S = a.k.shape[2];
    const std::int64_t g = h / (H / G), r0 = (b * H + h) * T + q0;
    const float* q = d.q + b * a.q.strides[0] + h * a.q.strides[1] + q0 * a.q.strides[2];
    const float* k = d.k + b * a.k.strides[0] + g * a.k.strides[1] + k0 * a.k.strides[2];
    const float* v = d.v + b * a.v.strides[0] + g * a.v.strides[1] + k0 * a.v.strides[2];
    const float* go = d.d_out + b * a.d_out.strides[0] + h * a.d_out.strides[1] + q0 * a.d_out.strides[2];
    float* dq = d.dq + r0 * hd;
    float* dk = d.dk + ((b * G + g) * S + k0) * hd;
    float* dv = d.dv + ((b * G + g) * S + k0) * hd;
    const int iq = static_cast<int>(nq), ik = static_cast<int>(nk), ih = static_cast<int>(hd);
    const int lq = static_cast<int>(a.q.strides[2]), lk = static_cast<int>(a.k.strides[2]);
    const int lv = static_cast<int>(a.v.strides[2]), lo = static_cast<int>(a.d_out.strides[2]);
    // s = q @ k^T * factor, then p = exp(s - lse), 0 where the forward masked
    one_thread_sgemm(false, true, iq, ik, ih, a.factor, q, lq, k, lk, 0.0f, p, ik);
    const float* mask = d.key_mask ? d.key_mask + b * a.key_mask->strides[0] : nullptr;
    for (std::int64_t i = 0; i < nq; ++i)
        for (std::int64_t j = 0; j < nk; ++j) {
            const bool masked = (a.causal && k0 + j > q0 + i) || (mask && mask[(k0 + j) * a.key_mask->strides[1]] != 0.0f);
            float& x = p[i * nk + j];
            x = masked ? 0.0f : std::exp(x - d.lse[r0 + i]);
        }
    if (d.tile) {
        const std::int64_t blk = a.block;
        for (std::int64_t i = 0; i < nq; ++i) std::copy(p + i * nk, p + (i + 1) * nk, d.tile + ((b * H + h) * blk + i) * blk);
    }
    // dv += p^T @ d_out;  dp = d_out @ v^T;  ds = p * (dp - delta)
    one_thread_sgemm(true, false, ik, ih, iq, 1.0f, p, ik, go, lo, 1.0f, dv, ih);
    one_thread_sgemm(false, true, iq, ik, ih, 1.0f, go, lo, v, lv, 0.0f, ds, ik);
    for (std::int64_t i = 0; i < nq; ++i)
        for (std::int64_t j = 0; j < nk; ++j) ds[i * nk + j] = p[i * nk + j] * (ds[i * nk + j] - d.delta[r0 + i]);
    // dq += ds @ k * factor;  dk += ds^T @ q * factor
    one_thread_sgemm(false, false, iq, ih, ik, a.factor, ds, ik, k, lk, 1.0f, dq, ih);
    one_thread_sgemm(true, false, ik, ih, iq, a.factor, ds, ik, q, lq, 1.0f, dk, ih);
}

}  // namespace

void flash_backward(const FlashBackArgs& a, const FlashBackData& d) {
    if (a.rows) {
        rows(a, d);
        return;
    }
    const std::int64_t B = a.q.shape[0], H = a.q.shape[1], T = a.q.shape[2], G = a.k.shape[1], S = a.k.shape[2];
    const std::int64_t blk = std::max<std::int64_t>(a.block, 1), group = H / std::max<std::int64_t>(G, 1);
    const auto runs = [&](std::int64_t i, std::int64_t j) { return !a.causal || j * blk <= std::min((i + 1) * blk, T) - 1; };
    const std::int64_t i0 = a.q_begin / blk, i1 = (a.q_end + blk - 1) / blk;
    const std::int64_t j0 = a.k_begin / blk, j1 = (a.k_end + blk - 1) / blk;
    std::vector<float> p(static_cast<std::size_t>(blk * blk)), ds(p.size());
    // Key blocks outer, as FlashAttention-2 runs them; a key/value head's query heads one
    // after another, so that its dk and dv have one writer.
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t g = 0; g < G; ++g)
            for (std::int64_t j = j0; j < j1; ++j) {
                for (std::int64_t h = g * group; h < (g + 1) * group; ++h)
                    for (std::int64_t i = i0; i < i1; ++i)
                        if (runs(i, j))
                            tile(a, d, b, h, i * blk, std::min(blk, T - i * blk), j * blk, std::min(blk, S - j * blk),
                                 p.data(), ds.data());
                slice_point();
            }
}

}  // namespace headsplit::cpu
