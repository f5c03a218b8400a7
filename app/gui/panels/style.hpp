#pragma once
// Colours and small drawing helpers shared by the panels.
#include <initializer_list>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/view/frame_watch.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::gui {

// A distinct colour per head (cycling after 10), readable on dark and light themes.
ImU32 head_color(int head, float alpha = 1.0f);
// Neutral cell colour for values that belong to no single head (x, output).
ImU32 neutral_color(bool dark, float alpha = 1.0f);
// Diverging blue - white - red for v in [-1, 1] (scores), sequential for [0, 1] (weights).
ImU32 diverging_color(float v);
ImU32 sequential_color(float v);
// The panels' background. The panels tile the window, so it is drawn once, as the frame's
// clear colour, and ImGui's window backgrounds stay transparent: on a software renderer
// (llvmpipe) each blended quad the size of a panel costs more than the panel's contents.
ImVec4 panel_background(bool dark);
// Amber, for what the class should look at now: the quiz's question, the caption's code line,
// the mode or KV head count on screen.
ImVec4 accent_color();
// Black or white, whichever reads on `background`.
ImU32 text_on(ImU32 background);
// WCAG's contrast ratio of two opaque colours (1 to 21; text wants 4.5 at least).
float contrast_ratio(ImVec4 a, ImVec4 b);
// `c` as text on the panels: in the light theme darkened, hue kept, until it holds 4.5:1 on
// `paper` (the panel background unless given; the dark theme's colours are bright for a dark
// background); as is in the dark theme.
ImVec4 ink(ImVec4 c);
ImVec4 ink(ImVec4 c, ImVec4 paper);
// The code panel's current line: its highlight over the panel background, opaque.
ImVec4 current_line_background();
// A head's colour as text (its name, its legend line): head_color() through ink().
ImU32 head_ink(int head);
// The text colours the panels share: a warning or a configuration not computed (amber), an
// error or a wrong answer (red), a right answer (green), a live change (light blue); each
// through ink().
ImVec4 warning_ink();
ImVec4 error_ink();
ImVec4 right_ink();
ImVec4 live_ink();

// What happened to memory in a step, the same hue everywhere (stage, timeline): green a
// view, amber in place, red a copy, blue computed.
ImVec4 storage_color(Storage s);


// Widths of a check box or radio button and of a button with `label`, at the current font.
float toggle_width(const char* label);
float button_width(const char* label);
// SameLine() when a widget `next_w` wide still fits beside the last item; otherwise the next
// widget starts a new line (controls wrap at large fonts instead of being cut at the edge).
void same_line_if_fits(float next_w);

// A coloured heading inside a panel.
void section_title(const char* text);

// The fonts loaded by the window: 0 text, 1 code (monospace), 2 numbers inside cells, 3 on
// the code at smaller sizes.
// The three fonts (text, code, cell numbers) at `scale` into the current context's atlas:
// DejaVu when installed, ImGui's own font otherwise. The renderer's texture is the caller's.
void add_fonts(float scale);
// Dark or light colours, square panels; the panels' background is left to the clear colour.
void apply_theme(bool dark);
ImFont* code_font();
// The code font at each size baked, largest first (code_font() first).
std::vector<ImFont*> code_fonts();
ImFont* cell_font();
// The cell numbers' usual size, px (their font is baked larger, for numbers that grow).
float cell_font_size();
// The height of the cell font's digits drawn at `size` px.
float digit_height(float size);
// Numbers grow with their cells up to the size of presenter mode caption's first line, px.
float number_size_max();
// In presenter mode a number is drawn with digits at least 2.5% of the window's height (of 1080
// px at most: 27 px), on a handout's picture 26 px (3 mm when its 1600 px are printed across
// A4's 186 mm between margins), or not at all: the smallest size, px (0 elsewhere: the cell
// font's usual size).
float number_size_min(bool presenting, bool document = false);
// Records the current window as audited panel `name` (call right after ImGui::Begin, or at
// the top of a tab's content); `above`: px over the cursor it draws in too (a note beside its
// tab bar).
void audit_panel(const char* name, float above = 0);
// Puts the next item, `w` wide, on the line of the one before where it fits.
void next_on_line(float w);
// A row of radio buttons, one per label (its value its index), going on at the next line where
// one does not fit; returns the index chosen (`current` when none was clicked).
int radio_row(const std::vector<const char*>& labels, int current);
// The height radio_row() takes `width` px wide.
float radio_row_height(const std::vector<const char*>& labels, float width);
// The width radio_row() takes on one line.
float radio_row_width(const std::vector<const char*>& labels);
// Panels that must fit do so from a projector's 1024x768 at text 1.5, 680 x 512 px a unit of
// text: in a smaller window (for its text size) the audit lets the current panel scroll.
void scroll_below_projector_size(float font_scale);
// The room from the cursor to the current window's inner edges (right, bottom), px: what a
// panel that never scrolls has left to draw in.
ImVec2 room_left();
// AddText that the audit sees, in the current font at `size` px (0: its own size), with the
// whole token it names when it names one; returns the text's size.
ImVec2 draw_label(ImDrawList* dl, ImVec2 pos, ImU32 color, const std::string& text, const std::string& token = "",
                  float size = 0);
