#pragma once
// The presets (cat-sleeps, journey, the GPT-2 and Llama sizes, gpt3, tiny-trained), read from
// assets/presets.json (embedded at build time).
#include <string>
#include <vector>

#include "headsplit/engine/config.hpp"

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
    std::string weights;                // a shipped checkpoint folder under the data folder
    std::int64_t layer = 0;             // with `weights`: the attention layer shown
};

const std::vector<Preset>& presets();
std::vector<std::string> preset_names();

// The Config of preset `name`; throws ConfigError listing the names when there is none. A
// checkpoint preset (`weights` set) reads its folder: the text tokenized, x run to the layer's
// input (text and layer: the preset's when empty / negative).
Config config_from_preset(const std::string& name, const std::string& text = "", std::int64_t layer = -1);

// The preset called `name`, or null.
const Preset* find_preset(const std::string& name);

// Where a shipped checkpoint folder is: DATA/headsplit/<folder> beside the installed
// executable (<bin>/../share/headsplit), else the source tree's assets/ (a build tree).
// Throws ConfigError naming both places when neither holds <folder>/config.json.
std::string shipped_weights_dir(const std::string& folder);

}  // namespace headsplit
