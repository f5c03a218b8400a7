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

// The long options for the command line: config_options, or for a checkpoint folder of the
// user's (--weights DIR) that folder (absolute), the text, the layer and the rest.
std::vector<std::pair<std::string, std::string>> command_options(const Config& c);

// command_options as one line for a POSIX shell, each value quoted by shell_word: pasted after
// `headsplit trace`, it runs the same trace and nothing else, whatever the text holds. ""
// when command_options gives none.
std::string shell_options(const Config& c);

// Where the weights came from, in words for a page or a script's header: "random, from seed
// 0"; "the GPT-2 checkpoint in DIR, layer 1 of 2"; "the tiny-trained preset: the GPT-2
// checkpoint shipped with HeadSplit (DIR), layer 0 of 2". Folders are absolute.
std::string weights_source(const Config& c);

}  // namespace headsplit
