#pragma once
// The heatmaps panel's maps, chosen from the trace: which grid steps a step shows, one map per
// head and sentence, their value ranges; shared by panel_heatmaps.cpp (which draws them) and
// heatmaps_maps.cpp (which finds them).
#include <cstdint>
#include <vector>

#include "gui/model/state.hpp"
#include "gui/view/layout.hpp"

namespace headsplit::gui::heat {

// The grid steps to show: the current one if it is one, else every head's final weights
// (when decoding, those of the step's round; the prefill's outside the rounds).
std::vector<const Step*> grids_for(const Trace& tr, int step);

// Each map: [rows, keys] for one head of one sentence. Batched steps hold all heads, loop
// steps one each; `block` counts maps of rows x keys into the tensor's data.
struct Map {
    const Step* step;
    const TensorRecord* t;
    int head;
    std::int64_t block;
    bool mine;          // from the trace on screen (hover and click work on it)
    std::string title;  // "head 1", or with the mask it ran under in the comparison
};

std::vector<Map> maps_of(const std::vector<const Step*>& grids, bool mine, std::int64_t sentence);

// The grids of `other` (the same configuration, mask flipped) that match what `tr` shows at
// `step`: the same op of the same head, or, for the mask step that the other trace has not,
// the last grid of that head before it (what the scores are without a mask).
std::vector<const Step*> matching_grids(const Trace& tr, int step, const Trace& other);

// The value range of each rows x keys block of map m's tensor (the blocks maps_of counts),
// found once per (trace, step).
const std::vector<ValueRange>& block_ranges(const AppState& st, const Map& m);

// What a map's block holds (none past its tensor's values).
ValueRange range_of(const AppState& st, const Map& m);

const char* scale_name(AppState::HeatScale s);

// The maps to draw: every head's (focus_maps() may show one of them large), or, comparing
// masks, the chosen head (`focus`, else the first) beside the same head of the trace
// with the mask flipped, each titled with the mask it ran under.
// `maps`: every head's, from maps_of().
std::vector<Map> choose_maps(const AppState& st, std::vector<Map> maps, std::int64_t sentence, bool comparing, int focus);

}  // namespace headsplit::gui::heat
