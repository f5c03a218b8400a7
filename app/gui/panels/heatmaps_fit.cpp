#include "gui/panels/heatmaps_fit.hpp"

#include <algorithm>
#include <cmath>

#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui::heat {

// The scene where the panel draws maps (not where it shows a line: no values, flash mode's
// tiles, a question waiting, the weights not computed yet or no longer used).
std::optional<Scene> scene_of(const AppState& st) {
    if (!st.trace || st.shapes_only || st.trace->config.mode == Mode::Flash || !heatmaps_off(st).empty()) return std::nullopt;
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    std::vector<const Step*> grids = grids_for(tr, st.step);
    if (grids.empty() || quiz_hides(st, grids.front()->index)) return std::nullopt;
    const bool weights = grids.front()->op == Op::Softmax || grids.front()->op == Op::Dropout;
    const std::int64_t sentence = std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - 1);
    std::vector<Map> all = maps_of(grids, true, sentence);
    const bool steady = is_grid_op(tr.steps[static_cast<std::size_t>(st.step)].op);  // the maps' own step
    // The masks compared where the weights are the step's (scores to dropout); after, the
    // maps are the weights each head's context used, which are this mask's alone.
    const bool comparing = st.compare_masks && st.other_mask && st.other_mask->config.tokens == c.tokens &&
                           st.other_mask->config.causal != c.causal && steady;
    const int heads_here = static_cast<int>(all.size());
    const int focus = st.focus_head < heads_here ? st.focus_head : -1;
    std::vector<Map> maps = choose_maps(st, all, sentence, comparing, focus);
    // Each map is rows x keys: T x T, T x S with a context, 1 x t in a decoding round.
    const TensorRecord& grid0 = *maps.front().t;
    const std::int64_t R = grid0.shape[grid0.shape.size() - 2], T = grid0.shape.back();
    const std::int64_t row0 = grids.front()->rows.first;  // a decoding round's token
    // Up to 48 tokens per map are drawn (the first ones, said in the header line): beyond
    // that a cell is a few pixels and drawing every one costs more than a frame.
    const std::int64_t N = std::min<std::int64_t>(T, 48), NR = std::min<std::int64_t>(R, 48);
    std::vector<std::string> words;
    for (std::int64_t t = 0; t < c.num_tokens(); ++t) words.push_back(c.token_at(sentence, t));
    Grids g{c, sentence, row0, R, T, N, NR, c.key_tokens(sentence), tr.inputs.key_padding_mask, weights, comparing,
            heads_here, st.document, std::move(words), steady};
    return Scene{std::move(grids), std::move(g), std::move(all), std::move(maps)};
}

// What the maps show at step `at` (its grid `first`): the step's grid or the weights each
// context used, and which part.
std::string what_text(const Trace& tr, const Grids& g, int at, const Step& first, bool captioned) {
    std::string what = !is_grid_op(tr.steps[static_cast<std::size_t>(at)].op) ? "the weights each head's context used"
                       : captioned ? ""
                                   : std::string(op_name(first.op)) + ", step " + std::to_string(first.index);
    const auto add = [&](const std::string& part) { what += (what.empty() ? part.substr(part.find_first_not_of(", ")) : part); };
    if (g.N < g.T) add(" (the first " + std::to_string(g.N) + " of " + std::to_string(g.T) + " tokens)");
    if (g.c.batch > 1) add(", sentence " + std::to_string(g.sentence));
    if (first.round > 0) add(", round " + std::to_string(first.round));
    return what;
}

float what_width(const AppState& st, const Grids& g, const Step& first, bool captioned) {
    const std::string part = std::to_string(g.N) + " " + std::to_string(g.sentence) + " " + std::to_string(first.round) + " " +
                             std::to_string(captioned);
    const std::string what = what_text(*st.trace, g, st.step, first, captioned);
    return std::max(ImGui::CalcTextSize(what.c_str()).x,
                    st.panels.heat_what_w.of(steps_key(st.trace.get(), 0, part), *st.trace, [&](const Step& s) {
                        return is_grid_op(s.op) ? ImGui::CalcTextSize(what_text(*st.trace, g, s.index, s, captioned).c_str()).x : 0.0f;
                    }));
}

