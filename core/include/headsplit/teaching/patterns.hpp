#pragma once
// What each head's attention weights look at, read from a run: the patterns a trained
// model's heads are known by (the token before, the first token, itself, the token after an
// earlier copy of this one: an induction head), named where one stands out of the head's rows.
#include <string>
#include <vector>

#include "headsplit/base/tensor.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit {

struct HeadPattern {
    std::string name;   // "the token before", ...; "" where none stands out
    double weight = 0;  // the rows' mean weight on what it names
    double lift = 0;    // that over the mean weight a flat row gives one key (1: chance)
};

// Weights [B, H, T, T] of self-attention (row-major; the first sentence is read) and that
// sentence's tokens: for each head, of the four patterns the one whose mean weight is at
// least 0.25 and twice a flat row's, the highest such lift, where that weight is also 1.5
// times every other pattern's (a clear pattern, not two alike); a head with none, or every
// head where the sentence has under 6 tokens (too few rows to tell a pattern from chance),
// gets "". Rows from the third on; the induction pattern over the rows whose token came
// before, on the key after each earlier copy (as tests/gpt2_checkpoint.py measures them).
std::vector<HeadPattern> head_patterns(const std::vector<float>& weights, const Shape& shape,
                                       const std::vector<std::string>& tokens);

// The same on the trace's attention weights (its softmax step of all heads at once, split
// and fused modes, self-attention before any decoding round, up to 64 tokens: longer runs
// keep their weights unmade until shown); empty where it has none.
std::vector<HeadPattern> head_patterns(const Trace& t);

}  // namespace headsplit
