// Stage: the current step's tensors as grids of cells, coloured by head, moving from where
// they stood in the previous step; below, the buffer as it lies in memory.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <list>
#include <memory>

#include <imgui.h>

#include "gui/view/layout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

// Variant v of layout_variant() for (trace, step), its window starting at the view's offsets;
// the cache keys variant and offsets as the second step.
// Sentences: `batch` blocks from `batch0`.
const StepLayout& layout_of(const AppState& st, const std::shared_ptr<const Trace>& tr, int step, int variant,
                            const AppState::StageView& view = {}, std::int64_t batch = 4, std::int64_t batch0 = 0) {
    TraceCache<StepLayout>& cache = st.panels.stage_layouts;
    LayoutLimits lim = layout_variant(variant);
    lim.token0 = std::clamp<std::int64_t>(view.token0, 0, 0xffff);
    lim.col0 = std::clamp<std::int64_t>(view.col0, 0, 0xffff);
    lim.head0 = std::clamp<std::int64_t>(view.head0, 0, 0xffff);
    lim.batch = std::clamp<std::int64_t>(batch, 1, 4);
    lim.batch0 = std::clamp<std::int64_t>(batch0, 0, 0xff);
    lim.head0 = std::min<std::int64_t>(lim.head0, 0xfff);
    // Presenter mode and a handout draw one of several tensors viewed together, as large as it goes.
    lim.first_only = (st.presenting || st.document) && tr->steps[static_cast<std::size_t>(step)].views();
    // Negative, so never a step: variant 7 bits, token0 16, col0 16, head0 12, batch 3, batch0 8.
    static_assert(kLayoutVariants - kPageVariant <= 128, "the variant's 7 bits");
    const std::int64_t key = -1 - (static_cast<std::int64_t>(variant - kPageVariant) | lim.token0 << 7 | lim.col0 << 23 |
                                   lim.head0 << 39 | lim.batch << 51 | lim.batch0 << 54 |
                                   std::int64_t{lim.first_only} << 62);
    if (StepLayout* hit = cache.find(tr, step, tr, key)) return *hit;
    return cache.add(tr, step, tr, key, layout_step(tr->steps[step], tr->config, lim));
}

const std::vector<int>& match_of(const AppState& st, const std::shared_ptr<const Trace>& from, int from_step,
                                 const std::shared_ptr<const Trace>& to, int to_step) {
    TraceCache<std::vector<int>>& cache = st.panels.stage_matches;
    if (std::vector<int>* hit = cache.find(from, from_step, to, to_step)) return *hit;
    // Buffers are only comparable within one trace. Steps too large to draw whole (only a
    // window of their cells is shown) are not animated: matching them would cost a frame.
    std::int64_t elements = 0;
    for (const auto* s : {&from->steps[from_step], &to->steps[to_step]})
        for (const TensorRecord& t : s->tensors) elements += numel(t.shape);
    std::vector<int> m = from == to && elements <= 20000 ? match_cells(from->steps[from_step], to->steps[to_step])
                                                        : std::vector<int>();
    return cache.add(from, from_step, to, to_step, std::move(m));
}



float ease(float t) { return t < 0.5f ? 2 * t * t : 1 - std::pow(-2 * t + 2, 2.0f) / 2; }

std::string axes_text(const TensorRecord& t, const Config& c) {
    const std::int64_t head_dim = c.head_dim();
    const Axes axes = layout_axes(t);
    std::string s = "[";
    for (std::size_t i = 0; i < std::min(axes.size(), t.shape.size()); ++i) {  // m, l: [B, H, rows]
        std::string a = axis_label(axes[i]);
        if (axes[i] == Axis::Key && i + 1 < axes.size()) a = c.cross() ? "S" : "T";  // key rows: the keys' tokens
        if (axes[i] == Axis::Feature) a = t.shape[i] == head_dim && axes.size() == 4 ? "head_dim" : "D";
        s += (i ? ", " : "") + a;
    }
    return s + "] = " + shape_str(t.shape);
}

// The wheel zooms about the pointer; a drag pans the window over a tensor larger than it (or
// scrolls the panel where the window already shows the whole axis); a double-click resets.
// Offsets take effect from the next frame's layout.
void handle_view(AppState& st, const StepLayout& L, int variant, float cell) {
    AppState::StageView& v = st.stage_view;
    const ImGuiIO& io = ImGui::GetIO();
    const bool hovered = ImGui::IsWindowHovered();
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        v = {};
        ImGui::SetScrollX(0);
        ImGui::SetScrollY(0);
        return;
    }
    if (hovered && io.MouseWheel != 0) {
        const float before = v.zoom;
        v.zoom = std::clamp(v.zoom * std::pow(1.25f, io.MouseWheel), 1.0f, 8.0f);
        const float r = v.zoom / before;
        const ImVec2 wp = ImGui::GetWindowPos();
        const float mx = io.MousePos.x - wp.x, my = io.MousePos.y - wp.y;
        ImGui::SetScrollX(std::max(0.0f, (ImGui::GetScrollX() + mx) * r - mx));
        ImGui::SetScrollY(std::max(0.0f, (ImGui::GetScrollY() + my) * r - my));
    }
    if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && !ImGui::IsAnyItemActive()) {
        v.dragging = true;
        v.drag_x = v.drag_y = 0;
    }
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) v.dragging = false;
    if (!v.dragging || (io.MouseDelta.x == 0 && io.MouseDelta.y == 0) || !(cell > 0)) return;
    LayoutLimits lim = layout_variant(variant);
    lim.token0 = v.token0, lim.col0 = v.col0, lim.head0 = v.head0;
    const Pan p = pan_window(lim, L, v.drag_x + io.MouseDelta.x / cell, v.drag_y + io.MouseDelta.y / cell);
    v.token0 = lim.token0, v.col0 = lim.col0, v.head0 = lim.head0;
    v.drag_x = p.pans_x ? p.rest_x : 0;
    v.drag_y = p.pans_y ? p.rest_y : 0;
    if (!p.pans_x) ImGui::SetScrollX(std::max(0.0f, ImGui::GetScrollX() - io.MouseDelta.x));
    if (!p.pans_y) ImGui::SetScrollY(std::max(0.0f, ImGui::GetScrollY() - io.MouseDelta.y));
}

// Where the window stands in the tensor, when it does not show all of it: "tokens 16-31 of
// 128, columns 0-11 of 2304, heads 4-7 of 12".
std::string window_text(const TensorLayout& tl, const LayoutLimits& lim, std::int64_t batch) {
    std::string out;
    auto range = [&](const char* what, std::int64_t start, std::int64_t shown, std::int64_t all) {
        if (shown >= all) return;
        out += (out.empty() ? "" : ", ") + std::string(what) + " " + std::to_string(start) + "-" +
               std::to_string(start + shown - 1) + " of " + std::to_string(all);
    };
    range("tokens", tl.token0, std::min(tl.rows, lim.tokens), tl.rows);
    range(tl.axes.back() == Axis::Key ? "keys" : "columns", tl.col0,
          std::min(tl.cols, tl.axes.back() == Axis::Key ? lim.tokens : lim.features), tl.cols);
    range("heads", tl.head0, std::min(tl.heads, lim.heads), tl.heads);
    if (!tl.batch_rows && batch > tl.batches)
        out += (out.empty() ? "" : ", ") + std::string("sentence") + (tl.batches > 1 ? "s " : " ") +
               std::to_string(tl.batch0) + (tl.batches > 1 ? "-" + std::to_string(tl.batch0 + tl.batches - 1) : "") +
               " of " + std::to_string(batch) + " (the heatmaps' slider picks)";
    return out;
}

