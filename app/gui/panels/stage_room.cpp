// Where the stage's room goes: the window of cells shown and their size, the rows of
// tensors, the memory strip's share, the glide from the step before.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <functional>
#include <list>
#include <memory>

#include <imgui.h>

#include "gui/panels/stage_parts.hpp"

namespace headsplit::gui::stage {

const StepLayout& layout_of(const AppState& st, const std::shared_ptr<const Trace>& tr, int step, int variant,
                            const AppState::StageView& view, std::int64_t batch, std::int64_t batch0, bool alone) {
    TraceCache<StepLayout>& cache = st.panels.stage_layouts;
    LayoutLimits lim = layout_variant(variant);
    lim.token0 = std::clamp<std::int64_t>(view.token0, 0, 0xffff);
    lim.col0 = std::clamp<std::int64_t>(view.col0, 0, 0xffff);
    lim.head0 = std::clamp<std::int64_t>(view.head0, 0, 0x7ff);
    lim.batch = std::clamp<std::int64_t>(batch, 1, 4);
    lim.batch0 = std::clamp<std::int64_t>(batch0, 0, 0xff);
    // Presenter mode and a handout draw one of several tensors viewed together, as large as it
    // goes; and the projections' backward its dW_query alone (the weight split in reverse), the
    // output projection's the gradient that arrives, d_output (the next step shows where it goes).
    const Step& s = tr->steps[static_cast<std::size_t>(step)];
    lim.first_only = (st.presenting || st.document || alone) &&
                     (s.views() || s.op == Op::ProjectBack || s.op == Op::OutProjBack);
    // Negative, so never a step: variant 8 bits, token0 16, col0 16, head0 11, batch 3, batch0 8.
    static_assert(kLayoutVariants - kPageVariant <= 256, "the variant's 8 bits");
    const std::int64_t key = -1 - (static_cast<std::int64_t>(variant - kPageVariant) | lim.token0 << 8 | lim.col0 << 24 |
                                   lim.head0 << 40 | lim.batch << 51 | lim.batch0 << 54 |
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
    const std::int64_t elements = from->steps[from_step].numbers() + to->steps[to_step].numbers();
    std::vector<int> m = from == to && elements <= 20000 ? match_cells(from->steps[from_step], to->steps[to_step])
                                                        : std::vector<int>();
    return cache.add(from, from_step, to, to_step, std::move(m));
}

std::string axes_text(const TensorRecord& t, const Config& c) {
    const std::int64_t head_dim = c.head_dim();
    const Axes axes = layout_axes(t);
    std::string s = "[";
    for (std::size_t i = 0; i < std::min(axes.size(), t.shape.size()); ++i) {  // m, l: [B, H, rows]
        std::string a = axis_label(axes[i]);
        // The keys' tokens: S in cross-attention (the context's), else T; "(keys)" on the last axis.
        if (axes[i] == Axis::Key) a = std::string(c.cross() ? "S" : "T") + (i + 1 < axes.size() ? "" : " (keys)");
        if (axes[i] == Axis::Feature) a = t.shape[i] == head_dim && axes.size() == 4 ? "head_dim" : "D";
        s += (i ? ", " : "") + a;
    }
    return s + "] = " + shape_str(t.shape);
}

std::array<std::string, 2> shared_captions(const Step& s, const Config& c) {
    const TensorRecord& rec = s.tensors.front();
    return {(s.tensors.size() > 1 ? "each " : "") + axes_text(rec, c),
            "strides " + shape_str(rec.strides) + (rec.offset ? ", offset " + std::to_string(rec.offset) : "")};
}

Room measure_room(const Step& s, const Config& c, bool scrolls, float number_min) {
    // The room as if no scroll bar showed (fit_cell keeps the bars' room free either way): a
    // bar appearing (zoomed in) must not change the cells, or the next frame would drop it again.
    ImVec2 avail = scrolls ? ImGui::GetContentRegionAvail() : room_left();
    if (scrolls && ImGui::GetScrollMaxY() > 0) avail.x += ImGui::GetStyle().ScrollbarSize;
    if (scrolls && ImGui::GetScrollMaxX() > 0) avail.y += ImGui::GetStyle().ScrollbarSize;
    return room_of(s, c, scrolls, avail, number_min);
}

float cell_cap_of(const Step& s, float font, float number_min) {
    const float cap = kMaxCellFonts * font;
    if (number_min <= 0 || s.numbers() > kWholeNumbers) return cap;
    ValueRange range;
    for (const TensorRecord& t : s.tensors) range.add(shown_range(s, t));
    float widest = 0;
    for (const std::string& text : widest_cell_texts(range, 1))
        widest = std::max(widest, cell_font()->CalcTextSizeA(number_min, FLT_MAX, 0.0f, text.c_str()).x);
    // As cell_text asks: 4 px and a twentieth either side beside the number, 1 px of border.
    return std::max(cap, std::ceil(std::max(widest + 4, 1.1f * widest) + 2));
}

Room room_of(const Step& s, const Config& c, bool scrolls, ImVec2 avail, float number_min) {
    Room r;
    r.line = ImGui::GetTextLineHeightWithSpacing();
    r.font = ImGui::GetFontSize();
    r.cell_cap = cell_cap_of(s, r.font, number_min);
    r.scrolls = scrolls;
    r.avail = avail;
    // Token names on the left (a sentence's name before its first row), as wide as the widest
    // needs, measured to 8 letters, 5.5 text heights at most.
    // A word its rows repeat (a padded sentence's "<pad>" too) is named with its position: "10:the".
    float widest = 0;
    bool repeats = false;
    auto measure = [&](const std::vector<std::string>& words) {
        for (std::size_t i = 0; i < std::min<std::size_t>(words.size(), 64); ++i) {  // a window shows no more
            widest = std::max(widest, ImGui::CalcTextSize(words[i].substr(0, 8).c_str()).x);
            const auto before = words.begin() + static_cast<std::ptrdiff_t>(i);
            repeats = repeats || std::find(words.begin(), before, words[i]) != before;
        }
    };
    measure(c.tokens);
    for (std::int64_t b = 0; b < std::min<std::int64_t>(c.batch, 4); ++b) {
        if (c.batch > 1) {  // each sentence padded to the longest
            std::vector<std::string> sentence;
            for (std::int64_t t = 0; t < std::min<std::int64_t>(c.num_tokens(), 64); ++t) sentence.push_back(c.token_at(b, t));
            measure(sentence);
        }
        measure(c.key_tokens(b));
    }
    r.token_w = widest + (repeats ? ImGui::CalcTextSize("10:").x : 0.0f);
    // (The rows of token panels are heads: "kv11" fits too. Where every tensor of the step
    // stands in token panels, naming them above, the column holds the heads' names alone.)
    const float prefix = c.batch > 1 ? ImGui::CalcTextSize("s0 ").x : 0.0f;
    const float head_w = ImGui::CalcTextSize(("kv" + std::to_string(std::max<std::int64_t>(c.heads, 1) - 1)).c_str()).x;
    bool token_panels = !s.tensors.empty();
    for (const TensorRecord& t : s.tensors) {
        const Axes axes = layout_axes(t);
        token_panels &= axes.size() == 4 && !is_head_axis(axes[1]);
    }
    r.label_w = std::min(5.5f * r.font, (token_panels ? head_w : std::max(r.token_w, head_w)) + prefix + 6);
    r.strip_label_w = std::max(r.label_w, ImGui::CalcTextSize("address").x + 6);
    bool same = true;
    for (const TensorRecord& t : s.tensors) same &= t.shape == s.tensors.front().shape && t.strides == s.tensors.front().strides;
    if (same && !s.tensors.empty()) {
        const std::array<std::string, 2> captions = shared_captions(s, c);
        for (const std::string& line : captions) r.captions_w = std::max(r.captions_w, ImGui::CalcTextSize(line.c_str()).x);
        r.caption_line_w = ImGui::CalcTextSize(shared_caption_line(captions).c_str()).x;
    }
    return r;
}

bool reshapes(const Step& s) {
    return s.op == Op::View || s.op == Op::Transpose || s.op == Op::TransposeBack || s.op == Op::Merge;
}

bool memory_lesson(const Step& s) {
    return reshapes(s) || s.op == Op::Split || s.op == Op::RepeatKv || s.op == Op::Concat || s.tensors.front().storage == Storage::Copy;
}

StripShape strip_shape(const Room& room, std::int64_t span, float stage_cell, std::int64_t unit) {
    StripShape k;
    const float width = std::max(room.avail.x - room.strip_label_w - 8, 1.0f), least = 0.6f * room.font;
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

std::int64_t strip_span(const TensorRecord& rec) {
    const std::int64_t n = numel(rec.shape);
    std::int64_t lo = INT64_MAX, hi = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t a = rec.address(i);
        lo = std::min(lo, a), hi = std::max(hi, a);
    }
    return n == 0 ? 0 : hi - lo + 1;
}

std::int64_t token_run(const TensorRecord& rec) {
    const int d = rec.dim_of(rec.key_rows() ? Axis::Key : Axis::Token);
    return d >= 0 ? std::max<std::int64_t>(rec.strides[static_cast<std::size_t>(d)], 1) : 1;
}

std::int64_t head_run(const TensorRecord& rec) {
    const int t = rec.dim_of(rec.key_rows() ? Axis::Key : Axis::Token);
    const int h = std::max(rec.dim_of(Axis::Head), rec.dim_of(Axis::KvHead));  // at most one of them
    if (t < 0 || h < 0 || rec.strides.size() != rec.axes.size()) return 0;
    const std::int64_t hs = rec.strides[static_cast<std::size_t>(h)], ts = rec.strides[static_cast<std::size_t>(t)];
    return hs > ts ? hs : 0;
}

bool names_staggered(const Room& room, std::int64_t unit) {
    return 0.5f * room.token_w > static_cast<float>(unit) * 0.6f * room.font - 3;
}

bool strip_names_heads(const Room& room, const TensorRecord& rec) {
    return head_run(rec) > 0 && names_staggered(room, token_run(rec));
}

std::int64_t strip_unit(const Room& room, const TensorRecord& rec) {
    const std::int64_t t = token_run(rec), h = head_run(rec), span = strip_span(rec);
    if (!strip_names_heads(room, rec)) return t;
    const StripShape by_head = strip_shape(room, span, 1e9f, h);
    return by_head.per_row >= h && by_head.rows <= strip_shape(room, span, 1e9f, t).rows ? h : t;
}

float strip_text_h(const Room& room, const TensorRecord& rec) {
    const StripShape k = strip_shape(room, strip_span(rec), 1e9f, strip_unit(room, rec));
    const bool two_lines = !strip_names_heads(room, rec) && names_staggered(room, token_run(rec));
    const float names = (two_lines ? 2.0f : 1.0f) * room.font;
    return room.line * 2.3f + static_cast<float>(k.rows) * (k.cell + 6 + names);
}

Room strip_column(const Room& grid, const TensorRecord& rec) {
    Room column = grid;
    column.avail.x = grid.strip_beside;
    column.strip_label_w = ImGui::CalcTextSize(("+" + std::to_string(strip_span(rec))).c_str()).x + 6;
    return column;
}

bool memory_strip_drawn(const Room& room, const Step& s) {
    if (room.strip_beside > 0) return true;  // placed beside the grid where it fits (place_cells)
    const std::int64_t n = numel(s.tensors.front().shape);
    if (n > 256) return false;
    const std::int64_t span = strip_span(s.tensors.front());
    // (3.7 lines: the stage's other text without a note on hidden cells; 2 more for the grid.)
    const float strip_h = strip_text_h(room, s.tensors.front());
    if (memory_lesson(s))
        return room.lesson_strip && span <= 256 && strip_h <= 0.6f * room.avail.y && strip_h + 5.7f * room.line <= room.avail.y;
    return room.spare_strip && n <= 96 && s.op != Op::Tile && room.avail.y >= 10 * room.line &&
           strip_shape(room, span, 1e9f).rows == 1 &&
           strip_h <= 0.35f * room.avail.y;
}

float text_room(const Room& room, const Step& s, const StepLayout& lay, bool asked,
                bool shortest, bool beside) {
    bool hidden = false;
    for (const TensorLayout& tl : lay.tensors) hidden |= tl.hidden > 0;
    // Above: the names (and head names) line; below: axes, strides, the note on hidden
    // cells, and the memory strip's title when it is drawn.
    const bool strip_drawn = memory_strip_drawn(room, s) && (!asked || memory_lesson(s));
    // (0.5: the room a token label centred on a small last row may reach under the grid.)
    const float strip_h = strip_drawn && room.strip_beside <= 0 ? strip_text_h(room, s.tensors.front()) : 0.0f;
    const float captions = beside ? 0.0f : shortest ? 1.0f : caption_lines(room);
    const float notes = shortest ? 1.0f : note_lines(room);
    const float lines = 1.2f + captions + (tiny_stage(room) && !shortest ? 0.0f : 0.5f) + (hidden ? notes : 0.0f);
    // The scroll bars' room is kept free either way, so that a bar appearing does not
    // shrink the cells and make it go away again.
    return (room.scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f) + lines * room.line + strip_h;
}

float beside_x(const StepLayout& lay) {
    if (lay.tensors.empty() || lay.tensors.back().y <= 0) return 0.0f;
    return lay.tensors.back().x + lay.tensors.back().width + kTensorGap;
}

bool captions_beside(const Room& room, const StepLayout& lay, float cell) {
    const float bar = room.scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f;
    return beside_x(lay) > 0 && room.captions_w > 0 && !short_stage(room) &&
           room.avail.x - bar - room.label_w - 10 - beside_x(lay) * cell >= room.captions_w &&
           (lay.height - lay.tensors.back().y) * cell >= 2.0f * room.line;  // a line each beside
}

bool rows_named(const Room& room, const StepLayout& lay, float cell) {
    return beside_x(lay) <= 0 || kTensorRowGap * cell - 3 >= 0.6f * room.font;
}

float fit_cell(const Room& room, const Step& s, const StepLayout& lay) {
    const float bar = room.scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f;
    const float by_w = (room.avail.x - bar - room.label_w - 10) / std::max(lay.width, 1.0f);
    // Rows at least a line of text tall keep their names within the grid: the half line a name
    // may reach under a small last row (text_room) is then the cells'.
    const float reach = tiny_stage(room) ? 0.0f : 0.5f * room.line;
    const auto by_h = [&](bool beside) {
        const float text = text_room(room, s, lay, false, false, beside), rows = std::max(lay.height, 1.0f);
        const float tight = (room.avail.y - text + reach) / rows;
        return tight >= ImGui::GetTextLineHeight() ? tight : (room.avail.y - text) / rows;
    };
    const float below = std::min(by_w, by_h(false));
    if (beside_x(lay) <= 0) return below;
    const float beside = std::min(by_w, by_h(true));
    return beside > below && captions_beside(room, lay, beside) ? beside : below;
}

bool arrangement_differs(const StepLayout& first, int a, bool shared) {
    const std::size_t n = first.tensors.size();
    if (!shared && kTensorRows[a / kColumnChoices] > 1) return false;
    std::int64_t most = 0;
    for (const TensorLayout& t : first.tensors)
        most = std::max<std::int64_t>(most, static_cast<std::int64_t>(t.panels.size()) / std::max<std::int64_t>(t.batches, 1));
    // What an arrangement amounts to for this step: panels per row, tensors per row.
    const auto effect = [&](int k) {
        return std::make_pair(std::min(kPanelColumns[k % kColumnChoices], std::max<std::int64_t>(most, 1)), tensors_per_row(n, kTensorRows[k / kColumnChoices]));
    };
    for (int b = 0; b < a; ++b)
        if (effect(b) == effect(a) && (shared || kTensorRows[b / kColumnChoices] == 1)) return false;
    return true;
}

float legible_cell(const Room& room) {
    return std::max({14.0f, kSmallestLabel * room.font + 1, (kSmallestLabel * room.font + 2) / (kPanelTitle + kPanelRowGap)});
}

bool numbers_show(const Step& s, std::size_t count, float cell, float number_min) {
    for (std::size_t i = 0; i < std::min(count, s.tensors.size()); ++i) {
        const TensorRecord& t = s.tensors[i];
        if (!cell_text(shown_range(s, t), cell - 2, cell - 2, "", 0, number_min).shown)
            return false;
    }
    return true;
}

Choice choose_window(const AppState& st, const Room& room, const Step& s) {
    const Config& c = st.trace->config;
    const auto choose = [&](bool alone) {
        Choice ch;
        ch.alone = alone;
        const std::int64_t batch = std::min<std::int64_t>(c.batch, 4);
        for (std::int64_t b = batch; b >= 1; --b) {
            int v_b = 0;
            float best_b = -1;
            const std::int64_t b0 = std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - b);
            // A printed page first tries a window wide enough to hold most tensors whole.
            for (int level = st.document ? -1 : 0; level < kLayoutVariants / kArrangements && best_b < legible_cell(room); ++level)
                for (int v = level * kArrangements; v < (level + 1) * kArrangements; ++v) {
                    const StepLayout& first = layout_of(st, st.trace, s.index, level * kArrangements, {}, b, b0, alone);
                    if (!arrangement_differs(first, v - level * kArrangements, room.captions_w > 0)) continue;
                    const StepLayout& lay = layout_of(st, st.trace, s.index, v, {}, b, b0, alone);
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
    };
    const Choice all = choose(false);
    // Tensors viewed together whose numbers would not show (the normal layout in a small
    // window): the first alone, named with the others, where its numbers show so.
    if (st.presenting || st.document || !s.views() || st.stage_view.zoom > 1.0f) return all;
    if (s.numbers() > kWholeNumbers) return all;  // no number shows either way
    const float number_min = number_size_min(false, false);
    if (numbers_show(s, s.tensors.size(), std::min(all.best, room.cell_cap), number_min)) return all;
    const Choice alone = choose(true);
    return numbers_show(s, 1, std::min(alone.best, room.cell_cap), number_min) ? alone : all;
}

namespace {

// The strip beside the grid instead of under it (the grid in `room`, the strip under it, has
// `under`): in the column the grid leaves (30% to 50% of the width, its rows wrapped there),
// where it fits the stage's height, hides no more of the tensors than `under` does, and the
// cells show their numbers there or (`grow`) grow by a tenth; of equal cells the narrowest
// column (the grid keeps the most width). Sets room.strip_beside where it takes one.
Choice strip_beside(const AppState& st, Room& room, const Step& s, const Choice& under, bool grow, float number_min) {
    const auto hidden = [&](const Choice& k) {
        std::int64_t n = 0;
        for (const TensorLayout& tl : layout_of(st, st.trace, s.index, k.variant, {}, k.batch_shown, k.batch0, k.alone).tensors)
            n += tl.hidden;
        return n;
    };
    const std::int64_t hidden_under = hidden(under);
    const float most = room.cell_cap, gap = room.font, need = 1.1f * std::min(under.best, most);
    float got = 0;
    Room chosen = room;
    Choice beside = under;
    for (const float share : {0.3f, 0.35f, 0.4f, 0.45f, 0.5f}) {
        Room grid = room;
        grid.strip_beside = std::floor(share * room.avail.x);
        grid.avail.x = room.avail.x - grid.strip_beside - gap;
        if (strip_text_h(strip_column(grid, s.tensors.front()), s.tensors.front()) > room.avail.y) continue;
        const Choice b = choose_window(st, grid, s);
        const float cell = std::min(b.best, most);
        if (hidden(b) > hidden_under) continue;
        if (((grow && cell >= need) || numbers_show(s, 1, cell, number_min)) && cell > got + 0.5f) got = cell, beside = b, chosen = grid;
    }
    room = chosen;
    return beside;
}

}  // namespace

Choice place_cells(const AppState& st, Room& room, const Step& s) {
    Choice ch = choose_window(st, room, s);
    const float number_min = number_size_min(st.presenting, st.document), most = room.cell_cap;
    const bool normal = !st.presenting && !st.document;
    // Where memory is the lesson and the strip under the grid leaves its cells without
    // numbers: the strip beside the grid where the cells show them there (a sentence's token
    // panels stand in two rows of five beside it); in presenter mode also where, under a line's
    // height under the grid, they grow by a tenth (a sentence's head panels, tall and narrow,
    // leave most of the width empty).
    if (!st.document && !room.scrolls && memory_lesson(s) && memory_strip_drawn(room, s) && s.numbers() <= kWholeNumbers &&
        !numbers_show(s, 1, std::min(ch.best, most), number_min)) {
        Room placed = room;
        const Choice b = strip_beside(st, placed, s, ch, st.presenting && std::min(ch.best, most) < room.line, number_min);
        if (placed.strip_beside > 0) {
            room = placed;
            return b;
        }
    }
    if (memory_strip_drawn(room, s) && (!memory_lesson(s) || normal)) {
        Room bare = room;
        bare.spare_strip = false;
        bare.lesson_strip = memory_lesson(s) ? false : room.lesson_strip;
        const Choice without = choose_window(st, bare, s);
        // Where memory is the lesson, the strip stays unless it leaves the cells illegible.
        const bool costly = memory_lesson(s) ? ch.best < legible_cell(room) && without.best >= legible_cell(room)
                                             : std::min(ch.best, most) < 0.9f * std::min(without.best, most);
        if (costly) room = bare, ch = without;
    }
    return ch;
}

std::pair<int, int> reshape_run(const Trace& trace, int step) {
    const int n = static_cast<int>(trace.steps.size());
    const auto in_run = [&](int k) { return k >= 0 && k < n && reshapes(trace.steps[static_cast<std::size_t>(k)]); };
    if (!in_run(step)) return {-1, -1};
    int first = step, last = step;
    while (in_run(first - 1)) --first;
    while (in_run(last + 1)) ++last;
    return {first, last};
}

std::vector<int> shared_decimals(const AppState& st, const std::vector<Room>& rooms, const Step& s, float number_min) {
    std::vector<int> most(s.tensors.size(), 2);
    const std::vector<Step>& steps = st.trace->steps;
    const auto [first, last] = reshape_run(*st.trace, s.index);
    if (first < 0) return most;
    if (s.numbers() > kWholeNumbers) return most;
    for (int k = first; k <= last; ++k) {
        const Step& other = steps[static_cast<std::size_t>(k)];
        // In each room (a step drawn in less room may draw the first of its tensors alone,
        // and larger: the fewest decimals is not always in the least room).
        for (const Room& room : rooms) {
            Room r = room_of(other, st.trace->config, room.scrolls, room.avail, number_min);
            const float cell = std::min(place_cells(st, r, other).best, r.cell_cap);
            for (std::size_t ti = 0; ti < s.tensors.size(); ++ti)
                for (const TensorRecord& t : other.tensors) {
                    if (t.name != s.tensors[ti].name) continue;
                    // Not shown even at one decimal there: that step may show one (in more room
                    // than measured) or none, so one at most.
                    const CellText text = cell_text(shown_range(other, t), cell - 2, cell - 2, "", 0, number_min);
                    most[ti] = std::min(most[ti], text.shown ? text.decimals : 1);
                }
        }
    }
    return most;
}

Motion motion_of(const AppState& st, const Choice& ch, double now) {
    Motion m;
    const float t_anim = std::clamp(static_cast<float>((now - st.anim_start) / st.anim_seconds), 0.0f, 1.0f);
    const bool animating = t_anim < 1.0f && st.from_trace && st.from_step < static_cast<int>(st.from_trace->steps.size());
    if (!animating) return m;
    m.from = &layout_of(st, st.from_trace, st.from_step, ch.variant, st.stage_view, ch.batch_shown, ch.batch0, ch.alone);
    m.match = &match_of(st, st.from_trace, st.from_step, st.trace, st.step);
    m.k = ease(t_anim);
    return m;
}

float cell_size(const Room& room, const Step& s, const Choice& ch, const Motion& m, float zoom) {
    const float cell = m.from ? std::min(ch.best, fit_cell(room, s, *m.from)) : ch.best;
    return std::clamp(cell, 1.0f, room.cell_cap) * zoom;
}

}  // namespace headsplit::gui::stage