// The header's height in a window's panel (not a page's) whose content is `width` px wide and
// `room` px tall, as draw_header() lays it out: its controls' lines, and the line on what is
// shown beside them or under them.
float header_h(const AppState& st, const Grids& g, const Step& first, float width, float room) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float font = ImGui::GetFontSize(), gap = style.ItemSpacing.x, inner = style.ItemInnerSpacing.x;
    const float text_line = ImGui::GetTextLineHeightWithSpacing();
    // (ImGui places lines and sized items at whole pixels.)
    const float slider = std::floor(4 * font);
    int lines = 1;
    float x = 0;  // where the next item starts on the line (after SameLine)
    auto item = [&](float w) { x += w + gap; };
    auto same_line_if = [&](float w) {  // as the function of that name
        if (w > width - x) ++lines, x = 0;
    };
    const bool captioned = st.presenting && !st.document;
    const std::string what = what_text(*st.trace, g, st.step, first, captioned);
    const auto widest = [&] { return what_width(st, g, first, captioned); };
    const float what_h =
        what.empty() ? 0.0f : std::floor(ImGui::CalcTextSize(what.c_str(), nullptr, false, width).y + style.ItemSpacing.y);
    const float frame_line = std::floor(ImGui::GetFrameHeight() + style.ItemSpacing.y);
    if (captioned) {  // what the caption does not say, beside a batch's sentence slider
        if (st.trace->config.batch <= 1) return what_h;
        item(slider + inner + ImGui::CalcTextSize("sentence").x);
        return widest() <= width - x ? frame_line : std::floor(frame_line + what_h);
    }
    if (st.focus_head >= 0 && !g.comparing && st.panels.heads_fit) item(button_width("all heads"));
    if (st.trace->config.batch > 1) item(slider + inner + ImGui::CalcTextSize("sentence").x);
    const char* compare_label = "causal vs bidirectional";
    if (width - x < toggle_width(compare_label)) ++lines, x = 0;
    item(toggle_width(compare_label));
    if (g.comparing && g.heads_here > 1) {
        same_line_if(ImGui::CalcTextSize("head").x + 6 * font);
        item(slider + inner + ImGui::CalcTextSize("head").x);
    }
    same_line_if(ImGui::CalcTextSize("each row to its max colour scale").x + ImGui::GetFrameHeight() * 2.5f);
    const float combo = std::floor(std::min(ImGui::CalcTextSize("each row to its max").x + ImGui::GetFrameHeight() * 1.5f,
                                            width - x - ImGui::CalcTextSize("colour scale").x - inner));
    item(combo + inner + ImGui::CalcTextSize("colour scale").x);
    float controls = 0;
    for (int i = 0; i < lines; ++i) controls = std::floor(controls + frame_line);
    if (room - controls < 4 * text_line + 4 + 2 * font) return controls;  // no room for the line on what is shown
    if (widest() <= width - x) return controls;
    return std::floor(controls + what_h);
}

std::vector<LegendPart> legend_parts(const Grids& g, float bound, float bar_w, float font) {
    std::vector<LegendPart> out;
    const std::string lo = g.weights ? "0" : format_cell(-bound), hi = g.weights ? "1" : format_cell(bound);
    out.push_back({LegendPart::Scale, lo + "|" + hi,
                   ImGui::CalcTextSize(lo.c_str()).x + ImGui::CalcTextSize(hi.c_str()).x + bar_w + 12});
    // (On the maps' own steps the range's numbers take the room of "-00.00" at least: a step
    // whose range is shorter keeps the lines of the others.)
    if (g.steady) out.back().w = std::max(out.back().w, ImGui::CalcTextSize("-00.00").x + ImGui::CalcTextSize("00.00").x + bar_w + 12);
    const std::string masked = g.c.padded() ? "-inf (future)" : "-inf (masked)";
    out.push_back({LegendPart::Masked, masked, font + ImGui::CalcTextSize(masked.c_str()).x});
    if (g.c.padded()) out.push_back({LegendPart::Padding, "-inf (padding)", font + ImGui::CalcTextSize("-inf (padding)").x});
    return out;
}

