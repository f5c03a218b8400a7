#include "sgemm.hpp"

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/base/slices.hpp"

// Eigen 3.4 has no wasm SIMD kernels of its own, but it has SSE ones, and emscripten compiles
// SSE intrinsics to wasm SIMD (this file is built with -msse4.1 -msimd128; 24 against 18
// GFLOP/s for a 128 x 768 x 768 product in Node). Three things stand in the way, all handled
// here and in core/CMakeLists.txt:
//  - <mmintrin.h>, which emscripten lacks: an empty one in web_compat/ (Eigen uses no MMX);
//  - clang says it is GCC 4.2, so Eigen takes an x86 inline-asm path in pmin/pmax meant for
//    old GCC: -fgnuc-version=12 for this file;
//  - from GCC 6 Eigen adds empty asm statements with x86 register constraints to steer
//    register allocation in its kernel, which wasm cannot take: `__asm__` is defined to
//    nothing while Eigen's headers are read (the standard headers Eigen includes are read
//    first, so they keep theirs). Those statements change no value, only register use.
#include <algorithm>
#include <cassert>
#include <climits>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <limits>
#include <new>
#include <type_traits>
#define __asm__(...)
#include <Eigen/Core>
#undef __asm__
#ifndef EIGEN_VECTORIZE_SSE4_1
#error "Eigen's SSE kernels are off: build this file with -msse4.1 -msimd128 (core/CMakeLists.txt)"
#endif

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

// One thread's product: C = alpha op(A) op(B) + beta C.
void product(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
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

}  // namespace

// One thread's product (Eigen runs on one thread without OpenMP, which emscripten lacks);
// sgemm_threads.cpp shares a large one between two. In the single-threaded page a large
// product is computed in blocks, with a slice point between them (base/slices.hpp), so that
// the frames go on while it runs: gpt2-small's QKV projection at T = 1024 is 1.8 GFLOP, a few
// hundred milliseconds. Blocks of C's columns when it is wider than tall (each block packs
// op(A) again, the smaller operand then), else of its rows. Each element of C is the same
// sum as in one call, bit for bit: Eigen's blocking of the inner dimension depends on K
// alone, and blocks of a multiple of 16 rows or columns keep its kernel's panels of rows and
// columns where one call has them (a column left over from a panel is summed in another
// order).
void one_thread_sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
                      const float* B, int ldb, float beta, float* C, int ldc) {
    slice_point();
    // About 2^26 multiply-adds a block (10 to 20 ms in the page), at least 64 rows or columns.
    const int step = std::max(64, static_cast<int>((1 << 26) / (static_cast<double>(std::min(M, N)) * K + 1)) / 16 * 16);
    if (!in_sliced_job() || std::max(M, N) <= 2 * step)
        return product(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (N >= M) {
        for (int c0 = 0; c0 < N; c0 += step) {
            // Column c of op(B): B's column c, or its row c when B is stored transposed.
            const float* b = trans_b ? B + static_cast<std::ptrdiff_t>(c0) * ldb : B + c0;
            product(trans_a, trans_b, M, std::min(N, c0 + step) - c0, K, alpha, A, lda, b, ldb, beta, C + c0, ldc);
            slice_point();
        }
        return;
    }
    for (int r0 = 0; r0 < M; r0 += step) {
        // Row r of op(A): A's row r, or its column r when A is stored transposed.
        const float* a = trans_a ? A + r0 : A + static_cast<std::ptrdiff_t>(r0) * lda;
        product(trans_a, trans_b, std::min(M, r0 + step) - r0, N, K, alpha, a, lda, B, ldb, beta,
                C + static_cast<std::ptrdiff_t>(r0) * ldc, ldc);
        slice_point();
    }
}

}  // namespace headsplit::cpu

namespace headsplit {

const char* cpu_matmul_library() { return "Eigen, WebAssembly SIMD"; }

}  // namespace headsplit
