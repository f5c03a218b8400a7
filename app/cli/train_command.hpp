#pragma once
// `headsplit train`: a tiny model of this attention trained on a task on the command line,
// with a progress bar, a line per logged step and a JSON log of the loss and every head's
// score.
#include <string>

#include <CLI/CLI.hpp>

namespace headsplit::app {

struct TrainCommand {
    std::string task = "induction", steps, seed = "1", lr, batch, layers, heads, d_model, mode = "split",
                backend = "cpu", scale = "sqrt", compare, log_every = "10", json;
    bool identical_heads = false;

    void add_to(CLI::App& parent);
    int run() const;
};

}  // namespace headsplit::app