// The lines the legend takes in `width` px: its parts side by side, 2 fonts apart, a part
// that does not fit starting a new line.
int legend_lines(const std::vector<LegendPart>& parts, float width, float font) {
    int lines = 1;
    float x = 0;
    for (const LegendPart& p : parts) {
        if (x > 0 && x + 2 * font + p.w > width) ++lines, x = 0;
        x += (x > 0 ? 2 * font : 0) + p.w;
    }
    return lines;
}

// The colour bar's width: 12 letters, or less on a narrow panel.
float legend_bar(const Canvas& cv) { return std::min(cv.avail.x * 0.3f, 12.0f * cv.font); }

// The room between two thumbnails.
float thumb_gap(float font) { return 0.5f * font; }

namespace {

// Staggered key labels: on at most this many lines.
constexpr int kMostKeyLines = 4;
// Their text size where each is `lines` columns of `cell` px wide and the widest is
// `key_whole` px at the text size `font` (kSmallestLabel of it to all of it).
float key_size_for(float font, float key_whole, float cell, int lines) {
    return std::clamp(font * (static_cast<float>(lines) * cell - 6) / std::max(key_whole, 1.0f), kSmallestLabel * font, font);
}

// The maps' tiling in `maps_h` px (one head large where they do not all fit legibly, or one was
// chosen), each map's title and key labels (cv.key_band) taking room beside its cells.
void place_tiling(Canvas& cv, const std::vector<Map>& maps, std::int64_t N, std::int64_t NR, float maps_h, int focus,
                  const Grids& g) {
    const float font = cv.font, line_h = cv.line_h, label_w = cv.label_w;
    cv.thumbs_only = false;
    // Maps of several rows (cross-attention's T x S) as tall as their rows; a decoding round's
    // single row as a square of its keys, so its cells stay the size they were.
    cv.tiling = tile_maps(static_cast<int>(maps.size()), std::max(N, NR), cv.avail.x, maps_h, label_w,
                          line_h + cv.key_band, cv.gap, NR > 1 ? NR : std::max(N, NR));
    // Legible: up to 4 tokens the size that shows every step's numbers (number_cell), up to 12
    // tokens 32 px drawn (a projector's back row), up to 16 room for each token's name at
    // kSmallestLabel of the text, beyond that a third of a letter. Smaller, one head is shown
    // large with every head as a thumbnail; a page shows every map, as large as fits.
    const float legible = cv.legible = std::max(N, NR) <= 4    ? cv.number_cell
                                       : std::max(N, NR) <= 12 ? 33.0f
                                       : std::max(N, NR) <= 16 ? kSmallestLabel * font + 4
                                                               : std::max(8.0f, font / 3);
    const bool fit = cv.tiling.cell >= legible || maps.size() == 1;
    cv.focus = -1;
    if (!g.document && !g.comparing && maps.size() > 1 && (!fit || focus >= 0)) {
        cv.focus = std::clamp(focus, 0, static_cast<int>(maps.size()) - 1);
        cv.thumb = std::clamp(0.1f * std::min(cv.avail.x, maps_h), 1.2f * font, 3.0f * font);
        cv.thumb_w = ImGui::CalcTextSize(("h" + std::to_string(maps.size() - 1)).c_str()).x;
        cv.strip = focus_tiling(static_cast<int>(maps.size()), std::max(N, NR), cv.avail.x, maps_h, label_w, line_h + cv.key_band,
                                cv.gap, cv.thumb, cv.thumb_w, line_h, thumb_gap(font));
        cv.tiling = {1, 1, cv.strip.cell};
        cv.thumb = cv.strip.thumb;
        // No room for a large map beside the strip (or no strip fits): every head as a
        // thumbnail, in rows from the top, as large as the rows allow.
        if (cv.strip.cell < 2 || (cv.strip.right ? cv.strip.strip > cv.avail.x : cv.strip.strip > maps_h)) {
            cv.thumbs_only = true;
            const float gap = thumb_gap(font);
            const int n = static_cast<int>(maps.size());
            for (cv.thumb = 3.0f * font;; cv.thumb = std::max(4.0f, cv.thumb * 0.85f)) {
                const float box_w = std::max(cv.thumb, cv.thumb_w) + gap, box_h = line_h + cv.thumb + gap;
                cv.strip.right = false;
                cv.strip.per_line = std::max(1, static_cast<int>(cv.avail.x / box_w));
                cv.strip.strip = static_cast<float>((n + cv.strip.per_line - 1) / cv.strip.per_line) * box_h;
                if (cv.strip.strip <= maps_h || cv.thumb <= 4.0f) break;
            }
        }
    }
}

// The least cell that shows, with two decimals, the numbers of every step's maps of the
// sentence on screen at the size drawn (presenter mode's 2.5% of the window's height): the same
// at every step, so that the maps keep their tiling from step to step.
float number_cell(const AppState& st, const Grids& g) {
    const Trace& tr = *st.trace;
    const float at_least = number_size_min(st.presenting, st.document);
    const std::string key = std::to_string(ImGui::GetFontSize()) + " " + std::to_string(g.sentence) + " " + std::to_string(at_least);
    return st.panels.heat_number_cell.of(steps_key(&tr, 0, key), tr, [&](const Step& s) {
        if (!is_grid_op(s.op)) return 0.0f;
        ValueRange range;
        for (const Map& m : maps_of(grids_for(tr, s.index), true, g.sentence))
            for (const ValueRange& r : block_ranges(st, m)) range.add(r);
        // (Drawn in a cell's side less a pixel, with 4 px beside the number.)
        const CellText t = cell_text(range, 1e4f, 1e4f, "", number_size_max(), at_least);
        return t.need_w + 4 + 1;
    });
}

// Key labels too long to stand across their column at 70% of the text: the band under each
// map that holds them on end or staggered (cv.key_band, cv.keys_on_end, cv.key_lines), the
// tiling placed for it.
void place_key_band(Canvas& cv, const std::vector<Map>& maps, std::int64_t N, std::int64_t NR, float maps_h, int focus,
                    const Grids& g, float key_whole) {
    const float font = cv.font, line_h = cv.line_h;
    const MapTiling across = cv.tiling;
    const bool focused = cv.focus >= 0;
    // The band holds the longest label at the size its cells will have: a taller band
    // makes smaller cells and smaller labels, so the least band that holds them (halving).
    const auto least_band = [&](auto band_for) {
        float lo = line_h, hi = band_for(across.cell);
        for (int i = 0; i < 10 && hi - lo > 1; ++i) {
            cv.key_band = 0.5f * (lo + hi);
            place_tiling(cv, maps, N, NR, maps_h, focus, g);
            (band_for(cv.tiling.cell) <= cv.key_band ? hi : lo) = cv.key_band;
        }
        cv.key_band = std::ceil(hi);
        place_tiling(cv, maps, N, NR, maps_h, focus, g);
    };
    least_band([&](float cell) {
        const float size = std::clamp(cell - 4, kSmallestLabel * font, font);
        return std::max(line_h, std::min(key_whole, 6.0f * font) * size / font + 6);
    });
    cv.keys_on_end = true;
    if ((across.cell >= cv.legible && cv.tiling.cell < cv.legible) || cv.tiling.cell < 0.85f * across.cell) {
        cv.keys_on_end = false;
        // Staggered: each label centred on its column, on one of `lines` lines in turn, as
        // wide as `lines` columns. The fewest lines that hold every label whole at
        // kSmallestLabel of the text or more, where the maps keep their legible size (one
        // map shown large already: each row's name) and nine tenths of their cells; else
        // two lines, cut to them; else in one line's height.
        const auto staggered = [&](int lines) {
            cv.key_lines = lines;
            least_band([&](float cell) {
                return std::max(line_h, lines * (key_size_for(font, key_whole, cell, lines) + 2) + 2);
            });
            const float least = focused && cv.focus >= 0 ? kSmallestLabel * font + 1 : cv.legible;
            return !((across.cell >= least && cv.tiling.cell < least) || cv.tiling.cell < 0.9f * across.cell);
        };
        const auto whole = [&](int lines) {
            return font * (lines * cv.tiling.cell - 6) / std::max(key_whole, 1.0f) >= kSmallestLabel * font;
        };
        bool fits = false;
        for (int lines = 2; lines <= kMostKeyLines && !fits; ++lines) fits = staggered(lines) && whole(lines);
        if (!fits && !staggered(2)) {
            cv.key_band = line_h;
            place_tiling(cv, maps, N, NR, maps_h, focus, g);
        }
    }
}

}  // namespace

