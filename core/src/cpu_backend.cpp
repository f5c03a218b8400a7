#include "headsplit/cpu_backend.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xview.hpp>
#include <xtensor-blas/xblas.hpp>

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

class CpuBackend final : public Backend {
public:
    const char* name() const override { return "cpu"; }

    int create_buffer(std::int64_t elements) override {
        buffers_.emplace_back(static_cast<std::size_t>(elements), 0.0f);
        ++stats_.buffers_created;
        return static_cast<int>(buffers_.size()) - 1;
    }
    void write(int buffer, const std::vector<float>& data) override {
        auto& b = buffers_.at(buffer);
        if (data.size() != b.size()) throw std::invalid_argument("write: size mismatch");
        b = data;
    }
    void read(int buffer, std::vector<float>& out) override { out = buffers_.at(buffer); }
    void release_buffers() override { buffers_.clear(); }

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
            using cxxblas::Transpose;
            cxxblas::gemm<int>(cxxblas::StorageOrder::RowMajor,
                               la.transposed ? Transpose::Trans : Transpose::NoTrans,
                               lb.transposed ? Transpose::Trans : Transpose::NoTrans,
                               static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 1.0f,
                               abuf + batch_offset(a, batch, i), static_cast<int>(la.ld),
                               bbuf + batch_offset(b, batch, i), static_cast<int>(lb.ld), beta, cp,
                               static_cast<int>(ldc));
            ++stats_.dispatches;
        }
    }

    void causal_mask(const TensorDesc& scores) override {
        auto s = strided(buffers_.at(scores.buffer), scores);
        const std::size_t r = s.dimension();
        const std::size_t rows = s.shape()[r - 2], cols = s.shape()[r - 1];
        const float ninf = -std::numeric_limits<float>::infinity();
        // [T, T] lower-triangular pattern, broadcast over the leading dims.
        xt::xtensor<bool, 2> future = xt::zeros<bool>(std::array<std::size_t, 2>{rows, cols});
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = i + 1; j < cols; ++j) future(i, j) = true;
        s = xt::where(future, ninf, s);
        ++stats_.dispatches;
    }

    void scale(const TensorDesc& t, float factor) override {
        auto s = strided(buffers_.at(t.buffer), t);
        s *= factor;
        ++stats_.dispatches;
    }

    void softmax(const TensorDesc& in, const TensorDesc& out) override {
        auto x = strided(buffers_.at(in.buffer), in);
        auto y = strided(buffers_.at(out.buffer), out);
        const std::size_t last = x.dimension() - 1;
        // Subtract the row max first so exp never overflows; -inf becomes exactly 0.
        // Both reductions are evaluated before use: xtensor 0.24 broadcasts a lazy
        // keep_dims reducer over a strided adaptor wrongly (rows get other rows' maxima).
        const auto row_max = xt::eval(xt::amax(x, {last}, xt::keep_dims));
        y = xt::exp(x - row_max);
        const auto row_sum = xt::eval(xt::sum(y, {last}, xt::keep_dims));
        y /= row_sum;
        ++stats_.dispatches;
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

    BackendStats take_stats() override {
        BackendStats s = stats_;
        stats_ = {};
        return s;
    }

private:
    std::vector<std::vector<float>> buffers_;
    BackendStats stats_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace headsplit
