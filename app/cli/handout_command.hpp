#pragma once
// `headsplit handout --out DIR`: the lesson as pictures and a page, drawn offscreen through
// EGL (no display needed): DIR/step-NN.png and DIR/index.html (see gui/handout.hpp).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"

namespace headsplit::app {

struct HandoutCommand {
    ConfigOptions config;
    std::string out_dir;
    std::string max_pictures;  // --max-pictures N; "" for gui::kHandoutPictures

    void add_to(CLI::App& parent);
    int run() const;  // exit code; throws ConfigError / std::runtime_error
};

}  // namespace headsplit::app
