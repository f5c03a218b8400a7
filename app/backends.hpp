#pragma once
// Picks the compute backend a Config asks for.
#include <memory>

#include "headsplit/backend.hpp"
#include "headsplit/config.hpp"

namespace headsplit::app {

// Throws ConfigError (one line) when the backend cannot be had on this machine.
std::unique_ptr<Backend> make_backend(BackendKind kind);

}  // namespace headsplit::app
