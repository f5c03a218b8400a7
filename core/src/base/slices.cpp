#include "headsplit/base/slices.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#if HEADSPLIT_SLICED_WORK
#include <emscripten.h>
#include <emscripten/fiber.h>
#endif

namespace headsplit {

#if HEADSPLIT_SLICED_WORK

namespace {

// The job's own C stack: the engine's frames from the job's start to its deepest slice point,
// with room to spare (wasm has no guard page). Asyncify's stacks hold the locals of the
// functions between a fiber's start and its swap, a few kilobytes.
constexpr std::size_t kCStack = 4 << 20;
constexpr std::size_t kAsyncifyStack = 256 << 10;

}  // namespace

struct SlicedJob::State {
    std::function<void()> work;
    std::exception_ptr error;
    bool done = false;
    double deadline_ms = 0;
    emscripten_fiber_t fiber{}, caller{};
    void* c_stack = nullptr;
    void* fiber_asyncify = nullptr;
    void* caller_asyncify = nullptr;
};

namespace {

SlicedJob::State* running = nullptr;   // the job being resumed, if any
std::vector<SlicedJob*> unfinished;    // every job not yet done, oldest first
bool every_point = false;              // pause_at_every_slice_point

void job_main(void* arg) {
    auto* s = static_cast<SlicedJob::State*>(arg);
    try {
        s->work();
    } catch (...) {
        s->error = std::current_exception();
    }
    s->done = true;
    // A fiber must never return: back to the caller, for good.
    emscripten_fiber_swap(&s->fiber, &s->caller);
}

}  // namespace

void slice_point() {
    SlicedJob::State* s = running;
    if (!s || s->deadline_ms > 1e299 || (!every_point && emscripten_get_now() < s->deadline_ms)) return;
    emscripten_fiber_swap(&s->fiber, &s->caller);
}

bool in_sliced_job() { return running != nullptr; }

void pause_at_every_slice_point(bool on) { every_point = on; }

SlicedJob::SlicedJob(std::function<void()> work) : s_(std::make_unique<State>()) {
    s_->work = std::move(work);
    s_->c_stack = std::aligned_alloc(16, kCStack);
    s_->fiber_asyncify = std::malloc(kAsyncifyStack);
    s_->caller_asyncify = std::malloc(kAsyncifyStack);
    if (!s_->c_stack || !s_->fiber_asyncify || !s_->caller_asyncify) {
        std::free(s_->c_stack), std::free(s_->fiber_asyncify), std::free(s_->caller_asyncify);
        throw std::bad_alloc();
    }
    emscripten_fiber_init(&s_->fiber, job_main, s_.get(), s_->c_stack, kCStack, s_->fiber_asyncify, kAsyncifyStack);
    unfinished.push_back(this);
}

SlicedJob::~SlicedJob() {
    resume(1e300);  // to its end: a deadline past 1e299 ms never pauses
    std::free(s_->c_stack), std::free(s_->fiber_asyncify), std::free(s_->caller_asyncify);
}

bool SlicedJob::resume(double seconds) {
    State& s = *s_;
    if (s.done) return true;
    // Inside another job, this one runs to its end: its slice points do not pause.
    State* outer = running;
    s.deadline_ms = outer || seconds >= 1e299 ? 1e300 : emscripten_get_now() + seconds * 1e3;
    running = &s;
    emscripten_fiber_init_from_current_context(&s.caller, s.caller_asyncify, kAsyncifyStack);
    emscripten_fiber_swap(&s.caller, &s.fiber);
    running = outer;
    if (s.done) unfinished.erase(std::remove(unfinished.begin(), unfinished.end(), this), unfinished.end());
    return s.done;
}

void run_sliced_jobs(double seconds) {
    if (running) return;
    const double end = emscripten_get_now() + seconds * 1e3;
    const std::vector<SlicedJob*> jobs = unfinished;
    for (SlicedJob* job : jobs) {
        const double left = (end - emscripten_get_now()) / 1e3;
        if (left <= 0) break;
        job->resume(left);
    }
}

#else

// Without slicing (a build with threads; no one makes sliced jobs there): the work runs
// whole when first resumed.
struct SlicedJob::State {
    std::function<void()> work;
    std::exception_ptr error;
    bool done = false;
};

SlicedJob::SlicedJob(std::function<void()> work) : s_(std::make_unique<State>()) { s_->work = std::move(work); }

SlicedJob::~SlicedJob() { resume(0); }

bool SlicedJob::resume(double) {
    if (s_->done) return true;
    try {
        s_->work();
    } catch (...) {
        s_->error = std::current_exception();
    }
    s_->done = true;
    return true;
}

#endif

bool SlicedJob::done() const { return s_->done; }

std::exception_ptr SlicedJob::error() const { return s_->error; }

}  // namespace headsplit
