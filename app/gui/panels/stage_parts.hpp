#pragma once
// The stage panel's parts, shared by its three files: panel_stage.cpp draws the panel (its
// heading, the reader's pan and zoom); stage_room.cpp works out where its room goes (the
// window of cells shown, their size, the memory strip's share); stage_draw.cpp draws one
// frame (cells, names, captions, the memory strip).
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/view/layout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui::stage {

// Variant v of layout_variant() for (trace, step), its window starting at the view's offsets;
// the cache keys variant and offsets as the second step.
// Sentences: `batch` blocks from `batch0`.
// `alone`: of several tensors viewed together, the first only (as presenter mode and a handout
// always draw them), where drawn together their numbers would not show (choose_window).
const StepLayout& layout_of(const AppState& st, const std::shared_ptr<const Trace>& tr, int step, int variant,
                            const AppState::StageView& view = {}, std::int64_t batch = 4, std::int64_t batch0 = 0,
                            bool alone = false);

const std::vector<int>& match_of(const AppState& st, const std::shared_ptr<const Trace>& from, int from_step,
                                 const std::shared_ptr<const Trace>& to, int to_step);

inline float ease(float t) { return t < 0.5f ? 2 * t * t : 1 - std::pow(-2 * t + 2, 2.0f) / 2; }

std::string axes_text(const TensorRecord& t, const Config& c);

// The panel's room for cells, measured once a frame.
struct Room {
    ImVec2 avail;
    bool scrolls = false;  // zoomed in: the panel may show scroll bars, whose room is kept
    bool spare_strip = true;   // the strip may be drawn where memory is not the lesson
    bool lesson_strip = true;  // the strip may be drawn where memory is the lesson
    float line, font, label_w;
    float strip_label_w = 0;  // the memory strip's left column ("address", "+24")
    float captions_w = 0;  // the shared captions' width; 0 where the tensors differ
    float caption_line_w = 0;  // theirs on one line (shared_caption_line); 0 where the tensors differ
    float token_w = 0;     // the widest token (up to 8 letters) at the text's size
    float cell_cap = 0;    // the largest cell drawn (cell_cap_of)
    // The memory strip's column where it stands beside the grid, right of `avail` and a
    // letter's height apart (place_cells); 0: under the grid.
    float strip_beside = 0;
};

// The shape with its axes' names and the strides, under the grid once for all the step's
// tensors: {"each [B, T, D] = [1, 3, 6]", "strides [18, 6, 1]"}.
std::array<std::string, 2> shared_captions(const Step& s, const Config& c);
// Both on one line: "each [B, T, D] = [1, 3, 6], strides [18, 6, 1]".
inline std::string shared_caption_line(const std::array<std::string, 2>& captions) { return captions[0] + ", " + captions[1]; }

// `scrolls`: the panel may show scroll bars (zoomed in). The room left in the window drawn.
// `number_min`: the least size of a number shown (number_size_min).
Room measure_room(const Step& s, const Config& c, bool scrolls, float number_min);

// The room of a stage whose cells, captions and strip have `avail` px, measured before the
// panel is placed.
Room room_of(const Step& s, const Config& c, bool scrolls, ImVec2 avail, float number_min);

// The most numbers a step holds for the stage to weigh showing them (more are never all on
// screen at a size that shows a number).
constexpr std::int64_t kWholeNumbers = 4096;

// The largest cell: kMaxCellFonts text heights, or, where numbers have a least size
// (presenter mode, a handout) and the step holds up to kWholeNumbers of them, the cell that shows its
// widest number with one decimal at that size: a tensor is not left blank beside numbered
// ones for want of a cap, where the room allows.
float cell_cap_of(const Step& s, float font, float number_min);

// Steps whose lesson is where the values lie: a view, a transpose, a copy (merge, concat,
// repeat_kv, the split of fused qkv).
bool memory_lesson(const Step& s);
// The reshaping steps: view, transpose, transpose back, merge (the lesson's four).
bool reshapes(const Step& s);

// The strip's rows: one row of cells 0.8 of the stage's cells (0.6 to 1.1 text lines) where it
// holds them at 0.6 of a text line, else wrapped into rows of such cells.
struct StripShape {
    float cell = 0;
    std::int64_t per_row = 1, rows = 1;
};

// `unit`: a wrapped row holds a multiple of it where it can (one token's run of addresses).
StripShape strip_shape(const Room& room, std::int64_t span, float stage_cell, std::int64_t unit = 1);

// The addresses from the first tensor's lowest to its highest: the strip's cells (a view into
// a wider buffer, such as fused qkv's chunks, leaves gaps).
std::int64_t strip_span(const TensorRecord& rec);

// The run of addresses one token's elements take in the first tensor's buffer: the stride of
// its token (or key) axis; 1 where it has none.
std::int64_t token_run(const TensorRecord& rec);

// The run of addresses one head's elements take in a buffer laid out head by head (its head
// axis outer to its token axis in memory: a copy in [B, H, T, hd] order); 0 in any other.
std::int64_t head_run(const TensorRecord& rec);

// Whether the tokens' names under the strip's brackets (`unit` cells each) take two lines,
// every other one lower with twice the width: where the widest at half the text's size is
// wider than a bracket of the smallest cells the strip draws (0.6 of the text), whatever the
// stage's cells, so that the room kept and the strip drawn agree.
bool names_staggered(const Room& room, std::int64_t unit);

// Whether the strip's brackets run under each head's elements, named by head, not under each
// token's: in a buffer laid out head by head whose token names would take two lines (a token's
// run there is one head's share of it, head_dim addresses), so that the strip keeps one line
// of names under each row and shows the heads' blocks the copy laid out.
bool strip_names_heads(const Room& room, const TensorRecord& rec);

// What the strip's wrapped rows hold a multiple of: one head's run where it names heads and
// that takes no more rows, else one token's.
std::int64_t strip_unit(const Room& room, const TensorRecord& rec);

// The height of the first tensor's strip, px: its title and address ticks, then each row's
// cells and names (two lines of them where staggered), at the largest cells the strip takes
// (one row's 1.1 lines at most, wrapped rows' 0.6 of a line or a little more): sized by the
// text, not by the stage's cells.
float strip_text_h(const Room& room, const TensorRecord& rec);

// The room of the strip's column beside the grid (`grid`: the grid's room, strip_beside set):
// its width, and a left column as wide as the rows' offsets ("+64"), the title above naming
// the addresses (under the grid that column lines the strip up with the cells).
Room strip_column(const Room& grid, const TensorRecord& rec);

// The memory strip: wherever memory is the lesson (a buffer of up to 256 numbers) where it
// takes no more than 60% of the stage's room and leaves the grid 2 lines, and on a step of up
// to 96 numbers (not a tile step, whose four tensors take the room) on a stage with 10 lines
// of room below its heading, in one row taking no more than 35% of it; each where the room
// allows it (lesson_strip, spare_strip). Always, once placed beside the grid (strip_beside).
bool memory_strip_drawn(const Room& room, const Step& s);

// Under the grids: the shape and the strides, and the note on a window two lines; on a short
// stage (under 8 lines of room below its heading) one each: the shape, the note's first part.
// Under 5 lines, the cells and their names alone (the timeline's tile tells the shape).
inline bool short_stage(const Room& room) { return room.avail.y < 8 * room.line; }

inline bool tiny_stage(const Room& room) { return room.avail.y < 5 * room.line; }

// The shape and the strides share a line where the stage is wide enough for both.
inline bool one_caption_line(const Room& room) { return room.caption_line_w > 0 && room.caption_line_w <= room.avail.x; }

inline float caption_lines(const Room& room) {
    return tiny_stage(room) ? 0.0f : short_stage(room) || one_caption_line(room) ? 1.0f : 2.0f;
}

inline float note_lines(const Room& room) { return tiny_stage(room) ? 0.0f : short_stage(room) ? 1.0f : 2.0f; }

// The room below the heading that is not cells: the lines of names and captions, the scroll
// bar's room and the memory strip.
// `asked`: for what the stage asks of the layout, which counts the strip only where memory is
// the lesson (elsewhere it is drawn in room left over); `shortest`: the captions and the note
// a line each, as on a short stage (the least text it can live with); `beside`: the captions
// stand beside the last row of tensors (captions_beside).
float text_room(const Room& room, const Step& s, const StepLayout& lay, bool asked = false,
                bool shortest = false, bool beside = false);

// Where the shared captions may stand beside the last row of tensors, cell units from the
// grid's left: right of a later row's last tensor; 0 with one row.
float beside_x(const StepLayout& lay);

// Whether the shared captions stand beside the last row of tensors at cells of `cell` px,
// where the rows leave them the width and the last row the height (their lines then take no
// room under the grid).
bool captions_beside(const Room& room, const StepLayout& lay, float cell);

// Rows of tensors only where the gap between them holds their names at 0.6 of the text.
bool rows_named(const Room& room, const StepLayout& lay, float cell);

// The largest cell with which layout `lay` of step `s` fits the room: with the captions
// beside the last row of tensors where that gives larger cells and they fit there.
float fit_cell(const Room& room, const Step& s, const StepLayout& lay);

// The window of cells chosen for this frame.
struct Choice {
    int variant = 0;
    float best = -1;  // its cell size
    std::int64_t batch_shown = 1, batch0 = 0;
    bool alone = false;  // layout_of's: the first of the tensors viewed together only
};

// Whether arrangement `a` lays a step out otherwise than those before it (`first`: its
// arrangement 0): columns beyond a step's most panels repeat the last, and rows of tensors
// that hold as many tensors each as the arrangement before. Tensors stand in rows only where
// they share their captions (`shared`: each row's would lie in the names' slot of the next).
bool arrangement_differs(const StepLayout& first, int a, bool shared);

// The smallest cell a window may have: 14 px, and room for its row's token and a token
// panel's title (in its slot and the gap above) at kSmallestLabel of the text.
float legible_cell(const Room& room);

// The window of cells that reads best in this panel: the largest one whose cells are
// legible_cell(), its panels in the grid that gives the largest cells (else the one with the
// largest cells). Sentences of a batch: as many blocks as keep the cells legible (down to
// one, the heatmaps' sentence slider choosing which). `s`: the trace's step to show.
Choice choose_window(const AppState& st, const Room& room, const Step& s);
// choose_window, then the memory strip's cost: a strip where memory is not the lesson is
// drawn only where it costs the cells a tenth of their size at most (up to the largest they
// are drawn); where it is, in the normal layout, only where the cells stay legible (presenter
// mode and a page always draw it). `room` loses the strip where it is not drawn; where memory
// is the lesson (not on a printed page, not zoomed in) it may instead narrow to the grid's
// width, the strip beside it (room.strip_beside), where under the grid the cells would show
// no numbers.
Choice place_cells(const AppState& st, Room& room, const Step& s);
// Whether the first `count` tensors of `s` show their numbers in cells of `cell` px
// (cell_text, as the stage draws them).
bool numbers_show(const Step& s, std::size_t count, float cell, float number_min);
// The run of reshaping steps `step` is in, first and last; {-1, -1} where it is in none.
std::pair<int, int> reshape_run(const Trace& trace, int step);
// The most decimals each tensor of `s` may show (by index): on a run of reshaping steps,
// which show the same numbers, the fewest any step of the run shows the tensor of that name
// with, each step's cells estimated in each of `rooms` (place_cells), so that no number seems
// to change where none moved; 2 elsewhere. `number_min`: as measure_room's.
std::vector<int> shared_decimals(const AppState& st, const std::vector<Room>& rooms, const Step& s, float number_min);

// Cells gliding from the step before: its layout, which cell each one comes from, and how
// far along they are (1: arrived).
struct Motion {
    const StepLayout* from = nullptr;
    const std::vector<int>* match = nullptr;
    float k = 1.0f;
    // The start step's cell of element j, counted the way match_cells counts (its tensors one
    // after another); nullptr when that element was not in the window.
    const Cell* from_cell(std::int64_t j) const {
        for (const TensorLayout& t : from->tensors) {
            const std::int64_t n = t.hidden + static_cast<std::int64_t>(t.cells.size());
            if (j < n) return t.cell_at(j);
            j -= n;
        }
        return nullptr;
    }
};

Motion motion_of(const AppState& st, const Choice& ch, double now);

constexpr float kMaxCellFonts = 4.2f;  // the largest cell, in font heights

// Sizes the cells to the space (the chosen window's fit, and the step animated from, so
// that both fit while cells glide), times the reader's zoom. Nothing scrolls at zoom 1: a
// tensor too large for legible cells shows a window of them (choose_window), and numbers
// show where their cells have room.
float cell_size(const Room& room, const Step& s, const Choice& ch, const Motion& m, float zoom);

// Where the window stands in the tensor, when it does not show all of it: "tokens 16-31 of
// 128, columns 0-11 of 2304, heads 4-7 of 12".
std::string window_text(const TensorLayout& tl, const LayoutLimits& lim, std::int64_t batch);

// Where this frame's cells and labels go, and how far the drawing has reached.
struct Canvas {
    const Step& s;
    const Config& c;
    const StepLayout& L;
    const Room& room;
    int variant;
    bool document;                 // a handout page: no hints on how to pan or zoom
    float number_max, number_min;  // the cell numbers' largest size and the smallest shown, px
    float cell;
    ImDrawList* dl;
    ImVec2 origin, grid0;
    float label_x;        // the token names' left edge, kept in view when scrolled sideways
    float right, bottom;  // the widest and lowest things drawn, for the scroll area
    std::vector<int> decimals;  // the most each tensor shows, by index (shared_decimals)

    // `token`: the whole token a label stands for, when it names one.
    ImVec2 label(ImVec2 pos, ImU32 col, const std::string& text, const std::string& token = "") {
        return grown(pos, draw_label(dl, pos, col, text, token));
    }
    // A label `size` px tall, narrowed to `max_w` (a trailing "." marks a cut).
    ImVec2 label_sized(ImVec2 pos, ImU32 col, const std::string& text, float size, float max_w, const std::string& token) {
        return grown(pos, draw_label(dl, pos, col, token.empty() ? fit_text(text, max_w, size) : fit_token(text, max_w, size),
                                     token, size));
    }
    ImVec2 grown(ImVec2 pos, ImVec2 size) {
        right = std::max(right, pos.x + size.x);
        bottom = std::max(bottom, pos.y + size.y);
        return size;
    }
};

// Tensor names above each block, cut to the block; with `shapes`, shape with axis names and
// strides below, once for the step when its tensors share them (`beside`: beside the last
// row of tensors instead).
void draw_tensor_captions(Canvas& cv, float below, bool beside, bool shapes);

// A note on hidden cells: where the window stands (PyTorch prints "..." for the rest), and
// how to move it; under the captions, or in their place where they stand beside the grid.
void draw_window_note(Canvas& cv, float below, bool beside);

inline std::string head_name(const TensorLayout& t, std::int64_t h) { return (t.kv_heads ? "kv" : "h") + std::to_string(t.head0 + h); }

ImU32 head_colour_of(const Config& c, const TensorLayout& t, std::int64_t h);

// A token as a label: the word, led by its position where the sentence repeats it ("3:the").
std::string token_label(const Config& c, const TensorLayout& tl, std::int64_t b, std::int64_t r);

// Each panel's title in its slot above it: the token of a token panel, the head of a head
// panel (in the head's colour), as large as the slot allows up to the text's size and
// narrowed to the panel's width; each recorded with the whole token.
void draw_panel_titles(Canvas& cv);

// A row's name at the grid's left: `first` for a tensor's first row, kept before the others.
struct RowLabel {
    float y;
    std::string text, token;
    ImU32 colour;
    bool first;
};

// The names tensor `tl`'s rows want (every `stride`-th, and the first), `size` px tall.
void want_row_labels(const Canvas& cv, const TensorLayout& tl, float size, int stride, std::vector<RowLabel>& wanted);

// The left column, beside the first column of panels: each row's token (a matrix, a head
// panel) or head (a token panel, in its colour), every k-th where the cells are smaller than
// the text so that two never overlap, each panel's first row always; a sentence's number
// leads its block's first label when there are several.
void draw_row_labels(Canvas& cv);
// Every k-th row named beside cells `cell` px tall at text size `font` (1: every row): labels
// as large as the text where the rows are, down to kSmallestLabel of it.
int row_label_stride(float cell, float font);

// The cells, gliding from where they stood and fading in when new; the one under the mouse
// is outlined and becomes st.hover.
void draw_cells(AppState& st, const Canvas& cv, const Motion& m);

// Memory strip: the first tensor's buffer in address order, each address coloured by the head
// of the element there, the addresses ticked above and each run of one token's elements (or
// one head's, strip_names_heads) bracketed and named below. A view or a transpose leaves it
// as it was (no data moved); a copy lays it out anew. Drawn from y_mem; returns where the
// panel's drawing ends.
// Under a row of the strip (addresses a0 .. a1, `at`: each address's element, -1 for none):
// a bracket under each run of one token's (or head's) elements, named where it fits. Returns
// whether the names are staggered (every other one a line lower).
bool draw_strip_brackets(Canvas& cv, const TensorRecord& rec, const TensorLayout& tl, const std::vector<int>& at,
                         std::int64_t a0, std::int64_t a1, float x0, float cell, float y_cells);
float draw_memory_strip(const AppState& st, Canvas& cv, float y_mem);
// The strip where place_cells put it: under the grid from `y_under`, or in its column beside
// the grid (room.strip_beside); returns where the panel's drawing ends.
float draw_strip_placed(const AppState& st, Canvas& cv, float y_under);

}  // namespace headsplit::gui::stage