std::string heading_title(const Step& s) {
    return "Step " + std::to_string(s.index) + ": " + op_name(s.op) + (s.part().empty() ? "" : " (" + s.part() + ")");
}

// Whether the heading's line on memory fits beside its title.
bool storage_beside(const std::string& title, const std::string& storage, float width) {
    return ImGui::CalcTextSize(title.c_str()).x + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize("   ").x +
               ImGui::CalcTextSize(storage.c_str()).x <=
           width;
}

// The height of step s's heading without its explanation at this width, px, as drawn below
// (`titled`: with its title).
float heading_h(const Step& s, float width, bool titled) {
    const float gap = ImGui::GetStyle().ItemSpacing.y;
    const std::string storage = storage_sentence(s.tensors.front().storage), title = heading_title(s);
    float h = 0;
    if (titled) {
        h += std::floor(ImGui::CalcTextSize(title.c_str(), nullptr, false, width).y + gap);
        if (storage_beside(title, storage, width)) return h;
    }
    return h + std::floor(ImGui::CalcTextSize(storage.c_str(), nullptr, false, width).y + gap);
}

// The step's heading: its number and op (`titled`: not where a caption names them) and what
// happened to memory (on a line of its own when the two do not fit one), then its explanation:
// where nothing else shows it (presenter mode, a page) when it takes no more than a third of
// the panel and leaves the cells legible (`cramps`: whether an explanation that tall would
// not); in the normal layout when the layout gave it the room (panels.stage_explains) and it
// takes no more than a tenth of the window's height, else the inspector has it. Returns the
// explanation's height at this width, drawn or not, and sets `drawn`.
float draw_heading(const Step& s, bool explain_here, bool room_for_it, bool titled, const std::function<bool(float)>& cramps,
                   bool& drawn) {
    const std::string title = heading_title(s);
    const TensorRecord& first = s.tensors.front();
    const std::string storage = storage_sentence(first.storage);
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = room_left().x;
    if (titled) {
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
        ImGui::TextUnformatted(title.c_str());
        ImGui::PopTextWrapPos();
        audit_last_item(title);
        if (storage_beside(title, storage, width)) ImGui::SameLine(0, style.ItemSpacing.x + ImGui::CalcTextSize("   ").x);
    }
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    ImGui::TextColored(storage_color(first.storage), "%s", storage.c_str());
    ImGui::PopTextWrapPos();
    audit_last_item(storage);
    const float text_h = ImGui::CalcTextSize(s.explain.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y;
    drawn = explain_here ? text_h <= ImGui::GetWindowHeight() / 3 && !cramps(text_h)
                         : room_for_it && text_h <= 0.1f * ImGui::GetIO().DisplaySize.y;
    if (!drawn) return text_h;
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    ImGui::TextUnformatted(s.explain.c_str());
    ImGui::PopTextWrapPos();
    audit_last_item(s.explain);
    return text_h;
}

// A configuration not computed (over the memory or the time budget): why, the step's tensors,
// then its sizes as far as the panel has room (a line that would not fit whole is left out:
// nothing is cut at the panel's edge), all wrapped to the panel.
void draw_shapes_only(const Step& s, const Config& c, const std::string& notice) {
    // The computation's own line when it gave one ("shapes only, not computed: ..."), which
    // says which budget and what would work.
    const std::string why = notice.rfind("shapes only", 0) == 0 ? notice : "shapes only: this configuration was not computed";
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4{0.95f, 0.75f, 0.25f, 1});
    ImGui::TextWrapped("%s", why.c_str());
    ImGui::PopStyleColor();
    for (const TensorRecord& t : s.tensors) {
        ImGui::Bullet();
        ImGui::TextWrapped("%s %s  strides %s  %s", t.name.c_str(), shape_str(t.shape).c_str(),
                           shape_str(t.strides).c_str(), storage_name(t.storage));
    }
    const std::string sizes[] = {
        parameter_line(c),
        "each head's " + std::to_string(c.num_tokens()) + " x " + std::to_string(c.num_tokens()) + " score grid: " +
            grouped(c.num_tokens() * c.num_tokens() * 4) + " bytes; all heads: " +
            grouped(c.heads * c.num_tokens() * c.num_tokens() * 4) + " bytes"};
    for (const std::string& line : sizes) {
        const ImVec2 room = ImGui::GetContentRegionAvail();
        if (ImGui::CalcTextSize(line.c_str(), nullptr, false, room.x).y > room.y) break;
        ImGui::TextWrapped("%s", line.c_str());
    }
}

// The panel's room for cells, measured once a frame.
struct Room {
    ImVec2 avail;
    bool scrolls = false;  // zoomed in: the panel may show scroll bars, whose room is kept
    bool spare_strip = true;   // the strip may be drawn where memory is not the lesson
    bool lesson_strip = true;  // the strip may be drawn where memory is the lesson
    float line, font, label_w;
    float captions_w = 0;  // the shared captions' width; 0 where the tensors differ
    float token_w = 0;     // the widest token (up to 8 letters) at the text's size
};

// The shape with its axes' names and the strides, under the grid once for all the step's
// tensors: {"each [B, T, D] = [1, 3, 6]", "strides [18, 6, 1]"}.
std::array<std::string, 2> shared_captions(const Step& s, const Config& c) {
    const TensorRecord& rec = s.tensors.front();
    return {(s.tensors.size() > 1 ? "each " : "") + axes_text(rec, c),
            "strides " + shape_str(rec.strides) + (rec.offset ? ", offset " + std::to_string(rec.offset) : "")};
}

// `scrolls`: the panel may show scroll bars (zoomed in).
Room measure_room(const Step& s, const Config& c, bool scrolls) {
    Room r;
    r.line = ImGui::GetTextLineHeightWithSpacing();
    r.font = ImGui::GetFontSize();
    // The room as if no scroll bar showed (fit_cell keeps the bars' room free either way): a
    // bar appearing (zoomed in) must not change the cells, or the next frame would drop it again.
    r.scrolls = scrolls;
    r.avail = scrolls ? ImGui::GetContentRegionAvail() : room_left();
    if (scrolls && ImGui::GetScrollMaxY() > 0) r.avail.x += ImGui::GetStyle().ScrollbarSize;
    if (scrolls && ImGui::GetScrollMaxX() > 0) r.avail.y += ImGui::GetStyle().ScrollbarSize;
    // Token names on the left (a head's or a sentence's name before its first row), as wide as
    // the widest needs, cut at 8 letters, 5.5 letters at most.
    float widest = 0;
    auto measure = [&](const std::vector<std::string>& words) {
        for (std::size_t i = 0; i < std::min<std::size_t>(words.size(), 64); ++i)  // a window shows no more
            widest = std::max(widest, ImGui::CalcTextSize(words[i].substr(0, 8).c_str()).x);
    };
    measure(c.tokens);
    for (std::int64_t b = 0; b < std::min<std::int64_t>(c.batch, 4); ++b) measure(c.key_tokens(b));
    measure({"<pad>"});
    bool repeats = false;  // a repeated word is named with its position: "10:the"
    for (std::size_t i = 0; i < c.tokens.size() && i < 64 && !repeats; ++i)
        repeats = std::count(c.tokens.begin(), c.tokens.begin() + static_cast<std::ptrdiff_t>(i), c.tokens[i]) > 0;
    r.token_w = widest + (repeats ? ImGui::CalcTextSize("10:").x : 0.0f);
    const float prefix = ImGui::CalcTextSize(c.batch > 1 ? "s0 kv0 " : "kv0 ").x;
    r.label_w = std::min(5.5f * r.font, widest + prefix + 6);
    bool same = true;
    for (const TensorRecord& t : s.tensors) same &= t.shape == s.tensors.front().shape && t.strides == s.tensors.front().strides;
    if (same && !s.tensors.empty())
        for (const std::string& line : shared_captions(s, c)) r.captions_w = std::max(r.captions_w, ImGui::CalcTextSize(line.c_str()).x);
    return r;
}

