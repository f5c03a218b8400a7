#pragma once
// The CPU backend's one matrix product, C = alpha * op(A) @ op(B) + beta * C, row-major, each
// operand read in place through its leading dimension (op transposes when asked). Two homes
// for the same call: OpenBLAS on the desktop (sgemm_blas.cpp) and Eigen in the browser, where
// Debian has no BLAS for wasm (sgemm_eigen.cpp). With beta = 0, C is written, never read.
namespace headsplit::cpu {

void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc);

// While one lives, each product runs on its calling thread alone: for callers that share the
// work between threads of their own (flash's tiles, two threads of small products each), where
// the library's own threads would fight theirs. Scopes may overlap across threads: the library's
// thread count comes back when the last one ends. In the page (Eigen), the scope is the
// calling thread's: its products stay on it rather than taking a second thread.
class OneThreadPerProduct {
public:
    OneThreadPerProduct();
    ~OneThreadPerProduct();
    OneThreadPerProduct(const OneThreadPerProduct&) = delete;
    OneThreadPerProduct& operator=(const OneThreadPerProduct&) = delete;
};

}  // namespace headsplit::cpu
