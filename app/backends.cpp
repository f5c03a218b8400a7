#include "backends.hpp"

#include "headsplit/cpu_backend.hpp"

namespace headsplit::app {

std::unique_ptr<Backend> make_backend(BackendKind kind) {
    if (kind == BackendKind::Gl)
        throw ConfigError("--backend gl is not available in this build yet; use --backend cpu");
    return make_cpu_backend();
}

}  // namespace headsplit::app
