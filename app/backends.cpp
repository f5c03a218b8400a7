#include "backends.hpp"

#include "headsplit/cpu_backend.hpp"
#include "headsplit/engine.hpp"
#include "headsplit/gl_backend.hpp"

namespace headsplit::app {

std::unique_ptr<Backend> make_backend(BackendKind kind) {
    if (kind == BackendKind::Cpu) return make_cpu_backend();
    try {
        return make_gl_backend();
    } catch (const GlError& e) {
        if (e.kind == GlError::Kind::NoContext) throw ConfigError(std::string("--backend gl: ") + e.what());
        throw;
    }
}

Trace run_on_backend(const Config& c, std::ostream& notices) {
    const Inputs inputs = make_inputs(c);
    const Weights weights = make_weights(c);
    if (c.backend == BackendKind::Gl) {
        try {
            auto backend = make_backend(BackendKind::Gl);
            return run(c, inputs, weights, *backend);
        } catch (const GlError& e) {
            notices << "headsplit: " << e.what() << "; using the CPU backend\n";
        }
    }
    Config on_cpu = c;
    on_cpu.backend = BackendKind::Cpu;
    auto backend = make_cpu_backend();
    return run(on_cpu, inputs, weights, *backend);
}

}  // namespace headsplit::app
