#include "sgemm.hpp"

#include "headsplit/backends/cpu_backend.hpp"

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
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
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

// Products run on the calling thread alone while one of these lives (per thread).
thread_local int one_thread_scopes = 0;

// A second thread for large products, started once when the program starts (the page's main
// thread, before main: a thread started later, from the worker that computes, waits for the
// main thread to hand it a Web Worker, which takes a frame or more while the page loads).
// One caller at a time shares it; another caller meanwhile runs its products alone.
class SecondThread {
public:
    SecondThread() {
        if (std::thread::hardware_concurrency() >= 2) thread_ = std::thread([this] { serve(); });
    }
    ~SecondThread() {
        if (!thread_.joinable()) return;
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }

    // Runs `theirs` on the second thread while the caller runs `mine`, and returns when both
    // are done; false, with nothing run, when there is no second thread or it is taken.
    template <class Mine>
    bool share(const std::function<void()>& theirs, Mine mine) {
        std::unique_lock<std::mutex> caller(taken_, std::try_to_lock);
        if (!caller.owns_lock() || !thread_.joinable()) return false;
        {
            std::lock_guard<std::mutex> lock(m_);
            job_ = &theirs;
        }
        wake_.notify_one();
        mine();  // this file has no exceptions (-fno-exceptions): a failed allocation ends the program
        std::unique_lock<std::mutex> lock(m_);
        done_.wait(lock, [&] { return job_ == nullptr; });
        return true;
    }

private:
    void serve() {
        std::unique_lock<std::mutex> lock(m_);
        for (;;) {
            wake_.wait(lock, [&] { return stop_ || job_ != nullptr; });
            if (stop_) return;
            const std::function<void()>* job = job_;
            lock.unlock();
            (*job)();
            lock.lock();
            job_ = nullptr;
            done_.notify_one();
        }
    }

    std::mutex taken_;  // held by the caller sharing the thread
    std::mutex m_;
    std::condition_variable wake_, done_;
    const std::function<void()>* job_ = nullptr;
    bool stop_ = false;
    std::thread thread_;
};

SecondThread second_thread;

}  // namespace

// A large product is shared by two threads, each computing half of C's columns (Eigen runs
// on one thread without OpenMP, which emscripten lacks; the desktop's OpenBLAS also runs two).
// Waking the second thread costs tens of microseconds: only products of 2^22 multiply-adds or
// more (about a millisecond on one thread) are shared: gpt2-small's projections, not flash's
// tiles nor the teaching sizes.
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc) {
    constexpr double kShared = 1 << 22;
    const auto whole = [&] { product(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); };
    if (one_thread_scopes > 0 || N < 32 || static_cast<double>(M) * N * K < kShared) return whole();
    const int half = (N / 2 + 15) / 16 * 16;  // whole SIMD panels on the first side
    const float* B_right = trans_b ? B + static_cast<std::ptrdiff_t>(half) * ldb : B + half;
    const std::function<void()> right = [&] {
        product(trans_a, trans_b, M, N - half, K, alpha, A, lda, B_right, ldb, beta, C + half, ldc);
    };
    const bool shared = second_thread.share(right, [&] {
        product(trans_a, trans_b, M, half, K, alpha, A, lda, B, ldb, beta, C, ldc);
    });
    if (!shared) whole();
}

OneThreadPerProduct::OneThreadPerProduct() { ++one_thread_scopes; }
OneThreadPerProduct::~OneThreadPerProduct() { --one_thread_scopes; }

}  // namespace headsplit::cpu

namespace headsplit {

const char* cpu_matmul_library() { return "Eigen, WebAssembly SIMD"; }

}  // namespace headsplit