// The same on end, reading upwards, its box's top-left at `pos`: returns the box's size
// (the text's height across, its width down).
ImVec2 draw_label_on_end(ImDrawList* dl, ImVec2 pos, ImU32 color, const std::string& text, const std::string& token = "",
                         float size = 0);
// The smallest a token's label is drawn, as a part of the text size, before labels are left
// out (every k-th) or cut.
constexpr float kSmallestLabel = 0.4f;
// Word `i` of `words` as a label: led by its position `at` where the words repeat it ("6:the").
std::string word_label(const std::vector<std::string>& words, std::size_t i, std::int64_t at);
// `text` cut to fit `max_w` px in the current font at `size` px (0: its own size; a trailing
// "." marks the cut); "" when not even one letter fits.
std::string fit_text(const std::string& text, float max_w, float size = 0);
// The same for a token's label, which the audit judges by its own rule (every token named
// whole up to 16 tokens, thinned past that) rather than as a cut word.
std::string fit_token(const std::string& text, float max_w, float size = 0);
// The first of `options` (longest first) that fits `max_w` px whole; the last cut to fit when
// none does.
std::string first_fitting(const std::vector<std::string>& options, float max_w, float size = 0);
// Records the last ImGui item (a button, a line of text) as a label.
void audit_last_item(const std::string& text);
// The key of what a panel measured over every step (StepsMost): `trace`, `width` and the
// text size, and `more`.
std::string steps_key(const Trace* trace, float width, const std::string& more = "");
// `text` at the cursor, broken at its spaces only to the current window's right edge
// (lines_at_spaces), each line recorded for the audit when `audited` (a panel the audit
// knows: the inspector is not one).
void text_at_spaces(const std::string& text, bool audited = true);
// How every cell of one tensor prints its number: all at `decimals`, or none, so that no
// blank cell beside a number reads as a zero. `widest`: the width its widest number needs at
// the format chosen (at one decimal when none fits); `tensor` names it for the audit.
struct CellText {
    bool shown = false;
    int decimals = 2;
    float widest = 0;  // at the cell font's usual size
    float need_w = 0;  // the width (less 4 px) a cell needs to show them at the smallest size allowed
    float size = 0;    // the size the numbers are drawn at, px
    std::string tensor;
    std::string values_of;  // the step's tensor the numbers are of, for the audit (FrameWatch::cell)
};
// The format for `values` drawn in cells of cell_w x cell_h px: two decimals when the widest
// number fits (its width + 4 px) at `at_least` px (the cell font's usual size when larger),
// else one, else none; numbers grow with the cell up to `grow_to` px. `most_decimals`: 1
// starts at one decimal.
CellText cell_text(const std::vector<float>& values, float cell_w, float cell_h, std::string tensor, float grow_to = 0,
                   float at_least = 0, int most_decimals = 2);
// The same from the values' range (value_range), for a caller that keeps it.
CellText cell_text(const ValueRange& range, float cell_w, float cell_h, std::string tensor, float grow_to = 0,
                   float at_least = 0, int most_decimals = 2);
// A cell's number (format_cell at t's decimals), centred in [p0, p1] with the cell font, drawn
// when the tensor's numbers show; recorded for the audit (a cell too small for any number is
// not, unless it is a heatmap's), with the head its value belongs to (-1: none). Returns
// whether it was drawn.
// `index`: its position along every axis of its tensor, for the audit.
bool cell_value(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 color, float value, const CellText& t,
                bool heatmap = false, int head = -1, std::vector<long long> index = {});
// "603,979,776": thousands separated, for parameter counts.
std::string grouped(std::int64_t n);
// One line on the layer's attention weights: 3·D_in·D_out + D_out² (and GPT-3's 96 layers).
std::string parameter_line(const Config& c);

// A gradient's numbers as the stage shows them (a backward step's tensors): times 10^k, the
// least k >= 0 that brings its largest magnitude to 0.1 or more, so that a gradient of .004
// reads .40 where one decimal would show .0; its name then says so ("d_queries x100"). (Not
// to 1 or more: "-4.3" is a character wider than "-.4", and a projector's cells hold three.)
// 0 for a forward step's tensor, or one of zeros.
int gradient_exponent(const Step& s, const TensorRecord& t);
// Whether `t` is a gradient: a backward step's d_..., dW_..., db_... (not flash's tile_probs,
// lse or delta).
bool is_gradient(const Step& s, const TensorRecord& t);
std::string shown_name(const Step& s, const TensorRecord& t);
// The range of t's numbers as shown (a gradient's times 10^k), for measuring their cells.
ValueRange shown_range(const Step& s, const TensorRecord& t);
// A gradient cell's fill: diverging (blue negative, red positive) over its tensor's largest
// magnitude `most` (the shown numbers'), -inf never: a gradient is finite.
ImU32 gradient_fill(float v, float most);

// Width of `text` in the cell font.
float number_width(const std::string& text);
// The smallest cell that shows the numbers of a grid up to "-9.99" ("-.52", "-inf", "154") with
// their margin.
float value_cell();

}  // namespace headsplit::gui
