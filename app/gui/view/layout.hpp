#pragma once
// Where each cell of a step's tensors sits on the stage, and which cell of another step it
// is: the logic behind the animation, free of any window code so it can be unit-tested.
//
// Positions are in cell units (1 = one cell). As PyTorch prints a tensor, the outer axes are
// panels and the last two a matrix in each:
//   [B, T, F]      tokens as rows, features as columns: one matrix
//   [B, T, H, F]   one panel per token, titled with it: its H heads as rows of head_dim
//   [B, H, T, F]   one panel per head, titled with it: T token rows x head_dim columns
//   [B, H, T, T']  one T x T score grid per head
//   [B, S]         the key padding mask: a row per sentence
// The panels of a tensor stand in a grid of `panel_cols` columns, each under a title slot
// (kPanelTitle cells) that names it.
// Several tensors of a step (queries, keys, values) stand side by side, or in rows of
// tensors (`tensor_rows`) with a gap for their names between; the sentences of a batch are
// blocks one under the other.
#include <functional>
#include <string>
#include <vector>

#include "headsplit/engine/trace.hpp"

namespace headsplit::gui {

// The steps whose result is a grid of scores or weights, [.., rows, keys]: scores, the masks,
// scale, softmax, dropout.
bool is_grid_op(Op op);
const char* axis_label(Axis a);  // "B", "T", "H", "H_kv", "features", "T (keys)"

// The axes tensor `t` is laid out by: its own, as the trace names them, with flash's running
// max and sum ([B, H, rows]) given a column of one ([B, H, rows, 1]).
Axes layout_axes(const TensorRecord& t);

struct LayoutLimits {
    std::int64_t tokens = 16;    // rows shown per tensor (and key columns of score grids)
    std::int64_t heads = 4;      // head groups / panels shown
    std::int64_t features = 12;  // feature columns shown (per head where split)
    std::int64_t panel_cols = 1; // a 4-d tensor's panels per row of its grid of panels
    std::int64_t tensor_rows = 1; // the step's tensors in this many rows, left to right
    bool first_only = false;     // the step's first tensor alone (the others viewed with it)
    std::int64_t batch = 4;      // sentences shown, one block under the other, from batch0
    std::int64_t batch0 = 0;
    // Where the window starts (panned): the first token row, column (feature or key) and head
    // shown. Each tensor clamps them so that its window stays full.
    std::int64_t token0 = 0, col0 = 0, head0 = 0;
};

// The windows the stage tries, largest first, each in kArrangements arrangements: variant v
// is level v / kArrangements of {16, 8, 16}, {16, 4, 12}, {12, 3, 8}, {8, 2, 6}, {6, 2, 4}
// (tokens, heads, features); arrangement a = v % kArrangements puts the panels in
// kPanelColumns[a % kColumnChoices] columns (16: all in one row; 5 and 8: two even rows of 10
// and 16 tokens) and the tensors in kTensorRows[a / kColumnChoices] rows. A printed page
// tries a wider window first: variants kPageVariant to -1 are {32, 12, 48} in the same
// arrangements.
constexpr int kColumnChoices = 8;
constexpr std::int64_t kPanelColumns[kColumnChoices] = {1, 2, 3, 4, 5, 6, 8, 16};
constexpr std::int64_t kTensorRows[3] = {1, 2, 3};
constexpr int kArrangements = kColumnChoices * 3;
constexpr int kLayoutVariants = 5 * kArrangements;
constexpr int kPageVariant = -kArrangements;
LayoutLimits layout_variant(int v);
// Tensors in each row when n tensors stand in `rows` rows (the first rows full).
std::size_t tensors_per_row(std::size_t n, std::int64_t rows);

struct Cell {
    float x = 0, y = 0;  // top-left, cell units, relative to the step's origin
    // Head the value belongs to (colour); -1 when mixed or none. Keys and values of grouped-
    // query attention take the colour of the first query head their key/value head serves.
    int head = -1;
    std::int64_t index = 0;  // the element's flat index in its tensor (row-major)
};

// The head each element of a tensor is coloured as. Features of a [B, T, D_out] tensor, or
// the 3 x D_out of qkv, belong to heads in blocks of head_dim; the input x and the output
// projection mix them. Keys and values of grouped-query attention belong to key/value heads,
// coloured as the first query head each serves.
struct HeadColours {
    Shape shape;  // the tensor's shape as laid out
    bool split = false, head_rows = false;  // [B, T|H, H|T, X]; [B, H, T, X]
    std::int64_t head_dim = 0, D = 0, kv_width = 1, group = 1;
    bool grouped = false, mixed = false, kv_cols = false, qkv_cols = false, by_head = false;
    bool key_rows = false, kv_heads = false;
    // A weight's gradient [out, in] (dW_query, ...): its rows are the projection's output
    // columns, coloured as those.
    bool weight_rows = false;
    int step_head = -1;

