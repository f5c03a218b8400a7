#pragma once
// `headsplit export`: the configuration as a take-home Python script (PyTorch with
// --python, NumPy only with --numpy) that reruns it and checks itself against the trace.
#include <string>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"

namespace headsplit::app {

struct ExportCommand {
    ConfigOptions config;
    std::string python_path;  // the PyTorch script
    std::string numpy_path;   // the NumPy one

    void add_to(CLI::App& parent);
    int run() const;  // exit code; throws ConfigError / std::runtime_error
};

}  // namespace headsplit::app
