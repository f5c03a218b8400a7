#pragma once
// Where a cell's value came from, in words and with the actual numbers: the inspector's
// text, worked out from the trace alone (no window), so it can be tested.
#include <cmath>
#include <string>
#include <vector>

#include "headsplit/engine/trace.hpp"

namespace headsplit::gui {

struct Explanation {
    std::string title;               // "attn_scores[0][1][2][0]"
    std::vector<std::string> lines;  // the derivation, one line each
    double recomputed = NAN;         // the value the derivation arrives at (NaN: none)
};

// The cell `index` (row-major) of tensor `tensor` of step `step`.
Explanation explain_cell(const Trace& tr, int step, int tensor, std::int64_t index);

}  // namespace headsplit::gui