    int of_element(std::int64_t i) const;  // flat index i; -1 when mixed or none
    int of_column(std::int64_t col) const;  // column col of a tensor not split into heads
    int of_head(std::int64_t h) const;      // head panel or group h of a split tensor
};

// One panel of a 4-d tensor: its box (title slot and cells, cell units, relative to the step's
// origin) and what it stands for along the outer axis.
struct PanelBox {
    float x = 0, y = 0, w = 0, h = 0;
    std::int64_t index = 0;  // its token's row in the tensor (token panels) or its head
    std::int64_t batch = 0;  // its sentence
};

struct TensorLayout {
    std::string name;
    std::vector<Axis> axes;
    float x = 0, y = 0, width = 0, height = 0;  // the block, cell units
    // The elements in the window, in row-major order; a tensor of millions of values keeps
    // only the few hundred it shows.
    std::vector<Cell> cells;
    std::int64_t hidden = 0;                    // elements beyond the limits
    std::int64_t token0 = 0, col0 = 0, head0 = 0;  // the window's start (clamped)
    std::int64_t rows = 0, cols = 0, heads = 0;    // the full extent of each axis
    // Sentences: how many blocks are drawn and each block's height (cells, without the gap).
    std::int64_t batches = 1, batch0 = 0;  // sentences batch0 .. batch0 + batches - 1 are drawn
    float block_height = 0;
    bool key_rows = false;       // rows are keys (the context, keys and values): key tokens
    bool batch_rows = false;     // rows are sentences (the key padding mask)
    bool kv_heads = false;       // its head axis counts key/value heads (grouped, before repeat_kv)
    std::int64_t row_offset = 0; // position of the first row (the step's first row or key)
    HeadColours colours;         // every element's head, shown or not (the memory strip's)
    // A score grid's (is_grid_op) largest finite |value|, the scale of its diverging colours,
    // found once here rather than over every value each frame; 0 otherwise, or with no values.
    float colour_scale = 0;
    // 4-d tensors: one panel per token ([B, T, H, X]: token_panels) or per head, in a grid of
    // panel_cols columns; the panels' inner rows are heads or tokens.
    std::vector<PanelBox> panels;
    bool token_panels = false;
    std::int64_t panel_cols = 1;

