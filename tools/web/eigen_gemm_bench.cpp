// Eigen's single-precision product in WebAssembly, plain (scalar kernels) against SSE through
// emscripten's SSE-to-wasm-SIMD headers, as core/src/backends/sgemm_eigen.cpp builds it: the
// page's products at gpt2-small's shapes (128 x 768 x 768, and a 128-cube), best of 20, in Node.
// A benchmark for docs/benchmarks.md's figures, not a test. From the source tree, after make web:
//
//   for v in plain sse; do
//     f=$([ $v = sse ] && echo "-DWITH_SSE -msse4.1 -fgnuc-version=12 -Icore/src/backends/web_compat")
//     NODE_PATH=/usr/share/nodejs em++ -O3 -msimd128 $f -I/usr/include/eigen3 \
//       tools/web/eigen_gemm_bench.cpp -o /tmp/eigen_$v.js && node --no-experimental-fetch /tmp/eigen_$v.js
//   done
#include <algorithm>
#include <chrono>
#include <cstdio>
#ifdef WITH_SSE
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
#include <atomic>
#define __asm__(...)  // as in sgemm_eigen.cpp: Eigen's register-allocation hints are x86 asm
#endif
#include <Eigen/Core>
#ifdef WITH_SSE
#undef __asm__
#endif

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

int main() {
    std::printf("Eigen's SIMD: %s\n", Eigen::SimdInstructionSetsInUse());
    const int rows = 128;
    for (int n : {128, 768}) {
        const Matrix a = Matrix::Random(rows, n), b = Matrix::Random(n, n);
        Matrix c(rows, n);
        double best = 1e9;
        for (int r = 0; r < 20; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            c.noalias() = a * b;
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::printf("%d x %d x %d: %.2f ms, %.1f GFLOP/s (c[0,0] = %.6f)\n", rows, n, n, best * 1e3,
                    2.0 * rows * n * n / best / 1e9, c(0, 0));
    }
}
