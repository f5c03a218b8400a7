#pragma once
// The presets of DESIGN.md, read from assets/presets.json (embedded at build time).
#include <string>
#include <vector>

#include "headsplit/config.hpp"

namespace headsplit {

struct Preset {
    std::string name;
    std::string about;                  // one line for --help and the GUI
    std::string text;                   // empty for the synthetic presets
    std::int64_t default_tokens = 0;    // synthetic presets: tokens when --tokens is absent
    std::int64_t d_in = 0, d_out = 0, heads = 0;
    std::int64_t kv_heads = 0;          // grouped-query attention; 0: one per head
    std::int64_t layers = 1;            // the model's attention layers (for whole-model cache figures)
    std::vector<float> embeddings;      // optional fixed x rows
};

const std::vector<Preset>& presets();
std::vector<std::string> preset_names();

// The Config of preset `name`; throws ConfigError listing the names when there is none.
Config config_from_preset(const std::string& name);

}  // namespace headsplit