// Steps whose lesson is where the values lie: a view, a transpose, a copy (merge, concat,
// repeat_kv, the split of fused qkv).
bool memory_lesson(const Step& s) {
    return s.op == Op::View || s.op == Op::Transpose || s.op == Op::TransposeBack || s.op == Op::Merge ||
           s.op == Op::Split || s.op == Op::RepeatKv || s.op == Op::Concat || s.tensors.front().storage == Storage::Copy;
}


// The strip's rows: one row of cells 0.8 of the stage's cells (0.6 to 1.1 text lines) where it
// holds them at 0.6 of a text line, else wrapped into rows of such cells.
struct StripShape {
    float cell = 0;
    std::int64_t per_row = 1, rows = 1;
};
// `unit`: a wrapped row holds a multiple of it where it can (one token's run of addresses).
StripShape strip_shape(const Room& room, std::int64_t span, float stage_cell, std::int64_t unit = 1) {
    StripShape k;
    const float width = std::max(room.avail.x - room.label_w - 8, 1.0f), least = 0.6f * room.font;
    const float one_row = width / static_cast<float>(std::max<std::int64_t>(span, 1));
    k.per_row = std::max<std::int64_t>(span, 1);
    if (one_row >= least) {
        k.cell = std::clamp(std::min(stage_cell * 0.8f, 1.1f * room.line), least, one_row);
    } else {
        k.per_row = std::max<std::int64_t>(1, static_cast<std::int64_t>(width / least));
        k.cell = width / static_cast<float>(k.per_row);
        if (unit > 1 && k.per_row >= unit) k.per_row -= k.per_row % unit;
    }
    k.rows = (span + k.per_row - 1) / k.per_row;
    return k;
}

// The addresses from the first tensor's lowest to its highest: the strip's cells (a view into
// a wider buffer, such as fused qkv's chunks, leaves gaps).
std::int64_t strip_span(const TensorRecord& rec) {
    const std::int64_t n = numel(rec.shape);
    std::int64_t lo = INT64_MAX, hi = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t a = rec.address(i);
        lo = std::min(lo, a), hi = std::max(hi, a);
    }
    return n == 0 ? 0 : hi - lo + 1;
}

// The run of addresses one token's elements take in the first tensor's buffer: the stride of
// its token (or key) axis; 1 where it has none.
std::int64_t token_run(const TensorRecord& rec) {
    const int d = rec.dim_of(rec.key_rows() ? Axis::Key : Axis::Token);
    return d >= 0 ? std::max<std::int64_t>(rec.strides[static_cast<std::size_t>(d)], 1) : 1;
}

// Whether the tokens' names under the strip's brackets (`unit` cells each) take two lines,
// every other one lower with twice the width: where the widest at half the text's size is
// wider than a bracket of the smallest cells the strip draws (0.6 of the text), whatever the
// stage's cells, so that the room kept and the strip drawn agree.
bool names_staggered(const Room& room, std::int64_t unit) {
    return 0.5f * room.token_w > static_cast<float>(unit) * 0.6f * room.font - 3;
}

// The height of the strip, px: its title and address ticks, then each row's cells and token
// names (two lines of them where staggered), at the largest cells the strip takes (one row's
// 1.1 lines at most, wrapped rows' 0.6 of a line or a little more): sized by the text, not by
// the stage's cells.
float strip_text_h(const Room& room, std::int64_t n, std::int64_t unit) {
    const StripShape k = strip_shape(room, n, 1e9f, unit);
    const float names = (names_staggered(room, unit) ? 2.0f : 1.0f) * room.font;
    return room.line * 2.3f + static_cast<float>(k.rows) * (k.cell + 6 + names);
}

// The memory strip: wherever memory is the lesson (a buffer of up to 256 numbers) where it
// takes no more than 60% of the stage's room and leaves the grid 2 lines, and on a step of up
// to 96 numbers (not a tile step, whose four tensors take the room) on a stage with 10 lines
// of room below its heading, in one row taking no more than 35% of it; each where the room
// allows it (lesson_strip, spare_strip).
bool memory_strip_drawn(const Room& room, const Step& s) {
    const std::int64_t n = numel(s.tensors.front().shape);
    if (n > 256) return false;
    const std::int64_t span = strip_span(s.tensors.front());
    const std::int64_t unit = token_run(s.tensors.front());
    // (3.7 lines: the stage's other text without a note on hidden cells; 2 more for the grid.)
    const float strip_h = strip_text_h(room, span, unit);
    if (memory_lesson(s))
        return room.lesson_strip && span <= 256 && strip_h <= 0.6f * room.avail.y && strip_h + 5.7f * room.line <= room.avail.y;
    return room.spare_strip && n <= 96 && s.op != Op::Tile && room.avail.y >= 10 * room.line &&
           strip_shape(room, span, 1e9f).rows == 1 &&
           strip_h <= 0.35f * room.avail.y;
}

// Under the grids: the shape and the strides, and the note on a window two lines; on a short
// stage (under 8 lines of room below its heading) one each: the shape, the note's first part.
// Under 5 lines, the cells and their names alone (the timeline's tile tells the shape).
bool short_stage(const Room& room) { return room.avail.y < 8 * room.line; }
bool tiny_stage(const Room& room) { return room.avail.y < 5 * room.line; }
float caption_lines(const Room& room) { return tiny_stage(room) ? 0.0f : short_stage(room) ? 1.0f : 2.0f; }
float note_lines(const Room& room) { return tiny_stage(room) ? 0.0f : short_stage(room) ? 1.0f : 2.0f; }

// The room below the heading that is not cells: the lines of names and captions, the scroll
// bar's room and the memory strip.
// `asked`: for what the stage asks of the layout, which counts the strip only where memory is
// the lesson (elsewhere it is drawn in room left over); `shortest`: the captions and the note
// a line each, as on a short stage (the least text it can live with); `beside`: the captions
// stand beside the last row of tensors (captions_beside).
float text_room(const Room& room, const Step& s, const StepLayout& lay, bool asked = false,
                bool shortest = false, bool beside = false) {
    bool hidden = false;
    for (const TensorLayout& tl : lay.tensors) hidden |= tl.hidden > 0;
    // Above: the names (and head names) line; below: axes, strides, the note on hidden
    // cells, and the memory strip's title when it is drawn.
    const bool strip_drawn = memory_strip_drawn(room, s) && (!asked || memory_lesson(s));
    // (0.5: the room a token label centred on a small last row may reach under the grid.)
    const float strip_h =
        strip_drawn ? strip_text_h(room, strip_span(s.tensors.front()), token_run(s.tensors.front())) : 0.0f;
    const float captions = beside ? 0.0f : shortest ? 1.0f : caption_lines(room);
    const float notes = shortest ? 1.0f : note_lines(room);
    const float lines = 1.2f + captions + (tiny_stage(room) && !shortest ? 0.0f : 0.5f) + (hidden ? notes : 0.0f);
    // The scroll bars' room is kept free either way, so that a bar appearing does not
    // shrink the cells and make it go away again.
    return (room.scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f) + lines * room.line + strip_h;
}