    const Cell* cell_at(std::int64_t index) const;  // element `index`'s cell; nullptr when hidden
};

struct StepLayout {
    std::vector<TensorLayout> tensors;
    float width = 0, height = 0;
    // The largest useful window starts over the tensors (0 where everything is shown): a pan
    // clamps to them.
    std::int64_t max_token0 = 0, max_col0 = 0, max_head0 = 0;
};

// A pan by (dx, dy) cells of the window (content follows the pointer: dragging right shows
// earlier columns), clamped to the layout's maxima. Horizontal moves columns, or whole panels
// (heads, or tokens of token panels) when all columns show and panels stand side by side;
// vertical moves the panels' rows (tokens, or heads of token panels), or whole panels when
// all rows show and panels are stacked. Whole steps move; the fraction of a step left over is returned
// for the next drag event. An axis whose window already shows everything does not pan (the
// panel scrolls instead: pans_x / pans_y false).
struct Pan {
    float rest_x = 0, rest_y = 0;
    bool pans_x = false, pans_y = false;
};
Pan pan_window(LayoutLimits& lim, const StepLayout& lay, float dx, float dy);

constexpr float kPanelGap = 0.8f;   // between two panels of a row
constexpr float kPanelTitle = 0.75f; // above each panel: the slot of its title
constexpr float kPanelRowGap = 0.3f;  // between two rows of panels, above the next titles
constexpr float kTensorGap = 1.25f;  // between tensors of one step (wider than kPanelGap)
constexpr float kTensorRowGap = 0.75f;  // between two rows of tensors: the slot of their names
constexpr float kBatchGap = 1.0f;   // between the blocks of two sentences

// The sizes, key/value heads, tokens and decoding rounds come from the trace's config.
StepLayout layout_step(const Step& s, const Config& c, const LayoutLimits& limits = {});
// The same for a plain multi-head configuration of `heads` heads of `head_dim`.
StepLayout layout_step(const Step& s, std::int64_t heads, std::int64_t head_dim, const LayoutLimits& limits = {});

// The name of row `r` of sentence `b` in a tensor laid out as `tl`: its token (a key token
// for key rows, from the round's position when decoding), or the sentence for the mask.
std::string row_name(const Config& c, const TensorLayout& tl, std::int64_t b, std::int64_t r);

// For every element of `to` (its tensors one after another, row-major), the index of the
// same value's element in `from` (flattened the same way), or -1 when it has none there.
// The same value means: the same memory (same buffer and element offset: views, in-place
// ops), or, across a copy, the element the copy read, found through the tensor's `from`
// links into `from` (merge: row-major order; concat: head h's output into block h).
std::vector<int> match_cells(const Step& from, const Step& to);

// `text` broken into lines no wider than `width` (as `measure` gives a text's width) at its
// spaces: ImGui's own wrap also breaks after '.' and ',', inside "self.W_value(x)" or
// "0.04551". Only a word wider than a line is cut: after a bracket or a comma, else after a
// dot (a number never; a piece wider still stands alone on its line).
std::vector<std::string> lines_at_spaces(const std::string& text, float width,
                                         const std::function<float(const std::string&)>& measure);

// Labels along an axis, `pitch` px apart, each needing `need` px: draw every k-th, the
// smallest k (>= 1) with k * pitch >= need, so that no two drawn labels overlap.
int label_stride(float pitch, float need);

// How to tile n maps of a T x T grid in a (w x h) px area, each map needing `extra_w` px
// beside its grid (row labels) and `extra_h` px above and below it (title, key labels), so
// that the cells are as large as they can be.
struct MapTiling {
    int columns = 1, rows = 1;
    float cell = 0;  // px
};
// `rows`: the maps' height in cells when it is not T (a map wider than tall).
MapTiling tile_maps(int n, std::int64_t T, float w, float h, float extra_w, float extra_h, float gap,
                    std::int64_t rows = -1);

// One map large (`gap` px around it, as tile_maps, but none under it where the strip is along
// the right) and n thumbnails (each up to `thumb` px
// square under a title line `title_h` px tall, `thumb_w` px wide at least, `thumb_gap` apart) in a strip along the right edge or the
// bottom, whichever leaves the large map the larger cells (tile_maps of one map in the rest).
// The thumbnails shrink (to 4 px at least) until the strip takes no more than 40% of the side;
// a strip wider (taller) than the whole panel loses to one that fits.
struct FocusTiling {
    bool right = true;   // the strip along the right edge, else along the bottom
    int per_line = 1;    // thumbnails per column (right) or per row (bottom)
    float strip = 0;     // its width (right) or height (bottom), px
    float thumb = 0;     // a thumbnail's side, px
    float cell = 0;      // the large map's cell, px
};
FocusTiling focus_tiling(int n, std::int64_t T, float w, float h, float extra_w, float extra_h, float gap, float thumb,
                         float thumb_w, float title_h, float thumb_gap);

}  // namespace headsplit::gui
