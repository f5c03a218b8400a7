#pragma once
// What each step says: its PyTorch line and its one-sentence explanation, keyed by op,
// mode and config (and the head in loop mode). The one place these words live: the engine
// records the facts and leaves the words empty; narrate(Trace&) writes them after run() or
// plan(), and the CLI, the JSON, the handout and the window read them from the trace.
#include <cstddef>
#include <string>
#include <vector>

#include "headsplit/engine/config.hpp"
#include "headsplit/base/op.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit {

struct Narration {
    std::string code;     // the PyTorch-equivalent line ("attn_scores = queries @ keys.transpose(2, 3)")
    std::string explain;  // one sentence with this configuration's numbers
};

// The words for step `s` of configuration `c`, from its op, head, round, tile, rows and keys
// (the engine sets those before asking). A loop-mode head's code line is written for any
// head (`self.heads[h]`), as inside the for loop.
Narration narrate(const Step& s, const Config& c);

// Writes every step's code and explanation (Step::code, Step::explain) from its facts and
// the trace's config. Every trace shown or exported to people goes through it once.
void narrate(Trace& trace);

// The heap bytes the words narrate() writes into step `s` of `c` take (Trace::record_bytes'
// count of them): what check_config() is given to count them before the run (StepWordsBytes).
std::size_t narration_bytes(const Step& s, const Config& c);

// A tensor's shape with each size named by its axis, for a class that must tell equal sizes
// apart: "[1, 2 heads, 3 tokens, 3 keys]" (the batch a plain number, a score grid's columns
// its keys, the rows of keys and values tokens, "1 head" for one).
std::string named_shape(const TensorRecord& t);
// An axis's name in those words, plural: "heads", "kv heads", "tokens", "keys", "features";
// "" for the batch.
std::string axis_words(Axis a);

// On the first step whose tensor (Step::lead) has two axes of one size that no step before it
// showed at that size ("3 tokens" and "3 features"), a line saying so; "" on every other step.
std::string size_collision(const Trace& tr, int step);

// The PyTorch module for c.mode up to `def forward(self, x):` (class, __init__, layers).
std::vector<std::string> module_header(const Config& c);
// The forward loop's header in loop mode (the lines of per-head steps are indented below it).
std::string loop_header();
// The last line of forward().
std::string module_return(const Config& c);

}  // namespace headsplit
