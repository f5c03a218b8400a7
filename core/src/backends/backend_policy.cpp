#include "headsplit/backends/backend_policy.hpp"

#include "headsplit/backends/cpu_backend.hpp"

namespace headsplit {

const char* backend_name(BackendKind b) {
    return b == BackendKind::Gl ? "gl" : "cpu";
}

const char* matmul_kernel_name(MatmulKernel k) {
    switch (k) {
        case MatmulKernel::Plain: return "plain";
        case MatmulKernel::Blocked: return "blocked";
        case MatmulKernel::Tiled: return "tiled";
        case MatmulKernel::Auto: break;
    }
    return "auto";
}

std::string gl_fallback_notice(const std::string& what, std::ostream* notices) {
    const std::string line = what + "; using the CPU backend";
    if (notices) *notices << "headsplit: " << line << "\n";
    return line;
}

BackendChoice choose_backend(const BackendRequest& request) {
    BackendChoice c;
    if (request.kind == BackendKind::Gl) {
        if (request.existing) {
            c.backend = request.existing;
            c.kind = BackendKind::Gl;
            return c;
        }
        if (request.may_create_context) {
            try {
                c.owned = make_gl_backend(request.gl);
                c.backend = c.owned.get();
                c.kind = BackendKind::Gl;
                return c;
            } catch (const GlError& e) {
                c.notice = gl_fallback_notice(e.what(), request.notices);
            }
        } else {
            c.notice = gl_fallback_notice(request.no_context_why, request.notices);
        }
    }
    c.owned = make_cpu_backend();
    c.backend = c.owned.get();
    c.kind = BackendKind::Cpu;
    return c;
}

}  // namespace headsplit
