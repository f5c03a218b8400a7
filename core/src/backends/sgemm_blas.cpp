#include "sgemm.hpp"

#include "headsplit/backends/cpu_backend.hpp"

#include <mutex>

#include <xtensor-blas/xblas.hpp>

// OpenBLAS's own thread count (cblas.h has them; xtensor-blas includes its own cblas header).
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
}

namespace headsplit::cpu {

void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc) {
    using cxxblas::Transpose;
    cxxblas::gemm<int>(cxxblas::StorageOrder::RowMajor, trans_a ? Transpose::Trans : Transpose::NoTrans,
                       trans_b ? Transpose::Trans : Transpose::NoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

namespace {

std::mutex scope_mutex;
int scopes = 0;        // OneThreadPerProduct objects alive
int saved_threads = 1; // OpenBLAS's count before the first of them

}  // namespace

OneThreadPerProduct::OneThreadPerProduct() {
    const std::lock_guard<std::mutex> lock(scope_mutex);
    if (scopes++ == 0) {
        saved_threads = openblas_get_num_threads();
        openblas_set_num_threads(1);
    }
}

OneThreadPerProduct::~OneThreadPerProduct() {
    const std::lock_guard<std::mutex> lock(scope_mutex);
    if (--scopes == 0) openblas_set_num_threads(saved_threads);
}

}  // namespace headsplit::cpu

namespace headsplit {

const char* cpu_matmul_library() { return "OpenBLAS"; }

}  // namespace headsplit
