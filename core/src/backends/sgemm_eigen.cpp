#include "sgemm.hpp"

#include "headsplit/backends/cpu_backend.hpp"

#include <Eigen/Core>

namespace headsplit::cpu {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstView = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using View = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

// op(X) of a rows x cols result: X itself, or the transpose of the cols x rows matrix stored.
template <class F>
void with_op(bool trans, const float* p, int rows, int cols, int ld, F f) {
    if (trans) f(ConstView(p, cols, rows, Eigen::OuterStride<>(ld)).transpose());
    else f(ConstView(p, rows, cols, Eigen::OuterStride<>(ld)));
}

}  // namespace

void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc) {
    View c(C, M, N, Eigen::OuterStride<>(ldc));
    with_op(trans_a, A, M, K, lda, [&](const auto& a) {
        with_op(trans_b, B, K, N, ldb, [&](const auto& b) {
            if (beta == 0.0f) c.noalias() = alpha * (a * b);
            else {
                if (beta != 1.0f) c *= beta;
                c.noalias() += alpha * (a * b);
            }
        });
    });
}

}  // namespace headsplit::cpu

namespace headsplit {

const char* cpu_matmul_library() { return "Eigen, WebAssembly"; }

}  // namespace headsplit
