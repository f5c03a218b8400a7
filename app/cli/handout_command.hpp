#pragma once
// `headsplit handout --out DIR`: the lesson as pictures and a page, drawn offscreen through
// EGL (no display needed): DIR/step-NN.png and DIR/index.html (see gui/handout.hpp).
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"

namespace headsplit::app {

// The most pictures a handout draws unless --max-pictures asks for more: a flash trace of
// many tiles has thousands of steps, a picture each, and took many minutes with no word.
inline constexpr std::int64_t kDefaultMaxPictures = 300;

struct HandoutCommand {
    ConfigOptions config;
    std::string out_dir;
    std::string max_pictures;  // --max-pictures N; "" for kDefaultMaxPictures

    void add_to(CLI::App& parent);
    int run() const;  // exit code; throws ConfigError / std::runtime_error
};

}  // namespace headsplit::app
