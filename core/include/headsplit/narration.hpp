#pragma once
// What each step says: its PyTorch line and its one-sentence explanation, keyed by op,
// mode and config (and the head in loop mode). The one place these words live: the engine
// stamps them on each Step, the CLI prints them, the window's code panel lists them.
#include <string>
#include <vector>

#include "headsplit/config.hpp"
#include "headsplit/op.hpp"

namespace headsplit {

struct Narration {
    std::string code;     // the PyTorch-equivalent line ("attn_scores = queries @ keys.transpose(2, 3)")
    std::string explain;  // one sentence with this configuration's numbers
};

// The words for op `op` of configuration `c`; `head` >= 0 for loop mode's per-head steps,
// whose code line is written for any head (`self.heads[h]`), as inside the for loop.
// `round` >= 1: a decoding round (one token, at position decode_from + round - 1); 0: the
// prefill of the first decode_from tokens.
// `tile_q`, `tile_k`: flash mode's tile (query block, key block) for its tile steps.
Narration narrate(Op op, const Config& c, int head = -1, int round = -1, int tile_q = -1, int tile_k = -1);

// The PyTorch module for c.mode up to `def forward(self, x):` (class, __init__, layers).
std::vector<std::string> module_header(const Config& c);
// The forward loop's header in loop mode (the lines of per-head steps are indented below it).
std::string loop_header();
// The last line of forward().
std::string module_return(const Config& c);

}  // namespace headsplit
