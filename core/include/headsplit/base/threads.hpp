#pragma once
// Whether this build has threads: every build but the page's single-threaded one (emscripten
// without -pthread, for pages that browsers give no shared memory), where the work meant for
// a thread is deferred and runs in the frame that takes its result.
#include <chrono>
#include <future>

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

}  // namespace headsplit
