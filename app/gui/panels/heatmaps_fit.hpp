#pragma once
// Where the heatmaps panel's maps go: what a frame's maps share, the header's and legend's
// room, the tiling and the cells' size. Shared by panel_heatmaps.cpp (which draws the maps)
// and heatmaps_fit.cpp (which fits them, and measures the panel's need before it is placed).
#include <optional>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/panels/heatmaps_maps.hpp"
#include "gui/panels/style.hpp"
#include "gui/view/layout.hpp"

namespace headsplit::gui::heat {

// What the maps of this frame share: their size, the tokens along their axes, how they are
// coloured.
struct Grids {
    const Config& c;
    std::int64_t sentence, row0;
    std::int64_t R, T;    // each map is rows x keys: T x T, T x S with a context, 1 x t in a decoding round
    std::int64_t N, NR;   // the keys and rows drawn
    std::vector<std::string> keys;
    const std::vector<float>& pad;  // the key padding mask
    bool weights, comparing;
    int heads_here;       // the maps of the trace on screen, before focus or comparison
    bool document;        // a handout page: it cannot scroll, so every map fits it
    std::vector<std::string> words;  // the sentence's tokens, the rows' words
    bool steady = false;  // the maps' own steps (scores to dropout): the legend keeps its lines across them

    std::string query_token(std::int64_t i) const { return c.token_at(sentence, row0 + i); }
    std::string key_token(std::int64_t j) const {
        return j < static_cast<std::int64_t>(keys.size()) ? keys[static_cast<std::size_t>(j)] : "";
    }
    // As labels: a repeated word led by its position ("6:the").
    std::string query_label(std::int64_t i) const { return word_label(words, static_cast<std::size_t>(row0 + i), row0 + i); }
    std::string key_label(std::int64_t j) const { return word_label(keys, static_cast<std::size_t>(j), j); }
    // A masked key: padding (the key padding mask says so) or the future (the causal mask).
    bool is_padding(std::int64_t j) const {
        const std::size_t at = static_cast<std::size_t>(sentence * c.num_keys() + j);
        return at < pad.size() && pad[at] != 0.0f;
    }
};

// What the maps show at the step on screen: its grids, what the maps share, every head's map
// and those drawn (a comparison: one head under both masks).
struct Scene {
    std::vector<const Step*> grids;
    Grids g;
    std::vector<Map> all, maps;
};

// The scene where the panel draws maps (not where it shows a line: no values, flash mode's
// tiles, a question waiting, the weights not computed yet or no longer used).
std::optional<Scene> scene_of(const AppState& st);

// What the maps show at step `at` (its grid `first`): the step's grid or the weights each
// context used, and which part; `captioned`: presenter mode's caption names the step, so the
// line at the maps' steps says only the part.
std::string what_text(const Trace& tr, const Grids& g, int at, const Step& first, bool captioned);
// The widest line what_text says at the maps' steps of the current one's (or at it): the
// header keeps its lines from step to step.
float what_width(const AppState& st, const Grids& g, const Step& first, bool captioned);

// The header's height in a window's panel (not a page's) whose content is `width` px wide and
// `room` px tall, as draw_header() lays it out: its controls' lines, and the line on what is
// shown beside them or under them.
float header_h(const AppState& st, const Grids& g, const Step& first, float width, float room);

// The legend's parts, each kept whole: the colour scale with its range, then a swatch and its
// words for each kind of -inf.
struct LegendPart {
    enum Kind { Scale, Masked, Padding } kind;
    std::string text;
    float w;
};

// Those parts for maps coloured to `bound` (scores) with a bar `bar_w` px wide.
std::vector<LegendPart> legend_parts(const Grids& g, float bound, float bar_w, float font);
// The lines the legend takes in `width` px: its parts side by side, 2 fonts apart, a part
// that does not fit starting a new line.
int legend_lines(const std::vector<LegendPart>& parts, float width, float font);

// Where the maps go this frame and how large their cells are.
struct Canvas {
    ImDrawList* dl;
    ImVec2 origin, avail;
    float font, line_h, label_w, gap, cell;
    MapTiling tiling;
    float bound;  // scores: the symmetric colour range the heads share
    int row_stride, key_stride;
    float row_size, key_size;  // the token labels' text size, px: down to kSmallestLabel of the text before any is left out
    float map_w, map_h;
    ImU32 text_col, dim_col;
    // One head large, every head as a thumbnail in a strip: when the maps do not all fit at a
    // legible size, or a head was chosen (a click, [ and ]).
    int focus = -1;  // the map shown large, -1: all maps tiled
    FocusTiling strip;
    float thumb = 0, thumb_w = 0;  // a thumbnail's grid side and its box's width, px
    bool thumbs_only = false;      // too short for a large map: the thumbnails alone
    float legend_h = 0;
    bool legend = true;  // drawn (a panel too short gives its room to the maps)
    bool legend_beside = false;  // beside the large map, at its top, its parts one under another
    float legend_need = 0;  // its height when drawn
    float legible = 0;  // the cell below which not every map is shown
    float number_cell = 0;  // up to 4 tokens: the least cell that shows every maps' step's numbers
    float key_band = 0;        // the key labels' height under a map
    bool keys_on_end = false;  // the key labels stand on end, reading upwards
    int key_lines = 1;  // above 1: across, staggered over this many lines (as wide as that many columns each)
};

// The colour bar's width: 12 letters, or less on a narrow panel.
float legend_bar(const Canvas& cv);
// The room between two thumbnails.
float thumb_gap(float font);

// The maps fitted to `avail` px (the room under the header), nothing drawn; `focus`: the head
// chosen (-1: none).
Canvas fit_maps(const AppState& st, const Grids& g, const std::vector<Map>& maps, int focus, ImVec2 avail);

}  // namespace headsplit::gui::heat