// Where the shared captions may stand beside the last row of tensors, cell units from the
// grid's left: right of a later row's last tensor; 0 with one row.
float beside_x(const StepLayout& lay) {
    if (lay.tensors.empty() || lay.tensors.back().y <= 0) return 0.0f;
    return lay.tensors.back().x + lay.tensors.back().width + kTensorGap;
}

// Whether the shared captions stand beside the last row of tensors at cells of `cell` px,
// where the rows leave them the width and the last row the height (their lines then take no
// room under the grid).
bool captions_beside(const Room& room, const StepLayout& lay, float cell) {
    const float bar = room.scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f;
    return beside_x(lay) > 0 && room.captions_w > 0 && !short_stage(room) &&
           room.avail.x - bar - room.label_w - 10 - beside_x(lay) * cell >= room.captions_w &&
           (lay.height - lay.tensors.back().y) * cell >= caption_lines(room) * room.line;
}

// Rows of tensors only where the gap between them holds their names at 0.6 of the text.
bool rows_named(const Room& room, const StepLayout& lay, float cell) {
    return beside_x(lay) <= 0 || kTensorRowGap * cell - 3 >= 0.6f * room.font;
}

// The largest cell with which layout `lay` of step `s` fits the room: with the captions
// beside the last row of tensors where that gives larger cells and they fit there.
float fit_cell(const Room& room, const Step& s, const StepLayout& lay) {
    const float bar = room.scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f;
    const float by_w = (room.avail.x - bar - room.label_w - 10) / std::max(lay.width, 1.0f);
    const auto by_h = [&](bool beside) { return (room.avail.y - text_room(room, s, lay, false, false, beside)) / std::max(lay.height, 1.0f); };
    const float below = std::min(by_w, by_h(false));
    if (beside_x(lay) <= 0) return below;
    const float beside = std::min(by_w, by_h(true));
    return beside > below && captions_beside(room, lay, beside) ? beside : below;
}

// The window of cells chosen for this frame.
struct Choice {
    int variant = 0;
    float best = -1;  // its cell size
    std::int64_t batch_shown = 1, batch0 = 0;
};

// Whether arrangement `a` lays a step out otherwise than those before it (`first`: its
// arrangement 0): columns beyond a step's most panels repeat the last, and rows of tensors
// that hold as many tensors each as the arrangement before. Tensors stand in rows only where
// they share their captions (`shared`: each row's would lie in the names' slot of the next).
bool arrangement_differs(const StepLayout& first, int a, bool shared) {
    const std::size_t n = first.tensors.size();
    if (!shared && kTensorRows[a / 6] > 1) return false;
    std::int64_t most = 0;
    for (const TensorLayout& t : first.tensors)
        most = std::max<std::int64_t>(most, static_cast<std::int64_t>(t.panels.size()) / std::max<std::int64_t>(t.batches, 1));
    // What an arrangement amounts to for this step: panels per row, tensors per row.
    const auto effect = [&](int k) {
        return std::make_pair(std::min(kPanelColumns[k % 6], std::max<std::int64_t>(most, 1)), tensors_per_row(n, kTensorRows[k / 6]));
    };
    for (int b = 0; b < a; ++b)
        if (effect(b) == effect(a) && (shared || kTensorRows[b / 6] == 1)) return false;
    return true;
}

// The smallest cell a window may have: 14 px, and room for its row's token and a token
// panel's title (in its slot and the gap above) at kSmallestLabel of the text.
float legible_cell(const Room& room) {
    return std::max({14.0f, kSmallestLabel * room.font + 1, (kSmallestLabel * room.font + 2) / (kPanelTitle + kPanelRowGap)});
}

// The window of cells that reads best in this panel: the largest one whose cells are
// legible_cell(), its panels in the grid that gives the largest cells (else the one with the
// largest cells). Sentences of a batch: as many blocks as keep the cells legible (down to
// one, the heatmaps' sentence slider choosing which).
Choice choose_window(const AppState& st, const Room& room, const Step& s) {
    const Config& c = st.trace->config;
    Choice ch;
    const std::int64_t batch = std::min<std::int64_t>(c.batch, 4);
    for (std::int64_t b = batch; b >= 1; --b) {
        int v_b = 0;
        float best_b = -1;
        const std::int64_t b0 = std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - b);
        // A printed page first tries a window wide enough to hold most tensors whole.
        for (int level = st.document ? -1 : 0; level < kLayoutVariants / kArrangements && best_b < legible_cell(room); ++level)
            for (int v = level * kArrangements; v < (level + 1) * kArrangements; ++v) {
                const StepLayout& first = layout_of(st, st.trace, st.step, level * kArrangements, {}, b, b0);
                if (!arrangement_differs(first, v - level * kArrangements, room.captions_w > 0)) continue;
                const StepLayout& lay = layout_of(st, st.trace, st.step, v, {}, b, b0);
                const float fit = fit_cell(room, s, lay);
                if (fit > best_b + 0.5f && rows_named(room, lay, fit)) best_b = fit, v_b = v;
            }
        if (best_b >= legible_cell(room) || b == 1) {
            ch.variant = v_b, ch.best = best_b, ch.batch_shown = b;
            break;
        }
    }
    ch.batch0 = std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - ch.batch_shown);
    return ch;
}

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

Motion motion_of(const AppState& st, const Choice& ch, double now) {
    Motion m;
    const float t_anim = std::clamp(static_cast<float>((now - st.anim_start) / st.anim_seconds), 0.0f, 1.0f);
    const bool animating = t_anim < 1.0f && st.from_trace && st.from_step < static_cast<int>(st.from_trace->steps.size());
    if (!animating) return m;
    m.from = &layout_of(st, st.from_trace, st.from_step, ch.variant, st.stage_view, ch.batch_shown, ch.batch0);
    m.match = &match_of(st, st.from_trace, st.from_step, st.trace, st.step);
    m.k = ease(t_anim);
    return m;
}

constexpr float kMaxCellFonts = 4.2f;  // the largest cell, in font heights

// Sizes the cells to the space (the chosen window's fit, and the step animated from, so
// that both fit while cells glide), times the reader's zoom. Nothing scrolls at zoom 1: a
// tensor too large for legible cells shows a window of them (choose_window), and numbers
// show where their cells have room.
float cell_size(const Room& room, const Step& s, const Choice& ch, const Motion& m, float zoom) {
    const float cell = m.from ? std::min(ch.best, fit_cell(room, s, *m.from)) : ch.best;
    return std::clamp(cell, 1.0f, kMaxCellFonts * room.font) * zoom;
}

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

    // `token`: the whole token a label stands for, when it names one.
    ImVec2 label(ImVec2 pos, ImU32 col, const std::string& text, const std::string& token = "") {
        return grown(pos, draw_label(dl, pos, col, text, token));
    }
    // A label `size` px tall, narrowed to `max_w` (a trailing "." marks a cut).
    ImVec2 label_sized(ImVec2 pos, ImU32 col, const std::string& text, float size, float max_w, const std::string& token) {
        return grown(pos, draw_label(dl, pos, col, fit_text(text, max_w, size), token, size));
    }
    ImVec2 grown(ImVec2 pos, ImVec2 size) {
        right = std::max(right, pos.x + size.x);
        bottom = std::max(bottom, pos.y + size.y);
        return size;
    }
};