// The maps fitted to `avail` px (the room under the header), nothing drawn; `focus`: the head
// chosen (-1: none).
namespace {

// fit_maps(), the legend under the maps or, `beside`, beside the large map at its top (its
// parts one under another), the maps taking the whole height.
Canvas fit_maps_with(const AppState& st, const Grids& g, const std::vector<Map>& maps, int focus, ImVec2 avail,
                     bool beside) {
    Canvas cv;
    cv.font = ImGui::GetFontSize();
    cv.line_h = ImGui::GetTextLineHeightWithSpacing();
    const float font = cv.font, line_h = cv.line_h;
    const std::int64_t N = g.N, NR = g.NR;
    cv.avail = avail;
    // Row labels: the widest token, cut to 8 letters at most.
    float label_w = 0;
    for (std::int64_t i = 0; i < NR; ++i)
        label_w = std::max(label_w, ImGui::CalcTextSize(g.query_label(i).substr(0, 8).c_str()).x);
    cv.label_w = label_w = std::min(label_w, 6.0f * font) + 6;
    cv.gap = font;
    // Scores share one symmetric colour range across the heads.
    cv.bound = 0;
    if (!g.weights)
        for (const Map& m : maps) cv.bound = std::max(cv.bound, range_of(st, m).magnitude());
    // The legend's lines, its range's numbers as wide as they are drawn (at "-67.91" for
    // tiny-trained's scores the masked swatch goes to a second line).
    const float legend_h = cv.legend_h = line_h * legend_lines(legend_parts(g, cv.bound, legend_bar(cv), font),
                                                 cv.avail.x, font) + 4;
    // Too short for a map's title, key labels and 4 px cells beside the legend: the legend
    // gives its room to the maps.
    cv.legend = cv.avail.y - legend_h >= 2 * line_h + cv.gap + 4.0f * static_cast<float>(std::max(N, NR));
    cv.legend_need = legend_h;
    if (!cv.legend || beside) cv.legend_h = 0;
    cv.legend_beside = cv.legend && beside;
    const float maps_h = cv.avail.y - cv.legend_h;
    // Key labels under each map: whole across their column where they fit it at 70% of the
    // text size or more (smaller, the back row cannot read them); else on end, as tall as the
    // longest (up to 6 letters' width) and as large as the column is wide, or, where the band
    // on end would take legible maps below their legible size or cost them more than a sixth
    // of their cells, staggered across two to four lines (place_key_band); then every k-th.
    float key_whole = 0, key_need = 0;
    for (std::int64_t j = 0; j < N; ++j) {
        key_whole = std::max(key_whole, ImGui::CalcTextSize(g.key_label(j).c_str()).x);
        key_need = std::max(key_need, ImGui::CalcTextSize(g.key_label(j).substr(0, 3).c_str()).x);
    }
    cv.key_band = line_h;
    if (std::max(N, NR) <= 4) cv.number_cell = number_cell(st, g);
    place_tiling(cv, maps, N, NR, maps_h, focus, g);
    if (font * (cv.tiling.cell - 4) / std::max(key_whole, 1.0f) < 0.7f * font)
        place_key_band(cv, maps, N, NR, maps_h, focus, g, key_whole);
    cv.cell = std::clamp(cv.tiling.cell, 1.0f, 5.0f * font);

    // Labels: smaller where the cells are (to kSmallestLabel of the text), then every k-th row / key
    // when the cells are smaller than a label.
    cv.row_size = std::clamp(cv.cell - 1, kSmallestLabel * font, font);
    cv.row_stride = label_stride(cv.cell, cv.row_size);
    if (cv.key_lines > 1) {
        cv.key_size = std::clamp(std::min(key_size_for(font, key_whole, cv.cell, cv.key_lines),
                                          (cv.key_band - 2) / static_cast<float>(cv.key_lines) - 2),
                                 kSmallestLabel * font, font);
        cv.key_stride = 1;
    } else if (cv.keys_on_end) {  // no larger than the band holds the longest
        cv.key_size = std::clamp(std::min(cv.cell - 4, font * (cv.key_band - 6) / std::max(std::min(key_whole, 6.0f * font), 1.0f)),
                                 kSmallestLabel * font, font);
        cv.key_stride = label_stride(cv.cell, cv.key_size);  // a line's height holds its own spacing
    } else {
        cv.key_size = std::clamp(font * (cv.cell - 4) / std::max(key_whole, 1.0f), kSmallestLabel * font, font);
        cv.key_stride = label_stride(cv.cell, key_need * cv.key_size / font + 4);
    }
    cv.map_w = label_w + N * cv.cell + cv.gap, cv.map_h = line_h + cv.key_band + NR * cv.cell + cv.gap;
    return cv;
}

}  // namespace

