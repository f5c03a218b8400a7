#pragma once
// The CPU backend's one matrix product, C = alpha * op(A) @ op(B) + beta * C, row-major, each
// operand read in place through its leading dimension (op transposes when asked). Two homes
// for the same call: OpenBLAS on the desktop (sgemm_blas.cpp) and Eigen in the browser, where
// Debian has no BLAS for wasm (sgemm_eigen.cpp). With beta = 0, C is written, never read.
#include <functional>

namespace headsplit::cpu {

// Large products are shared by two threads (sgemm_threads.cpp).
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc);

// The same on the calling thread alone, by the library (sgemm_blas.cpp, sgemm_eigen.cpp).
void one_thread_sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
                      const float* B, int ldb, float beta, float* C, int ldc);

// Runs `theirs` on HeadSplit's second thread (started with the program, so nothing is started
// here) while the caller runs `mine`, and returns when both are done; false, with nothing run,
// when there is no second thread (one core) or another caller has it. sgemm shares a product
// this way; the backend's row passes (the softmax, flash's pieces) share their rows.
bool run_beside(const std::function<void()>& theirs, const std::function<void()>& mine);

// While one lives (in any thread), each product runs on its calling thread alone: for callers
// that share the work between threads of their own (flash's pieces, two threads of small
// products each), where a product's second thread would take a third core.
class OneThreadPerProduct {
public:
    OneThreadPerProduct();
    ~OneThreadPerProduct();
    OneThreadPerProduct(const OneThreadPerProduct&) = delete;
    OneThreadPerProduct& operator=(const OneThreadPerProduct&) = delete;
};

}  // namespace headsplit::cpu