// Tensor names above each block, cut to the block; shape with axis names and strides
// below, once for the step when its tensors share them (`beside`: beside the last row of
// tensors instead).
void draw_tensor_captions(Canvas& cv, float below, bool beside) {
    const Step& s = cv.s;
    const TensorRecord& first = s.tensors.front();
    const float cell = cv.cell;
    bool same = true;
    for (const TensorRecord& r : s.tensors) same &= r.shape == first.shape && r.strides == first.strides;
    for (std::size_t ti = 0; ti < cv.L.tensors.size(); ++ti) {
        const TensorLayout& tl = cv.L.tensors[ti];
        const TensorRecord& rec = s.tensors[ti];
        const bool row_ends = ti + 1 == cv.L.tensors.size() || cv.L.tensors[ti + 1].y != tl.y;
        const float block_w = !row_ends ? tl.width * cell + kTensorGap * cell * 0.8f
                                        : cv.origin.x + cv.room.avail.x - (cv.grid0.x + tl.x * cell);
        // One drawn for several viewed together: the others named beside it, and their key/value
        // heads where they have fewer.
        std::string name = rec.name;
        if (cv.L.tensors.size() < s.tensors.size()) {
            name += " (";
            for (std::size_t o = cv.L.tensors.size(); o < s.tensors.size(); ++o)
                name += (o > cv.L.tensors.size() ? ", " : "") + s.tensors[o].name;
            const TensorRecord& other = s.tensors.back();
            const int kv = other.dim_of(Axis::KvHead);
            name += kv >= 0 && other.shape != rec.shape
                        ? " alike, with " + std::to_string(other.shape[static_cast<std::size_t>(kv)]) + " kv heads)"
                        : " alike)";
        }
        const float name_w = cv.L.tensors.size() == 1 ? cv.origin.x + cv.room.avail.x - (cv.grid0.x + tl.x * cell) : block_w;
        if (tl.y == 0) {
            cv.label({cv.grid0.x + tl.x * cell, cv.origin.y}, ImGui::GetColorU32(ImGuiCol_Text), fit_text(name, name_w));
        } else {  // a later row of tensors: in the gap above it, as large as the gap allows up to the text
            const float size = std::max(kSmallestLabel * cv.room.font, std::min(cv.room.font, kTensorRowGap * cell - 3));
            const ImVec2 pos(cv.grid0.x + tl.x * cell, cv.grid0.y + tl.y * cell - size - 2);
            cv.label_sized(pos, ImGui::GetColorU32(ImGuiCol_Text), name, size, name_w, "");
        }
        if (same && ti > 0) continue;
        const std::array<std::string, 2> shared = shared_captions(s, cv.c);
        std::string axes = shared[0], strides = shared[1];
        if (!same) {
            axes = fit_text(rec.name + " " + shape_str(rec.shape), block_w);
            strides = "";
        }
        // From under the grid, or from the panel's left edge (under the token names) when that
        // keeps them whole.
        const float x = cv.grid0.x + (beside ? beside_x(cv.L) * cell : same ? 0 : tl.x * cell);
        const float right = cv.origin.x + cv.room.avail.x;
        if (beside) below = cv.grid0.y + cv.L.tensors.back().y * cell;
        auto place = [&](const std::string& text, float y) {
            const float w = ImGui::CalcTextSize(text.c_str()).x;
            const float at = x + w <= right || !same ? x : cv.origin.x;
            cv.label({at, y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), fit_text(text, right - at));
        };
        place(axes, below);
        if (!strides.empty() && !short_stage(cv.room)) place(strides, below + cv.room.line);
    }
}

// A note on hidden cells: where the window stands (PyTorch prints "..." for the rest), and
// how to move it; under the captions, or in their place where they stand beside the grid.
void draw_window_note(Canvas& cv, float below, bool beside) {
    std::string note;
    for (const TensorLayout& tl : cv.L.tensors)
        if (tl.hidden > 0) {
            note = tl.name + ": " + window_text(tl, layout_variant(cv.variant), cv.c.batch);
            break;
        }
    // From the panel's left edge, on two lines (broken after a comma) when one is too narrow;
    // the how-to only where it fits whole: cut, it would end in a broken word.
    const float note_w = std::max(cv.room.avail.x, 4 * cv.room.font);
    const std::string with_hint = note + "  (drag: pan, wheel: zoom, double-click: reset)";
    if (!cv.document && ImGui::CalcTextSize(with_hint.c_str()).x <= note_w) note = with_hint;
    std::string second;
    if (ImGui::CalcTextSize(note.c_str()).x > note_w)
        for (std::size_t at = note.rfind(", "); at != std::string::npos && at > 0; at = note.rfind(", ", at - 1))
            if (ImGui::CalcTextSize(note.substr(0, at + 1).c_str()).x <= note_w) {
                second = note.substr(at + 2);
                note = note.substr(0, at + 1);
                break;
            }
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const float y = below + (beside ? 0.0f : caption_lines(cv.room)) * cv.room.line;  // under the captions
    cv.label({cv.origin.x, y}, dim, fit_text(note, note_w));
    if (!second.empty() && note_lines(cv.room) > 1) cv.label({cv.origin.x, y + cv.room.line}, dim, fit_text(second, note_w));
}

std::string head_name(const TensorLayout& t, std::int64_t h) { return (t.kv_heads ? "kv" : "h") + std::to_string(t.head0 + h); }

ImU32 head_colour_of(const Config& c, const TensorLayout& t, std::int64_t h) {
    const std::int64_t head = t.head0 + h;
    return head_color(static_cast<int>(t.kv_heads ? head * c.group_size() : head));
}

// A token as a label: the word, led by its position where the sentence repeats it ("3:the").
std::string token_label(const Config& c, const TensorLayout& tl, std::int64_t b, std::int64_t r) {
    const std::string word = row_name(c, tl, b, r);
    if (tl.batch_rows || word.empty()) return word;
    std::vector<std::string> words;
    if (tl.key_rows) words = c.key_tokens(std::min(b, c.batch - 1));
    else
        for (std::int64_t t = 0; t < c.num_tokens(); ++t) words.push_back(c.token_at(std::min(b, c.batch - 1), t));
    return word_label(words, static_cast<std::size_t>(tl.row_offset + r), tl.row_offset + r);  // row_name's word
}

// Each panel's title in its slot above it: the token of a token panel, the head of a head
// panel (in the head's colour), as large as the slot allows up to the text's size and
// narrowed to the panel's width; each recorded with the whole token.
void draw_panel_titles(Canvas& cv) {
    ImFont* font = ImGui::GetFont();
    for (const TensorLayout& t : cv.L.tensors)
        for (const PanelBox& box : t.panels) {
            const std::string text = t.token_panels ? token_label(cv.c, t, box.batch, box.index)
                                                    : head_name(t, box.index - t.head0);
            const ImU32 colour = t.token_panels ? ImGui::GetColorU32(ImGuiCol_Text)
                                                : head_colour_of(cv.c, t, box.index - t.head0);
            const float room_w = (box.w + kPanelGap * 0.9f) * cv.cell;
            // Small cells: the title reaches into the gap above its slot (the names' line
            // above the first row) to stay kSmallestLabel of the text.
            float size = std::min(cv.room.font, kPanelTitle * cv.cell - 2);
            if (size < kSmallestLabel * cv.room.font)
                size = std::min(kSmallestLabel * cv.room.font, (kPanelTitle + kPanelRowGap) * cv.cell - 2);
            const float w = font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str()).x;
            if (w > room_w) size = std::max(size * room_w / w, std::min(size, 0.6f * cv.room.font));
            if (size + 0.01f < kSmallestLabel * cv.room.font) {  // cells of a few pixels: the colours tell the panels
                if (t.token_panels) layout_audit().thinned("token panels untitled");
                continue;
            }
            // At the bottom of the slot, over its panel.
            const ImVec2 pos(cv.grid0.x + box.x * cv.cell, cv.grid0.y + box.y * cv.cell + kPanelTitle * cv.cell - size - 1);
            cv.label_sized(pos, colour, text, size, room_w, t.token_panels ? row_name(cv.c, t, box.batch, box.index) : "");
        }
}

