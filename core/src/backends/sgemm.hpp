#pragma once
// The CPU backend's one matrix product, C = alpha * op(A) @ op(B) + beta * C, row-major, each
// operand read in place through its leading dimension (op transposes when asked). Two homes
// for the same call: OpenBLAS on the desktop (sgemm_blas.cpp) and Eigen in the browser, where
// Debian has no BLAS for wasm (sgemm_eigen.cpp). With beta = 0, C is written, never read.
namespace headsplit::cpu {

void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc);

}  // namespace headsplit::cpu
