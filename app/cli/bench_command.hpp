#pragma once
// `headsplit bench`: loop, split, fused and flash side by side, projections and whole forward,
// with and without the trace, on the CPU and GL backends; ratios; JSON; PyTorch alongside.
#include <string>

#include <CLI/CLI.hpp>

namespace headsplit::app {

struct BenchCommand {
    std::string preset, tokens, backend = "all", repeat = "5", json_path, dropout, kv_heads, modes = "loop,split,fused,flash",
                block;
    bool vs_torch = false;
    bool backward = false;

    void add_to(CLI::App& parent);
    int run() const;
};

}  // namespace headsplit::app