// A row's name at the grid's left: `first` for a tensor's first row, kept before the others.
struct RowLabel {
    float y;
    std::string text, token;
    ImU32 colour;
    bool first;
};

// The names tensor `tl`'s rows want (every `stride`-th, and the first), `size` px tall.
void want_row_labels(const Canvas& cv, const TensorLayout& tl, float size, int stride, std::vector<RowLabel>& wanted) {
    const Config& c = cv.c;
    const bool split = tl.axes.size() == 4;
    Shape ix;
    std::int64_t last_block = -1;
    for (const Cell& k : tl.cells) {
        unravel(tl.colours.shape, k.index, ix);
        if (ix.back() != tl.col0 || k.x - tl.x > 0.5f) continue;  // the first column of the first panels
        const std::int64_t b = tl.batch_rows ? 0 : ix[0];
        const bool head_row = split && tl.token_panels;
        const std::int64_t r = tl.batch_rows ? ix[0] : split ? ix[2] : ix.size() >= 2 ? ix[1] : 0;
        const std::int64_t rel = r - (head_row ? tl.head0 : tl.token0);
        const bool first_line = rel == 0;
        if (rel % stride != 0 && !first_line) continue;
        RowLabel l;
        l.y = cv.grid0.y + k.y * cv.cell + cv.cell * 0.5f - size * 0.5f;
        l.text = head_row ? head_name(tl, r - tl.head0) : token_label(c, tl, b, r);
        if (!head_row && !tl.batch_rows) l.token = row_name(c, tl, b, r);
        l.colour = head_row ? head_colour_of(c, tl, r - tl.head0) : ImGui::GetColorU32(ImGuiCol_Text);
        if (c.batch > 1 && !tl.batch_rows && b != last_block) l.text = "s" + std::to_string(b) + " " + l.text;
        last_block = b;
        l.first = first_line;
        wanted.push_back(l);
    }
}

// The left column, beside the first column of panels: each row's token (a matrix, a head
// panel) or head (a token panel, in its colour), every k-th where the cells are smaller than
// the text so that two never overlap, each panel's first row always; a sentence's number
// leads its block's first label when there are several.
void draw_row_labels(Canvas& cv) {
    // As large as the text where the rows are, down to kSmallestLabel of it so that every row keeps its
    // name; smaller rows name every k-th.
    const float cell = cv.cell, size = std::clamp(cell - 1, kSmallestLabel * cv.room.font, cv.room.font);
    const float label_h = ImGui::GetTextLineHeight() * size / cv.room.font;
    const int stride = label_stride(cell, label_h);
    std::vector<RowLabel> wanted;
    for (const TensorLayout& tl : cv.L.tensors)
        if (tl.x == 0) want_row_labels(cv, tl, size, stride, wanted);  // the first tensor of each row of tensors
    std::stable_sort(wanted.begin(), wanted.end(), [](const RowLabel& a, const RowLabel& b) { return a.first > b.first; });
    if (stride > 1) layout_audit().thinned("row labels every " + std::to_string(stride) + "th");
    // A label centred on a cell smaller than the text reaches past the grid: kept in the panel.
    const float y_max = cv.origin.y + cv.room.avail.y - label_h;
    std::vector<float> placed;
    for (const RowLabel& l : wanted) {
        const float y = std::min(l.y, y_max);
        bool clear = true;
        for (float p : placed) clear &= std::fabs(p - y) >= label_h - 0.5f;
        if (!clear) {
            layout_audit().thinned("row label \"" + l.text + "\" left out: it would overlap another");
            continue;
        }
        placed.push_back(y);
        cv.label_sized({cv.label_x, y}, l.colour, l.text, size, cv.room.label_w - 6, l.token);
    }
}

// The cells, gliding from where they stood and fading in when new; the one under the mouse
// is outlined and becomes st.hover.
void draw_cells(AppState& st, const Canvas& cv, const Motion& m) {
    const Step& s = cv.s;
    const float cell = cv.cell;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    ImDrawList* dl = cv.dl;
    std::size_t flat = 0;
    for (std::size_t ti = 0; ti < cv.L.tensors.size(); ++ti) {
        const TensorLayout& tl = cv.L.tensors[ti];
        const TensorRecord& rec = s.tensors[ti];
        const std::vector<float>& values = rec.values();
        const float scale_max = tl.colour_scale;
        // One number format for every cell of the tensor on screen, or none.
        std::vector<float> shown_values;
        for (const Cell& c : tl.cells)
            if (static_cast<std::size_t>(c.index) < values.size()) shown_values.push_back(values[c.index]);
        const CellText text = cell_text(shown_values, cell - 2, cell - 2, rec.name, cv.number_max, cv.number_min);
        for (const Cell& cell_at : tl.cells) {
            const auto i = static_cast<std::size_t>(cell_at.index);
            if (i >= values.size()) break;
            float x = cell_at.x, y = cell_at.y, alpha = 1.0f;
            if (m.match) {
                const std::size_t at = flat + i;
                const int j = at < m.match->size() ? (*m.match)[at] : -1;
                const Cell* from = j >= 0 ? m.from_cell(j) : nullptr;
                if (from) {
                    x = from->x + (x - from->x) * m.k;
                    y = from->y + (y - from->y) * m.k;
                } else {
                    alpha = m.k;  // new values fade in
                }
            }
            const ImVec2 p0(cv.grid0.x + x * cell + 1, cv.grid0.y + y * cell + 1);
            const ImVec2 p1(p0.x + cell - 2, p0.y + cell - 2);
            const float v = values[i];
            ImU32 fill;
            if (std::isinf(v)) fill = IM_COL32(40, 40, 40, static_cast<int>(255 * alpha));
            else if (s.op == Op::Softmax || s.op == Op::Dropout) fill = sequential_color(v);
            else if (is_grid_op(s.op)) fill = diverging_color(scale_max > 0 ? v / scale_max : 0);
            else if (cell_at.head >= 0) fill = head_color(cell_at.head, 0.55f + 0.45f * std::min(1.0f, std::fabs(v)));
            else fill = neutral_color(st.dark);
            if (alpha < 1.0f) {
                ImVec4 f = ImGui::ColorConvertU32ToFloat4(fill);
                f.w *= alpha;
                fill = ImGui::ColorConvertFloat4ToU32(f);
            }
            dl->AddRectFilled(p0, p1, fill, 3.0f);
            if (is_grid_op(s.op) && cell_at.head >= 0 && tl.axes.size() == 4)
                dl->AddRect(p0, p1, head_color(cell_at.head, 0.9f * alpha), 3.0f, 0, 2.0f);
            std::vector<long long> index;  // for the audit only: no allocation a cell a frame otherwise
            if (layout_audit().enabled) {
                const Shape at = unravel(rec.shape, static_cast<std::int64_t>(i));
                index.assign(at.begin(), at.end());
            }
            cell_value(dl, p0, p1, text_on(fill), v, text, false, cell_at.head, std::move(index));
            if (mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y && ImGui::IsWindowHovered()) {
                st.hover = Hover{true, st.step, static_cast<int>(ti), static_cast<std::int64_t>(i)};
                dl->AddRect({p0.x - 2, p0.y - 2}, {p1.x + 2, p1.y + 2}, IM_COL32(255, 255, 255, 255), 3.0f, 0, 3.0f);
            }
        }
        flat += static_cast<std::size_t>(numel(rec.shape));
    }
}

