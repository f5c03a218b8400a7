#pragma once
// Long work in the single-threaded page, computed in slices between its frames.
//
// That page (emscripten without -pthread, threads.hpp) has one thread, the one that draws. A
// job too long for a frame runs there as a SlicedJob: the frame loop resumes it for a slice of
// time when it draws no frame, and the job goes back to the frame loop at its next slice
// point once its slice is spent. Its stack is kept meanwhile (an emscripten fiber, which
// needs the page linked with -sASYNCIFY: app/CMakeLists.txt). Every other build computes such
// work on a thread, and there slice_point() does nothing.
//
// Slice points sit between pieces of work that take a few milliseconds (the CPU backend's row
// blocks and ops), never inside a piece, so a job's numbers are those of one uninterrupted run.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define HEADSPLIT_SLICED_WORK 1
#else
#define HEADSPLIT_SLICED_WORK 0
#endif

namespace headsplit {

constexpr bool kSlicedWork = HEADSPLIT_SLICED_WORK != 0;

#if HEADSPLIT_SLICED_WORK
// Inside a resumed SlicedJob whose slice is spent: back to the frame loop, and on from here
// when the job is resumed. Anywhere else: returns at once.
void slice_point();
// Whether slice points pause here: a sliced job is being resumed.
bool in_sliced_job();
// On: every slice point of a resumed job pauses, its slice spent or not (the page's
// ?slices=every, for tests: a frame on the stack the page's build cannot pause in fails
// there every time, not only when a slice happens to end inside it).
void pause_at_every_slice_point(bool on);
#else
inline void slice_point() {}
inline bool in_sliced_job() { return false; }
inline void pause_at_every_slice_point(bool) {}
#endif

// A large tensor's pages come into memory as it is first written, which on some machines
// costs more than the arithmetic on it (in the browser, 4 MiB of fresh memory in 50 ms where
// new pages are slow to map): inside a sliced job this appends `n` floats from `first` to
// `out` in blocks of 2^18 (1 MiB), a slice point after each; elsewhere it is vector::insert.
constexpr std::size_t kSliceFloats = std::size_t{1} << 18;
inline void append_in_slices(std::vector<float>& out, const float* first, std::size_t n) {
    if (!in_sliced_job()) return static_cast<void>(out.insert(out.end(), first, first + n));
    out.reserve(out.size() + n);
    for (std::size_t done = 0; done < n; done += kSliceFloats) {
        out.insert(out.end(), first + done, first + std::min(n, done + kSliceFloats));
        slice_point();
    }
}

// The same for a buffer of `n` zeros: `out` holds exactly them after the call.
inline void zeros_in_slices(std::vector<float>& out, std::size_t n) {
    if (!in_sliced_job()) return out.assign(n, 0.0f);
    out.clear();
    out.reserve(n);
    for (std::size_t done = 0; done < n; done += kSliceFloats) {
        out.resize(std::min(n, done + kSliceFloats), 0.0f);
        slice_point();
    }
}

// One piece of long work and its own stack. Only the single-threaded page makes them.
class SlicedJob {
public:
    explicit SlicedJob(std::function<void()> work);
    ~SlicedJob();  // an unfinished job is finished first (its stack holds objects to destroy)
    SlicedJob(const SlicedJob&) = delete;
    SlicedJob& operator=(const SlicedJob&) = delete;

    // Runs the work until it ends (true) or `seconds` are spent and it reaches a slice point
    // (false). A job resumed from inside another job runs to its end.
    bool resume(double seconds);
    bool done() const;
    // What the work threw (null when nothing).
    std::exception_ptr error() const;

    struct State;

private:
    std::unique_ptr<State> s_;
};

// Resumes each unfinished SlicedJob in turn, for `seconds` in all: the frame loop's call on
// the ticks where it draws no frame. Does nothing where there are no sliced jobs.
#if HEADSPLIT_SLICED_WORK
void run_sliced_jobs(double seconds);
#else
inline void run_sliced_jobs(double) {}
#endif

}  // namespace headsplit
