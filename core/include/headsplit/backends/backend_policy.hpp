#pragma once
// The one policy for which backend runs and what happens when OpenGL fails: the CPU takes
// over, and one notice line says why ("<reason>; using the CPU backend"). `headsplit trace`,
// `bench`, `kernels`, the window and the why job all go through here.
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "headsplit/backends/backend.hpp"
#include "headsplit/backends/gl_backend.hpp"

namespace headsplit {

struct BackendRequest {
    BackendKind kind = BackendKind::Cpu;
    GlOptions gl;                 // kernel, and whether to make a headless context
    Backend* existing = nullptr;  // GL already made on this thread (the window's); used instead
    // false: this thread must not make a GL context (the window's UI thread: a headless
    // context made current there would take the window's away). GL is then `existing` or none.
    bool may_create_context = true;
    // Why GL cannot be had when there is no `existing` and none may be made.
    std::string no_context_why = "no OpenGL 4.3 context on this thread";
    // Where the notice line goes as well (stderr for the command line); may be null.
    std::ostream* notices = nullptr;
};

// A backend as the policy gave it: what actually runs, and why it is not what was asked for.
struct BackendChoice {
    std::unique_ptr<Backend> owned;  // null when `backend` is the request's `existing`
    Backend* backend = nullptr;
    BackendKind kind = BackendKind::Cpu;
    std::string notice;  // "" when the request was met

    bool fell_back(BackendKind wanted) const { return kind != wanted; }
};

// The backend `request` asks for; when GL cannot be had, the CPU backend with the notice.
BackendChoice choose_backend(const BackendRequest& request);

// The notice for a GL failure (what() plus "; using the CPU backend"), also written to
// `notices` when given.
std::string gl_fallback_notice(const std::string& what, std::ostream* notices);

// Runs `work` on the chosen backend; when GL fails during it, the CPU runs `work` again from
// the start and `notice` says why. `work` gets the backend and the kind it is.
template <class Result>
Result run_with_fallback(const BackendRequest& request, const std::function<Result(Backend&, BackendKind)>& work,
                         std::string* notice) {
    BackendChoice choice = choose_backend(request);
    if (notice) *notice = choice.notice;
    if (choice.kind == BackendKind::Gl) {
        try {
            return work(*choice.backend, BackendKind::Gl);
        } catch (const GlError& e) {
            const std::string why = gl_fallback_notice(e.what(), request.notices);
            if (notice) *notice = why;
        }
    }
    BackendRequest cpu = request;
    cpu.kind = BackendKind::Cpu;
    BackendChoice fallback = choose_backend(cpu);
    return work(*fallback.backend, BackendKind::Cpu);
}

}  // namespace headsplit