// Memory strip: the first tensor's buffer in address order, each address coloured by the head
// of the element there, the addresses ticked above and each run of one token's elements
// bracketed and named below. A view or a transpose leaves it as it was (no data moved); a
// copy lays it out anew. Drawn from y_mem; returns where the panel's drawing ends.
float draw_memory_strip(const AppState& st, Canvas& cv, float y_mem) {
    const Step& s = cv.s;
    const float line = cv.room.line, label_w = cv.room.label_w;
    const TensorRecord& rec = s.tensors.front();
    const TensorLayout& tl = cv.L.tensors.front();
    const std::int64_t n = numel(rec.shape);
    if (!memory_strip_drawn(cv.room, s) || n == 0) return y_mem;
    std::int64_t lo = INT64_MAX, hi = 0;
    std::vector<std::int64_t> offs(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        offs[i] = rec.address(i);
        lo = std::min(lo, offs[i]);
        hi = std::max(hi, offs[i]);
    }
    const std::int64_t span = hi - lo + 1;
    const StripShape k = strip_shape(cv.room, span, cv.cell, token_run(rec));
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const std::string title = "memory: buffer " + std::to_string(rec.buffer) + " of " + rec.name + ", addresses " +
                              std::to_string(lo) + " to " + std::to_string(hi) +
                              (s.op == Op::Merge || rec.storage == Storage::Copy ? ", copied in token order" : "");
    cv.label({cv.origin.x, y_mem}, dim, fit_text(title, cv.room.avail.x));
    y_mem += line;
    std::vector<int> at(static_cast<std::size_t>(span), -1);
    for (std::int64_t i = 0; i < n; ++i) at[offs[i] - lo] = static_cast<int>(i);
    const int token_dim = rec.dim_of(rec.key_rows() ? Axis::Key : Axis::Token);
    const float x0 = cv.origin.x + label_w;
    const float label_h = ImGui::GetTextLineHeight();
    for (std::int64_t row = 0; row < k.rows; ++row) {
        const std::int64_t a0 = row * k.per_row, a1 = std::min(span, a0 + k.per_row);
        // Address ticks over the first row, every k-th address so that no two overlap (the
        // rows under it share their columns: each starts k.per_row further, told on its left).
        if (row == 0) {
            const float tick_w = ImGui::CalcTextSize(std::to_string(hi).c_str()).x + 0.4f * cv.room.font;
            const int every = label_stride(k.cell, tick_w);
            cv.label({cv.origin.x, y_mem}, dim, "address");
            const float right = cv.origin.x + cv.room.avail.x;
            for (std::int64_t a = a0; a < a1; a += every) {
                const std::string tick = std::to_string(lo + a);
                const float x = x0 + static_cast<float>(a - a0) * k.cell;
                if (x + ImGui::CalcTextSize(tick.c_str()).x <= right) cv.label({x, y_mem}, dim, tick);
            }
            y_mem += line;
        } else {
            cv.label({cv.origin.x, y_mem}, dim, fit_text("+" + std::to_string(a0), label_w - 6));
        }
        const float y_cells = y_mem;
        Shape ix;
        for (std::int64_t a = a0; a < a1; ++a) {
            const ImVec2 p0(x0 + static_cast<float>(a - a0) * k.cell, y_cells);
            const ImVec2 p1(p0.x + k.cell - 1, p0.y + k.cell - 1);
            const int i = at[static_cast<std::size_t>(a)];
            const int head = i < 0 ? -1 : tl.colours.of_element(i);
            const ImU32 fill = i < 0 ? IM_COL32(90, 90, 90, 80) : head >= 0 ? head_color(head, 0.85f) : neutral_color(st.dark);
            cv.dl->AddRectFilled(p0, p1, fill, 2.0f);
            if (st.hover.valid && st.hover.tensor == 0 && i == st.hover.index)
                cv.dl->AddRect({p0.x - 2, p0.y - 2}, {p1.x + 2, p1.y + 2}, IM_COL32(255, 255, 255, 255), 2.0f, 0, 3.0f);
            if (layout_audit().enabled) {
                std::vector<long long> index;
                if (i >= 0) {
                    unravel(rec.shape, i, ix);
                    index.assign(ix.begin(), ix.end());
                }
                layout_audit().memory(p0.x, p0.y, k.cell - 1, k.cell - 1, rec.name, head, std::move(index));
            }
        }
        // Under the cells: a bracket under each run of one token's elements, named where it fits.
        const float y_marks = y_cells + k.cell + 2;
        const bool stagger = names_staggered(cv.room, token_run(rec));
        int brackets = 0;
        if (token_dim >= 0)
            for (std::int64_t a = a0; a < a1;) {
                const int i = at[static_cast<std::size_t>(a)];
                std::int64_t b = a + 1;
                std::int64_t tok = -1, batch = 0;
                const bool batched = rec.axes.front() == Axis::Batch;
                if (i >= 0) {
                    unravel(rec.shape, i, ix);
                    tok = ix[static_cast<std::size_t>(token_dim)], batch = batched ? ix[0] : 0;
                }
                for (; b < a1; ++b) {  // one token of one sentence
                    const int j = at[static_cast<std::size_t>(b)];
                    if ((i < 0) != (j < 0)) break;
                    if (j >= 0) {
                        unravel(rec.shape, j, ix);
                        if (ix[static_cast<std::size_t>(token_dim)] != tok || (batched && ix[0] != batch)) break;
                    }
                }
                if (i >= 0) {
                    const float bx0 = x0 + static_cast<float>(a - a0) * k.cell + 2, bx1 = x0 + static_cast<float>(b - a0) * k.cell - 3;
                    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
                    cv.dl->AddLine({bx0, y_marks}, {bx1, y_marks}, ink, 2.0f);
                    cv.dl->AddLine({bx0, y_marks - 4}, {bx0, y_marks}, ink, 2.0f);
                    cv.dl->AddLine({bx1, y_marks - 4}, {bx1, y_marks}, ink, 2.0f);
                    // As large as the bracket allows down to kSmallestLabel of the text, then in the width of
                    // two (every other name a line lower), cut only beyond that.
                    const std::string word = token_label(cv.c, tl, batch, tok);
                    const float font = cv.room.font, word_w = ImGui::CalcTextSize(word.c_str()).x;
                    const bool lower = stagger && (brackets++ % 2 == 1);
                    const float room_w = stagger ? 2.0f * (bx1 - bx0 + 2) - 6 : bx1 - bx0 + 2;
                    const float size = std::clamp(font * room_w / std::max(word_w, 1.0f), kSmallestLabel * font, font);
                    const std::string name = fit_text(word, room_w, size);
                    const float name_w = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, name.c_str()).x;
                    const float mid = (bx0 + bx1) * 0.5f;
                    const float x = std::clamp(mid - name_w * 0.5f, cv.origin.x, std::max(cv.origin.x, cv.origin.x + cv.room.avail.x - name_w));
                    if (name.empty()) layout_audit().thinned("the strip's token \"" + word + "\" unnamed");
                    else
                        cv.label_sized({x, y_marks + 1 + (lower ? label_h : 0.0f)}, ink, name, size, room_w,
                                       row_name(cv.c, tl, batch, tok));
                }
                a = b;
            }
        y_mem = y_marks + (stagger ? 2.0f : 1.0f) * label_h + 2;
    }
    return y_mem;
}

}  // namespace