Canvas fit_maps(const AppState& st, const Grids& g, const std::vector<Map>& maps, int focus, ImVec2 avail) {
    const Canvas under = fit_maps_with(st, g, maps, focus, avail, false);
    // One head large whose token names the legend's line under it thins or cuts: the legend
    // beside the map, where the room between the map and the thumbnails holds its parts one
    // under another (tiny-trained's 15 pieces at 1366x768, text 1.5).
    if (under.focus < 0 || under.thumbs_only || !under.legend || (under.row_stride == 1 && under.key_stride == 1))
        return under;
    const Canvas side = fit_maps_with(st, g, maps, focus, avail, true);
    float parts_w = 0;
    const std::vector<LegendPart> parts = legend_parts(g, side.bound, legend_bar(side), side.font);
    for (const LegendPart& p : parts) parts_w = std::max(parts_w, p.w);
    const float free_w = side.avail.x - side.label_w - static_cast<float>(g.N) * side.cell - (side.strip.right ? side.strip.strip : 0.0f);
    const bool holds = free_w >= parts_w + 2 * side.font &&
                       static_cast<float>(parts.size()) * side.line_h <= static_cast<float>(g.NR) * side.cell + side.key_band;
    const bool named = side.row_stride <= under.row_stride && side.key_stride <= under.key_stride &&
                       side.row_stride + side.key_stride < under.row_stride + under.key_stride;
    return side.focus >= 0 && !side.thumbs_only && holds && named ? side : under;
}

}  // namespace headsplit::gui::heat

