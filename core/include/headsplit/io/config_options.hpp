#pragma once
// A configuration spelled as the command line's long options: the handout's "rerun it" line,
// the page's address.
#include <string>
#include <utility>
#include <vector>

#include "headsplit/engine/config.hpp"

namespace headsplit {

// The long options (name without "--", value; "" for a flag) that make this configuration
// again on the command line or in the page's address, in a fixed order: the shipped model's
// name, text and layer; a large preset's token count; else every size and switch; a preset
// with its own embeddings (journey) by its name and what changed since, other than the words
// and D_in. None when no option spells the inputs: a checkpoint folder's, or a preset's
// embeddings with other words or another D_in.
std::vector<std::pair<std::string, std::string>> config_options(const Config& c);

// config_options as one line for a POSIX shell, each value quoted by shell_word: pasted after
// `headsplit trace`, it runs the same trace and nothing else, whatever the text holds. ""
// when config_options gives none.
std::string shell_options(const Config& c);

}  // namespace headsplit
