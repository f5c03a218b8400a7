#pragma once
// Whether this build has threads: every build but the page's single-threaded one (emscripten
// without -pthread, for pages that browsers give no shared memory), where the work meant for
// a thread is deferred and runs in the frame that takes its result, or, through OffFrame, in
// slices between frames (slices.hpp).
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <utility>

#include "headsplit/base/slices.hpp"

namespace headsplit {

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
constexpr bool kHaveThreads = false;
#else
constexpr bool kHaveThreads = true;
#endif

// std::async's launch for work off the frame: a thread of its own, or, without threads,
// deferred (the get() that takes the result computes it).
constexpr std::launch kOffFrame = kHaveThreads ? std::launch::async : std::launch::deferred;

// Whether `f`'s result can be taken now without waiting on another thread: it is finished,
// or it is deferred (get() computes it here).
template <class T>
bool ready_to_take(const std::future<T>& f) {
    const std::future_status s = f.wait_for(std::chrono::seconds(0));
    return s == std::future_status::ready || s == std::future_status::deferred;
}

// Work off the frame whose result a frame takes when it is ready: on a thread of its own, or,
// without threads, as a SlicedJob that the frame loop resumes between frames (the frames go
// on while it computes; slices.hpp).
template <class T>
class OffFrame {
public:
    OffFrame() = default;
    template <class F>
    explicit OffFrame(F work) {
        if constexpr (kHaveThreads) {
            future_ = std::async(std::launch::async, std::move(work));
        } else {
            auto result = std::make_shared<std::optional<T>>();
            result_ = result;
            job_ = std::make_unique<SlicedJob>([result, work = std::move(work)]() mutable { result->emplace(work()); });
        }
    }

    // Started and its result not yet taken.
    bool valid() const { return kHaveThreads ? future_.valid() : job_ != nullptr; }
    // get() returns without waiting.
    bool ready() const {
        if constexpr (kHaveThreads) return future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        else return job_ && job_->done();
    }
    // The result (or what the work threw), once: waits for it, or computes the rest of it here.
    T get() {
        if constexpr (kHaveThreads) {
            return future_.get();
        } else {
            job_->resume(1e30);
            const std::exception_ptr error = job_->error();
            job_.reset();
            if (error) std::rethrow_exception(error);
            T out = std::move(**result_);
            result_.reset();
            return out;
        }
    }
    void wait() {
        if constexpr (kHaveThreads) future_.wait();
        else if (job_) job_->resume(1e30);
    }

private:
    std::future<T> future_;
    std::unique_ptr<SlicedJob> job_;
    std::shared_ptr<std::optional<T>> result_;
};

}  // namespace headsplit
