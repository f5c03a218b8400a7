#include "sgemm.hpp"

#include "headsplit/backends/cpu_backend.hpp"

#include <xtensor-blas/xblas.hpp>

namespace headsplit::cpu {

void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc) {
    using cxxblas::Transpose;
    cxxblas::gemm<int>(cxxblas::StorageOrder::RowMajor, trans_a ? Transpose::Trans : Transpose::NoTrans,
                       trans_b ? Transpose::Trans : Transpose::NoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace headsplit::cpu

namespace headsplit {

const char* cpu_matmul_library() { return "OpenBLAS"; }

}  // namespace headsplit
