#pragma once
// `headsplit trace`: one forward pass, headless; prints the step table, optionally one
// step's values, and writes the trace JSON.
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "headsplit/engine/trace.hpp"
#include "cli/options.hpp"

namespace headsplit::app {

struct TraceCommand {
    ConfigOptions config;
    std::string json_path;
    std::string step;  // print this step's values

    void add_to(CLI::App& parent);
    int run() const;  // exit code; throws ConfigError / std::runtime_error
};

// One recorded forward pass of a checked configuration on its backend (the CPU when GL
// fails, with a notice on stderr), on the checkpoint's weights when it names one, and
// narrated: what trace, export and handout show. The trace names the backend it ran on.
Trace run_traced(const CheckedConfig& c);

// The step table: step, op, tensors, shape, memory, matmuls, ms.
void print_step_table(const Trace& trace, std::ostream& out);
// One step in full: code, explanation, and each tensor's values as nested grids.
void print_step_values(const Step& step, std::ostream& out);

}  // namespace headsplit::app
