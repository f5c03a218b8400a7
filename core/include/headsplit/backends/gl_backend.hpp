#pragma once
// The GL backend: matmuls and attention kernels as OpenGL 4.3 compute shaders
// (shaders/*.comp, compiled into the binary). It works in the GL context current on the
// calling thread (the visualizer's window) or, headless, makes its own with EGL on Mesa's
// surfaceless platform, so it needs no display.
#include <memory>
#include <stdexcept>
#include <string>

#include "headsplit/backends/backend.hpp"

namespace headsplit {

enum class MatmulKernel {
    Plain,    // matmul_plain.comp: one output per invocation
    // A 4 x 4 register block per invocation (Auto's choice on llvmpipe): matmul_rowdot.comp (vec4 loads)
    // when both operands are contiguous along K with vec4-aligned rows, as in x @ W^T and
    // Q @ K^T; matmul_blocked.comp otherwise. (A shared-memory tiled kernel was measured
    // at 0.37 GFLOP/s against plain's 1.01 on llvmpipe at 512 x 768 x 2304, and dropped.)
    Blocked,
    // matmul_tiled.comp: 128 x 128 tiles of C per workgroup through shared memory, 8 x 8
    // outputs per invocation; for GPUs (on llvmpipe its barriers make it slower).
    Tiled,
    // Tiled where the renderer is a GPU, Blocked where it is software (llvmpipe, softpipe,
    // SwiftShader): resolved when the backend starts.
    Auto,
};
const char* matmul_kernel_name(MatmulKernel k);  // "plain" | "blocked" | "tiled" | "auto"

// Why the GL backend could not start or run; what() is one line.
class GlError : public std::runtime_error {
public:
    enum class Kind {
        NoContext,  // no GL 4.3 context can be had here
        Shader,     // a kernel failed to compile or link
        Runtime,    // a GL error or limit during a step
    };
    GlError(Kind kind, const std::string& message) : std::runtime_error(message), kind(kind) {}
    Kind kind;
};

// Faults a test injects to prove the failure paths; none by default.
struct GlFaults {
    std::string break_shader;   // this shader ("attn_rows.comp", ...) fails to compile
    std::string fail_dispatch;  // this kernel's dispatch ("softmax", "matmul", "copy", ...)
                                // raises a real GL error during a step
    bool vec4_probe = false;    // the tiled kernel's vec4 copy (tiled_vec4) loads zeros
};
// The faults every GL backend made without GlOptions::faults injects: none, unless the
// executable's entry set them at start (from its tests' environment) before any backend.
void set_process_gl_faults(const GlFaults& faults);

struct GlOptions {
    MatmulKernel kernel = MatmulKernel::Auto;
    // true: create a headless EGL context and make it current while the backend works;
    // false: use the context current on this thread (it must be GL 4.3 or newer).
    bool own_context = true;
    // The tiled kernel copies whole slices with vec4 loads where the operands allow
    // (matmul_tiled.comp built with TILED_VEC4). Off until it is timed on a GPU: `headsplit
    // kernels` times it beside the default ("gl tiled vec4").
    bool tiled_vec4 = false;
    // The faults to inject, read when a shader compiles and at each dispatch, so a test may
    // change them while the backend lives (it must outlive the backend); null: the process's
    // (set_process_gl_faults) as they are when the backend starts.
    const GlFaults* faults = nullptr;
};

// Throws GlError.
std::unique_ptr<Backend> make_gl_backend(const GlOptions& options = {});

// The GL_RENDERER and GL_VERSION of the context current on this thread (one must be), and
// the kernel that MatmulKernel::Auto picks there.
std::string gl_renderer();
MatmulKernel resolved_kernel(MatmulKernel kernel);
// Whether that renderer runs the kernels on the CPU (llvmpipe, softpipe, SwiftShader).
bool software_renderer();

}  // namespace headsplit