namespace headsplit::gui {

using namespace heat;

// Where the heads panel's content starts under its title bar and tabs, px from its top.
float heads_content_top(const AppState& st, bool window_titled) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float tabs = st.presenting ? 0.0f : ImGui::GetFrameHeight() + style.ItemSpacing.y;  // presenter mode: one view, no tabs
    return (window_titled ? ImGui::GetFrameHeight() : 0.0f) + style.WindowPadding.y + tabs;
}

std::string when_beside_tabs(const AppState& st, const std::string& when, float panel_w) {
    if (st.presenting) return "";
    // The tabs as ImGui lays them out: each its label and the frame's padding either side,
    // the inner spacing between them; a font's width of gap before the line.
    const ImGuiStyle& style = ImGui::GetStyle();
    float tabs = 0;
    for (const char* label : kHeadsTabs) tabs += ImGui::CalcTextSize(label).x + 2 * style.FramePadding.x + style.ItemInnerSpacing.x;
    const float room = panel_w - 2 * style.WindowPadding.x - tabs - ImGui::GetFontSize();
    // Shorter: without the parenthesis, then without "the attention " / "flash's ", then
    // "come" for "are computed", then "weights: step 7".
    std::string shorter = when.substr(0, when.find(" ("));
    std::vector<std::string> forms{when, shorter};
    for (const char* lead : {"the attention ", "flash's ", "the "})
        if (shorter.rfind(lead, 0) == 0) {
            forms.push_back(shorter.substr(std::string(lead).size()));
            break;
        }
    if (const std::size_t at = forms.back().find(" are computed "); at != std::string::npos) {
        const std::string who = forms.back().substr(0, at), rest = forms.back().substr(at + 14);  // "weights", "at step 7"
        forms.push_back(who + " come " + rest);
        if (rest.rfind("at ", 0) == 0) forms.push_back(who + ": " + rest.substr(3));  // "weights: step 7"
    }
    for (const std::string& f : forms)
        if (ImGui::CalcTextSize(f.c_str()).x <= room) return f;
    return "";
}