void DrawStage(AppState& st, double now) {
    const Step* s = st.current();
    if (!s) {
        ImGui::TextUnformatted("no trace yet");
        return;
    }
    if (quiz_waiting(st)) {
        DrawQuizCard(st, now);
        return;
    }
    DrawQuizVerdict(st);
    const Config& c = st.trace->config;
    bool explained = false;
    // Presenter mode's caption names the step already.
    const auto cramps = [&](float h) {
        if (st.shapes_only) return false;
        Room with = measure_room(*s, c, st.stage_view.zoom > 1.0f);
        const Room without = with;
        with.avail.y -= h;
        // The strip first where it shows a view's or a merge's lesson.
        const bool reshape = s->op == Op::View || s->op == Op::Transpose || s->op == Op::TransposeBack || s->op == Op::Merge;
        if (reshape && memory_strip_drawn(without, *s) && !memory_strip_drawn(with, *s)) return true;
        return choose_window(st, with, *s).best < legible_cell(with);  // the cells first
    };
    const float heading_w = room_left().x;
    const float explain_h =
        draw_heading(*s, st.presenting || st.document, st.panels.stage_explains, !st.presenting, cramps, explained);
    // What the layout is told assumes the tallest heading of any step, so that the stage and
    // the heatmaps share the height alike from step to step (the other tabs stay as they are).
    float heading_most = 0;
    for (const Step& other : st.trace->steps) heading_most = std::max(heading_most, heading_h(other, heading_w, !st.presenting));
    const float heading_more =
        st.panels.heatmaps_tab ? std::max(heading_most - heading_h(*s, heading_w, !st.presenting), 0.0f) : 0.0f;
    if (st.shapes_only) {
        draw_shapes_only(*s, c, st.notice);
        return;
    }

    Room room = measure_room(*s, c, st.stage_view.zoom > 1.0f);
    Choice ch = choose_window(st, room, *s);
    // A strip where memory is not the lesson is drawn only where it costs the cells a tenth of
    // their size at most (up to the largest they are drawn); where it is, in the normal layout,
    // only where the cells stay legible (presenter mode and a page always draw it).
    if (memory_strip_drawn(room, *s) && (!memory_lesson(*s) || (!st.presenting && !st.document))) {
        Room bare = room;
        bare.spare_strip = false;
        bare.lesson_strip = memory_lesson(*s) ? false : room.lesson_strip;
        const Choice without = choose_window(st, bare, *s);
        const float most = kMaxCellFonts * room.font;
        const bool costly = memory_lesson(*s) ? ch.best < legible_cell(room) && without.best >= legible_cell(room)
                                              : std::min(ch.best, most) < 0.9f * std::min(without.best, most);
        if (costly) room = bare, ch = without;
    }
    const StepLayout& L = layout_of(st, st.trace, st.step, ch.variant, st.stage_view, ch.batch_shown, ch.batch0);
    const Motion motion = motion_of(st, ch, now);
    const float span_w = std::max(L.width, motion.from ? motion.from->width : 0.0f);
    bool any_hidden = false;
    for (const TensorLayout& tl : L.tensors) any_hidden |= tl.hidden > 0;
    const float cell = cell_size(room, *s, ch, motion, st.stage_view.zoom);
    if (st.stage_view.zoom > 1.0f) layout_audit().allow_scroll();  // zoomed in: the reader pans and scrolls
    // What of the panel's height is not cells, for the layout of the next frame.
    st.panels.stage_text_h = ImGui::GetWindowHeight() - room.avail.y + text_room(room, *s, L, true, true);
    // The widest window, in the grid of panels that needs the least height, at legible cells; a step of up to 64 numbers (the
    // teaching example) at the size that shows them.
    std::int64_t numbers = 0;
    for (const TensorRecord& r : s->tensors) numbers += numel(r.shape);
    const float legible = numbers <= 64 ? value_cell() : legible_cell(room);
    st.panels.stage_need_h = 1e9f;
    for (int v = 0; v < kArrangements; ++v) {
        if (!arrangement_differs(layout_of(st, st.trace, st.step, 0, {}, ch.batch_shown, ch.batch0), v, room.captions_w > 0))
            continue;
        const StepLayout& wide = layout_of(st, st.trace, st.step, v, {}, ch.batch_shown, ch.batch0);
        const float text = ImGui::GetWindowHeight() - room.avail.y + text_room(room, *s, wide, true);
        // No taller than the width lets its cells be.
        const float cell_w = (room.avail.x - room.label_w - 10) / std::max(wide.width, 1.0f);
        const float need = text + std::min(legible, cell_w) * wide.height;
        const float least = ImGui::GetWindowHeight() - room.avail.y + text_room(room, *s, wide, true, true);
        if (need < st.panels.stage_need_h) st.panels.stage_need_h = need, st.panels.stage_min_h = least + 4.0f * wide.height;
    }
    // Told without the explanation, and its height apart: the layout decides whether it has
    // the room (and so does not swing between the two from frame to frame).
    st.panels.stage_explain_h = explain_h;
    const float told = heading_more - (explained ? explain_h : 0.0f);
    st.panels.stage_text_h += told, st.panels.stage_need_h += told, st.panels.stage_min_h += told;
    handle_view(st, L, ch.variant, cell);

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 grid0(origin.x + room.label_w, origin.y + room.line * 1.2f);
    Canvas cv{*s, c, L, room, ch.variant, st.document, number_size_max(), number_size_min(st.presenting, st.document), cell, ImGui::GetWindowDrawList(), origin, grid0,
              origin.x + ImGui::GetScrollX(), grid0.x + span_w * cell, grid0.y + L.height * cell};
    // Token names stay on the left edge when the panel is scrolled sideways (zoomed in), over
    // a backdrop so the cells pass under them: they are drawn on a channel above the cells.
    cv.dl->ChannelsSplit(2);
    cv.dl->ChannelsSetCurrent(1);
    if (ImGui::GetScrollX() > 0)
        cv.dl->AddRectFilled({cv.label_x - ImGui::GetStyle().WindowPadding.x, grid0.y},
                             {cv.label_x + room.label_w - 2, grid0.y + L.height * cell},
                             ImGui::ColorConvertFloat4ToU32(panel_background(st.dark)));
    // Under the grid, and under a token label that reaches below its small last row.
    const float below = grid0.y + L.height * cell + 4 + std::clamp((ImGui::GetTextLineHeight() - cell) * 0.5f - 3.0f, 0.0f, 0.3f * room.line);
    const bool beside = captions_beside(room, L, cell);
    if (!tiny_stage(room)) draw_tensor_captions(cv, below, beside);
    if (any_hidden && !tiny_stage(room)) draw_window_note(cv, below, beside);
    if (!L.tensors.empty()) draw_row_labels(cv);
    draw_panel_titles(cv);
    cv.dl->ChannelsSetCurrent(0);
    draw_cells(st, cv, motion);
    cv.dl->ChannelsMerge();

    const float y_mem = draw_memory_strip(
        st, cv, below + ((beside ? 0.0f : caption_lines(room)) + (any_hidden ? note_lines(room) : 0.0f)) * room.line);
    ImGui::Dummy({std::max(cv.right, origin.x + room.label_w + span_w * cell) - origin.x + 4,
                  std::max(y_mem, cv.bottom) - origin.y + 4});
}

}  // namespace headsplit::gui
