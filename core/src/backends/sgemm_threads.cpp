#include "sgemm.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "headsplit/base/threads.hpp"

// sgemm over one_thread_sgemm (the library's product on the calling thread): a large product
// is shared by two threads of HeadSplit's own. On the desktop OpenBLAS could thread it
// itself, but its idle threads spin (sched_yield) for a while after each product, and the
// threads that flash and the softmax start then share two cores with them, slower than with
// the spin cut short (docs/benchmarks.md, the figures behind the code). So OpenBLAS runs on
// the calling thread only (sgemm_blas.cpp), as Eigen always does in the page.
namespace headsplit::cpu {

namespace {

// OneThreadPerProduct objects alive, in any thread.
std::atomic<int> one_thread_scopes{0};

// A second thread for large products, started once when the program starts (the page's main
// thread, before main: a thread started later, from the worker that computes, waits for the
// main thread to hand it a Web Worker, which takes a frame or more while the page loads).
// One caller at a time shares it; another caller meanwhile runs its products alone.
class SecondThread {
public:
    SecondThread() {
        if (kHaveThreads && std::thread::hardware_concurrency() >= 2) thread_ = std::thread([this] { serve(); });
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
    // are done; false, with nothing run, when there is no second thread or it is taken (by
    // another caller, or by this one: a share inside `mine`). Either side's exception reaches
    // the caller once both are done (`theirs` reads the caller's stack until then).
    template <class Mine>
    bool share(const std::function<void()>& theirs, Mine mine) {
        if (sharing_) return false;
        std::unique_lock<std::mutex> caller(taken_, std::try_to_lock);
        if (!caller.owns_lock() || !thread_.joinable()) return false;
        sharing_ = true;
        {
            std::lock_guard<std::mutex> lock(m_);
            job_ = &theirs;
            failed_ = nullptr;
        }
        wake_.notify_one();
        std::exception_ptr mine_failed;
        try {
            mine();
        } catch (...) {
            mine_failed = std::current_exception();
        }
        std::unique_lock<std::mutex> lock(m_);
        done_.wait(lock, [&] { return job_ == nullptr; });
        const std::exception_ptr theirs_failed = failed_;
        lock.unlock();
        sharing_ = false;
        if (mine_failed) std::rethrow_exception(mine_failed);
        if (theirs_failed) std::rethrow_exception(theirs_failed);
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
            std::exception_ptr failed;
            try {
                (*job)();
            } catch (...) {
                failed = std::current_exception();
            }
            lock.lock();
            failed_ = failed;
            job_ = nullptr;
            done_.notify_one();
        }
    }

    std::mutex taken_;  // held by the caller sharing the thread
    std::mutex m_;
    std::condition_variable wake_, done_;
    const std::function<void()>* job_ = nullptr;
    std::exception_ptr failed_;  // what the job threw
    bool stop_ = false;
    static thread_local bool sharing_;  // this thread is inside share()
    std::thread thread_;
};

thread_local bool SecondThread::sharing_ = false;
SecondThread second_thread;


}  // namespace

// Each thread computes half of C's columns. Waking the second thread costs more than a small
// product takes: only products of 2^22 multiply-adds or more are shared: gpt2-small's
// projections and a head's scores from T = 256, not flash's pieces nor the teaching sizes.
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc) {
    constexpr double kShared = 1 << 22;
    const auto whole = [&] { one_thread_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); };
    if (one_thread_scopes.load() > 0 || N < 32 || static_cast<double>(M) * N * K < kShared) return whole();
    const int half = (N / 2 + 15) / 16 * 16;  // whole SIMD panels on the first side
    const float* B_right = trans_b ? B + static_cast<std::ptrdiff_t>(half) * ldb : B + half;
    const std::function<void()> right = [&] {
        one_thread_sgemm(trans_a, trans_b, M, N - half, K, alpha, A, lda, B_right, ldb, beta, C + half, ldc);
    };
    const bool shared = second_thread.share(right, [&] {
        one_thread_sgemm(trans_a, trans_b, M, half, K, alpha, A, lda, B, ldb, beta, C, ldc);
    });
    if (!shared) whole();
}

bool run_beside(const std::function<void()>& theirs, const std::function<void()>& mine) {
    return second_thread.share(theirs, mine);
}

OneThreadPerProduct::OneThreadPerProduct() { ++one_thread_scopes; }
OneThreadPerProduct::~OneThreadPerProduct() { --one_thread_scopes; }

}  // namespace headsplit::cpu