PanelNeed heads_line_need(const AppState& st, const std::string& when, ImVec2 panel, bool window_titled) {
    PanelNeed n;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = std::max(panel.x - 2 * style.WindowPadding.x, 1.0f), top = heads_content_top(st, window_titled);
    const float line = when_beside_tabs(st, when, panel.x).empty()
                           ? ImGui::CalcTextSize(when.c_str(), nullptr, false, width).y + style.ItemSpacing.y
                           : 0.0f;
    n.text_h = n.need_h = std::ceil(top + line + style.WindowPadding.y);
    return n;
}

PanelNeed MeasureHeatmaps(const AppState& st, ImVec2 panel, bool window_titled) {
    PanelNeed n;
    if (!st.trace || st.shapes_only || st.trace->config.mode == Mode::Flash) return n;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = std::max(panel.x - 2 * style.WindowPadding.x, 1.0f), top = heads_content_top(st, window_titled);
    if (const std::string when = heatmaps_off(st); !when.empty()) return heads_line_need(st, when, panel, window_titled);
    const std::optional<Scene> scene = scene_of(st);
    if (!scene) return n;
    const Grids& g = scene->g;
    const int focus = g.comparing || st.focus_head >= g.heads_here ? -1 : st.focus_head;
    const float above = top + header_h(st, g, *scene->grids.front(), width, panel.y - top - style.WindowPadding.y);
    const auto fit = [&](float h) { return fit_maps(st, g, scene->maps, focus, {width, std::max(h - above - style.WindowPadding.y, 1.0f)}); };
    const auto text_of = [&](const Canvas& cv) { return above + cv.legend_need + cv.line_h + cv.key_band + cv.gap + style.WindowPadding.y; };
    // Legible cells at the steps the maps are about (scores to dropout) and wherever a map is
    // small enough to show its numbers (up to 4 tokens); at the others, where they show the
    // weights each context used beside the stage's lesson, 16 px will do. The need: the
    // least height whose maps have such cells (every head's, unless one was chosen), found
    // by halving between the text alone and the whole column.
    const float side = static_cast<float>(std::max(g.N, g.NR));
    const Canvas whole = fit(panel.y);
    const float want = g.steady || side <= 4 ? whole.legible : std::min(whole.legible, 16.0f);
    n.cell = std::min(whole.tiling.cell, 5.0f * whole.font), n.legible = want;
    n.every = focus >= 0 || whole.focus < 0;
    n.named = whole.row_stride == 1 && whole.key_stride == 1;
    // Numbers show in maps of up to 16 tokens at most: the least cell that shows those of
    // every step's maps (the softmax's "1.00" as well as the scores'; none where some step's
    // never show), and of some step's, the same at every step (so that what a layout asks for
    // them holds from step to step), each found by halving (a map's numbers share one format,
    // as drawn).
    if (side <= 16) {
        const Trace& tr = *st.trace;
        const auto least = [&](const Step& s) {
            if (!is_grid_op(s.op)) return 0.0f;
            ValueRange range;
            for (const Map& m : maps_of(grids_for(tr, s.index), true, g.sentence))
                for (const ValueRange& r : block_ranges(st, m)) range.add(r);
            const auto shown = [&](float cell) {
                return cell_text(range, cell - 1, cell - 1, "", number_size_max(), number_size_min(st.presenting, st.document)).shown;
            };
            float lo = 1, hi = 6 * whole.font;
            if (!shown(hi)) return 1e5f;
            for (int i = 0; i < 12 && hi - lo > 0.5f; ++i) (shown(0.5f * (lo + hi)) ? hi : lo) = 0.5f * (lo + hi);
            return hi;
        };
        const std::string key = std::to_string(whole.font) + " " + std::to_string(g.sentence) + " " + std::to_string(st.presenting);
        const float most = st.panels.heat_numbers.of(steps_key(&tr, 0, key), tr, least);
        if (most > 0 && most < 1e5f) n.numbers = most;
        // (The cache keeps the most of a measure: of 1e5 less each, 1e5 for none.)
        const float some = st.panels.heat_numbers_some.of(steps_key(&tr, 0, key), tr, [&](const Step& s) {
            return is_grid_op(s.op) ? 1e5f - least(s) : 0.0f;
        });
        if (some > 0) n.numbers_some = 1e5f - some;
    }
    n.min_w = toggle_width("causal vs bidirectional");
    for (const LegendPart& part : legend_parts(g, whole.bound, legend_bar(whole), whole.font)) n.min_w = std::max(n.min_w, part.w);
    n.min_w += 2 * style.WindowPadding.x;
    const auto legible = [&](const Canvas& cv) { return cv.tiling.cell >= want; };
    if (!legible(whole)) {  // more than the column: as much more as the cells lack
        n.text_h = text_of(whole);
        n.need_h = panel.y + (want - whole.tiling.cell) * side * static_cast<float>(std::max(whole.tiling.rows, 1)) + 1;
        return n;
    }
    float lo = text_of(whole), hi = panel.y;
    for (int i = 0; i < 16 && hi - lo > 0.5f; ++i) {
        const float mid = 0.5f * (lo + hi);
        (legible(fit(mid)) ? hi : lo) = mid;
    }
    n.text_h = text_of(fit(hi));
    n.need_h = std::ceil(hi) + 1;
    // At the maps' own steps the normal layout gives them room until their cells stop growing
    // (presenter mode measures its shares instead).
    if (g.steady && !st.presenting) {
        const auto grown = [&](const Canvas& cv) { return cv.tiling.cell >= 0.97f * whole.tiling.cell && cv.focus == whole.focus; };
        float lo_full = hi, hi_full = panel.y;
        for (int i = 0; i < 16 && hi_full - lo_full > 0.5f; ++i) {
            const float mid = 0.5f * (lo_full + hi_full);
            (grown(fit(mid)) ? hi_full : lo_full) = mid;
        }
        n.full_h = std::ceil(hi_full) + 1;
    }
    return n;
}

}  // namespace headsplit::gui
