#include "sgemm.hpp"

#include "headsplit/backends/cpu_backend.hpp"


#include <xtensor-blas/xblas.hpp>

// OpenBLAS's own thread count (cblas.h has it; xtensor-blas includes its own cblas header).
extern "C" {
void openblas_set_num_threads(int num_threads);
}

namespace headsplit::cpu {

namespace {

// OpenBLAS runs every product on its calling thread (sgemm_threads.cpp says why), from the
// first product on: set before any other code of HeadSplit's runs.
const bool one_openblas_thread = [] {
    openblas_set_num_threads(1);
    return true;
}();

}  // namespace

void one_thread_sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
                      const float* B, int ldb, float beta, float* C, int ldc) {
    (void)one_openblas_thread;
    using cxxblas::Transpose;
    cxxblas::gemm<int>(cxxblas::StorageOrder::RowMajor, trans_a ? Transpose::Trans : Transpose::NoTrans,
                       trans_b ? Transpose::Trans : Transpose::NoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace headsplit::cpu

namespace headsplit {

const char* cpu_matmul_library() { return "OpenBLAS"; }

}  // namespace headsplit
