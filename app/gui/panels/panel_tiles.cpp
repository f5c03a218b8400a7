// Flash mode's tiles, where the other modes show heatmaps: per head, the T x S score grid that
// flash never holds, drawn as a ghost; the tiles computed so far filled with the scores each
// tile step recorded, the current tile outlined, tiles above the diagonal crossed out as
// skipped. Beside each grid the running max m and sum l of every row as they stand after
// the current step; below, the memory strip: one tile held per head against split's T x S.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <imgui.h>

#include "gui/view/layout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

const ImU32 kMaskedFill = IM_COL32(35, 35, 35, 255);
const ImU32 kSkippedFill = IM_COL32(55, 45, 45, 255);

// "12 x 12 = 144 scores (576 B)"
std::string grid_words(std::int64_t rows, std::int64_t cols, std::int64_t copies) {
    const std::int64_t n = rows * cols * copies;
    return std::to_string(rows) + " x " + std::to_string(cols) + (copies > 1 ? " x " + std::to_string(copies) : "") +
           " = " + grouped(n) + " scores (" + human_bytes(4.0 * static_cast<double>(n)) + ")";
}

// The tile steps up to the current step by (query block, key block), and each query
// block's latest: only the blocks the grids show (the first N x NS tokens) are kept, so a
// long pass costs a frame no more than a short one.
struct TileSteps {
    std::map<std::pair<int, int>, const Step*> tiles;
    std::vector<const Step*> latest;
    int done = 0, total = 0;
};

// Every kept value of the tensor `name` of these steps: what one number format must fit.
std::vector<float> values_of(const std::vector<const Step*>& steps, const char* name) {
    std::vector<float> out;
    for (const Step* s : steps)
        if (const TensorRecord* t = s ? s->find(name) : nullptr) {
            const std::vector<float>& v = t->values();
            out.insert(out.end(), v.begin(), v.end());
        }
    return out;
}

TileSteps tile_steps(const Trace& tr, int step, std::int64_t N, std::int64_t NS, std::int64_t blk) {
    TileSteps ts;
    ts.latest.assign(static_cast<std::size_t>((N + blk - 1) / blk), nullptr);
    for (const Step& s : tr.steps) {
        if (s.op != Op::Tile) continue;
        ++ts.total;
        if (s.index > step) continue;
        ++ts.done;
        if (s.tile_q * blk >= N) continue;
        ts.latest[static_cast<std::size_t>(s.tile_q)] = &s;
        if (s.tile_k * blk < NS) ts.tiles[{s.tile_q, s.tile_k}] = &s;
    }
    return ts;
}

// The header line's start: which tile, how many computed and skipped, the block size.
std::string tiles_line(const Config& c, const Step& here, const TileSteps& ts, std::int64_t blk) {
    const std::int64_t skipped = c.query_blocks() * c.key_blocks() - c.tiles_run();
    std::string what;
    if (here.op == Op::Tile)
        what = "tile (" + std::to_string(here.tile_q) + ", " + std::to_string(here.tile_k) + "), " +
               std::to_string(ts.done) + " of " + std::to_string(ts.total) + " computed";
    else if (ts.done == 0)
        what = "the tiles come after the transpose: " + std::to_string(ts.total) + " to compute";
    else
        what = "all " + std::to_string(ts.total) + " tiles computed";
    if (skipped > 0) what += ", " + std::to_string(skipped) + " skipped above the diagonal";
    what += "; block " + std::to_string(blk);
    return what;
}

// What this frame's grids share.
struct TileView {
    const Config& c;
    const Step& here;
    const TileSteps& ts;
    bool current;  // the step on screen is a tile step
    std::int64_t sentence, N, NS, blk;
    ImDrawList* dl;
    float font, line_h, label_w, cell;
    float bound;  // one colour range for every score drawn
    int row_stride;
    ImU32 text_col, dim_col;
    float number_min;  // the smallest number drawn, px (presenter mode's)

    // Value of record t ([B, H, rows, cols] or [B, H, rows]) at (sentence, head, r, col).
    float value(const TensorRecord& t, int h, std::int64_t r, std::int64_t col) const {
        const std::int64_t rows = t.shape[2], cols = t.shape.size() == 4 ? t.shape[3] : 1;
        return t.values()[static_cast<std::size_t>(((sentence * c.heads + h) * rows + r) * cols + col)];
    }
};

// The memory strip: what flash holds (one tile per head) against split's whole grids, two
// bars to scale, each with its words on the same line.
void draw_memory_bars(const TileView& v, ImVec2 avail) {
    const Config& c = v.c;
    const float font = v.font, line_h = v.line_h;
    const std::int64_t copies = c.batch * c.heads;
    const std::int64_t T = c.num_tokens(), S = c.num_keys(), blk = v.blk;
    const double held = static_cast<double>(blk * blk), whole = static_cast<double>(T * S);
    const float bar_w = std::max(avail.x * 0.2f, 3 * font);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float bar_h = font * 0.6f, dy = (line_h - bar_h) * 0.5f;
    v.dl->AddRectFilled({p.x, p.y + dy}, {p.x + std::max(3.0f, bar_w * static_cast<float>(held / whole)), p.y + dy + bar_h},
                        head_color(0, 0.9f));
    const float words_w = avail.x - bar_w - font;
    const std::int64_t tile = blk * blk * copies, grid = T * S * copies;
    draw_label(v.dl, {p.x + bar_w + font * 0.5f, p.y}, v.text_col,
               first_fitting({"flash holds one tile: " + grid_words(blk, blk, copies),
                              "flash: one tile, " + grouped(tile) + " scores (" + human_bytes(4.0 * tile) + ")",
                              "flash: " + grouped(tile) + " scores"},
                             words_w));
    v.dl->AddRectFilled({p.x, p.y + line_h + dy}, {p.x + bar_w, p.y + line_h + dy + bar_h}, IM_COL32(200, 90, 80, 230));
    draw_label(v.dl, {p.x + bar_w + font * 0.5f, p.y + line_h}, v.dim_col,
               first_fitting({"split holds 2 grids, each " + grid_words(T, S, copies),
                              "split: 2 grids of " + grouped(grid) + " scores (" + human_bytes(4.0 * grid) + ")",
                              "split: 2 x " + grouped(grid) + " scores"},
                             words_w));
    ImGui::Dummy({avail.x, 2 * line_h});
}

// Head h's score grid from (x0, y0): the tiles' scores so far, the ghost of the rest, the
// skipped tiles dark; the tokens' labels left of it where `labelled` (the first grid of a row:
// the grids beside it share its rows).
void draw_scores(const TileView& v, int h, float x0, float y0, bool labelled) {
    const Config& c = v.c;
    const float cell = v.cell, font = v.font;
    const std::int64_t blk = v.blk;
    ImDrawList* dl = v.dl;
    std::vector<const Step*> tiles;
    for (const auto& [at, s] : v.ts.tiles) tiles.push_back(s);
    const CellText text = cell_text(values_of(tiles, "tile_scores"), cell - 1, cell - 1, "scores h" + std::to_string(h), 0,
                                     v.number_min);
    for (std::int64_t i = 0; i < v.N; ++i) {
        if (labelled && i % v.row_stride == 0)
            draw_label(dl, {x0 - v.label_w, y0 + i * cell + cell * 0.5f - font * 0.5f}, v.text_col,
                       fit_token(c.token_at(v.sentence, i), v.label_w - 6));
        const int qi = static_cast<int>(i / blk);
        for (std::int64_t j = 0; j < v.NS; ++j) {
            const int kj = static_cast<int>(j / blk);
            const ImVec2 p0(x0 + j * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
            if (!c.tile_runs(qi, kj)) {
                dl->AddRectFilled(p0, p1, kSkippedFill);
                continue;
            }
            const auto it = v.ts.tiles.find({qi, kj});
            const TensorRecord* t = it == v.ts.tiles.end() ? nullptr : it->second->find("tile_scores");
            if (!t || !t->has_values()) {  // to come (or not kept): the ghost of the grid
                dl->AddRect(p0, p1, IM_COL32(120, 120, 120, 110));
                continue;
            }
            const float x = v.value(*t, h, i - qi * blk, j - kj * blk);
            const ImU32 fill = std::isinf(x) ? kMaskedFill : diverging_color(v.bound > 0 ? x / v.bound : 0);
            dl->AddRectFilled(p0, p1, fill);
            cell_value(dl, p0, p1, text_on(fill), x, text, true);
        }
    }
}

// The tiles over the grid: skipped ones crossed out, the current one outlined.
void draw_tile_outlines(const TileView& v, float x0, float y0) {
    const float cell = v.cell;
    const std::int64_t blk = v.blk, N = v.N, NS = v.NS;
    for (std::int64_t qi = 0; qi * blk < N; ++qi)
        for (std::int64_t kj = 0; kj * blk < NS; ++kj) {
            const ImVec2 a(x0 + kj * blk * cell, y0 + qi * blk * cell);
            const ImVec2 b(x0 + std::min((kj + 1) * blk, NS) * cell - 1, y0 + std::min((qi + 1) * blk, N) * cell - 1);
            if (!v.c.tile_runs(qi, kj)) {
                v.dl->AddLine(a, b, IM_COL32(150, 110, 110, 200), 1.5f);
                v.dl->AddLine({a.x, b.y}, {b.x, a.y}, IM_COL32(150, 110, 110, 200), 1.5f);
            } else {
                v.dl->AddRect(a, b, IM_COL32(170, 170, 170, 160), 0, 0, 1.0f);
            }
            if (v.current && qi == v.here.tile_q && kj == v.here.tile_k)
                v.dl->AddRect({a.x - 2, a.y - 2}, {b.x + 2, b.y + 2}, IM_COL32(255, 255, 255, 255), 0, 0, 3.0f);
        }
}

// m and l of each row of head h after its latest tile so far, in two columns from xm.
void draw_running_stats(const AppState& st, const TileView& v, int h, float xm, float y0) {
    const float cell = v.cell;
    // The columns' names smaller where a cell is narrower than a letter, down to the smallest
    // label; past that "l" moves right of "m" rather than be cut.
    const float m_w = ImGui::CalcTextSize("m").x, font = ImGui::GetFontSize();
    const float size = m_w <= cell - 1 ? font : std::max(kSmallestLabel * font, font * (cell - 1) / m_w);
    // Each over the middle of its column where it fits in it.
    const float m_at = xm + std::max(0.0f, 0.5f * (cell - m_w * size / font));
    const float m_end = m_at + draw_label(v.dl, {m_at, y0 - v.line_h}, v.dim_col, "m", "", size).x;
    const float l_w = ImGui::CalcTextSize("l").x * size / font;
    draw_label(v.dl, {std::max(xm + cell + std::max(0.0f, 0.5f * (cell - l_w)), m_end + 1), y0 - v.line_h}, v.dim_col, "l", "", size);
    const CellText text[2] = {cell_text(values_of(v.ts.latest, "m"), cell - 1, cell - 1, "m h" + std::to_string(h), 0, v.number_min),
                              cell_text(values_of(v.ts.latest, "l"), cell - 1, cell - 1, "l h" + std::to_string(h), 0, v.number_min)};
    for (std::int64_t i = 0; i < v.N; ++i) {
        const int qi = static_cast<int>(i / v.blk);
        const Step* last = v.ts.latest[static_cast<std::size_t>(qi)];
        const TensorRecord* m = last ? last->find("m") : nullptr;
        const TensorRecord* l = last ? last->find("l") : nullptr;
        for (int k = 0; k < 2; ++k) {
            const TensorRecord* t = k == 0 ? m : l;
            const ImVec2 p0(xm + k * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
            if (!t || !t->has_values()) {
                v.dl->AddRect(p0, p1, IM_COL32(120, 120, 120, 110));
                continue;
            }
            const float x = v.value(*t, h, i - qi * v.blk, 0);
            const bool changed = v.current && last == &v.here;
            const ImU32 fill = changed ? head_color(h, 0.85f) : neutral_color(st.dark);
            v.dl->AddRectFilled(p0, p1, fill);
            cell_value(v.dl, p0, p1, text_on(fill), x, text[k], true);
        }
    }
}

// The line on what the tiles show: the step's tiles, and which sentence, tokens and heads.
std::string tiles_what(const AppState& st, std::int64_t N, std::int64_t NS) {
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    const Step& here = tr.steps[static_cast<std::size_t>(st.step)];
    std::string what = tiles_line(c, here, tile_steps(tr, st.step, N, NS, c.flash_block()), c.flash_block());
    if (c.batch > 1) what += ", sentence " + std::to_string(std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - 1));
    if (N < c.num_tokens() || NS < c.num_keys()) what += " (the first " + std::to_string(std::max(N, NS)) + " tokens)";
    if (c.heads > 4) what += ", heads 0-3 of " + std::to_string(c.heads);
    return what;
}

// Where the panel's parts stand in content `width` px wide and `room` px tall, as
// DrawFlashTiles() lays them out: the sentence slider with the line on what is shown beside
// it (or under it), kept as tall as the longest any step says; the memory bars where 10 lines
// of room are left; the grids, tiled in the rest.
struct TilesPlan {
    float grids_y = 0;  // the grids' top, px below the content's top
    bool bars = false;
    MapTiling tiling;
    float label_w = 0, legible = 0;
    int heads = 1;
};

TilesPlan plan_tiles(const AppState& st, float width, float room) {
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float font = ImGui::GetFontSize(), line_h = ImGui::GetTextLineHeightWithSpacing(), gap_y = style.ItemSpacing.y;
    const std::int64_t N = std::min<std::int64_t>(c.num_tokens(), 48), NS = std::min<std::int64_t>(c.num_keys(), 48);
    const std::int64_t blk = c.flash_block();
    TilesPlan p;
    // (ImGui places lines and sized items at whole pixels.)
    float x = c.batch > 1 && !st.document ? std::floor(4 * font) + style.ItemInnerSpacing.x + ImGui::CalcTextSize("sentence").x + style.ItemSpacing.x
                                          : 0.0f;
    float y = 0;
    const std::string what = tiles_what(st, N, NS);
    if (ImGui::CalcTextSize(what.c_str()).x > width - x) {  // a new line (an empty one where nothing stood before)
        y = std::floor((x > 0 ? ImGui::GetFrameHeight() : font) + gap_y);
        x = 0;
    }
    const float what_top = y, what_w = width - x;
    const float text_h = ImGui::CalcTextSize(what.c_str(), nullptr, false, what_w).y;
    y = std::floor(y + std::max(text_h, x > 0 ? ImGui::GetFrameHeight() : 0.0f) + gap_y);
    const float most = tr.steps.size() > 200 ? 0.0f : st.panels.tiles_line_h.of(steps_key(st.trace.get(), what_w), tr, [&](const Step& s) {
        return ImGui::CalcTextSize(tiles_line(c, s, tile_steps(tr, s.index, N, NS, blk), blk).c_str(), nullptr, false, what_w).y;
    });
    y = std::max(y, what_top + std::floor(most + gap_y));
    float avail_h = room - y;
    p.bars = avail_h >= 10 * line_h;
    if (p.bars) y = std::floor(y + 2 * line_h + gap_y), avail_h -= 2 * line_h;
    p.grids_y = y;
    p.heads = static_cast<int>(std::min<std::int64_t>(c.heads, 4));
    const std::int64_t sentence = std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - 1);
    float label_w = 0;
    for (std::int64_t i = 0; i < N; ++i)
        label_w = std::max(label_w, ImGui::CalcTextSize(c.token_at(sentence, i).substr(0, 8).c_str()).x);
    p.label_w = std::min(label_w, 6.0f * font) + 6;
    // m and l: two columns of cells after a gap of one cell; the grids of a row share the
    // first one's token labels.
    p.tiling = tile_maps(p.heads, NS + 3, width - p.label_w, avail_h, 0, 2 * line_h, font, N);
    // Legible: up to 4 tokens a number's size, up to 12 tokens 32 px drawn (the heatmaps' rule).
    p.legible = std::max(N, NS) <= 4 ? value_cell() : std::max(N, NS) <= 12 ? 34.0f : std::max(8.0f, font / 3);
    return p;
}

}  // namespace

PanelNeed MeasureFlashTiles(const AppState& st, ImVec2 panel, bool window_titled) {
    PanelNeed n;
    if (!st.trace || st.shapes_only || st.trace->config.mode != Mode::Flash || quiz_hides(st, st.step)) return n;
    if (const std::string when = heatmaps_off(st); !when.empty()) return heads_line_need(st, when, panel, window_titled);
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = std::max(panel.x - 2 * style.WindowPadding.x, 1.0f), top = heads_content_top(st, window_titled);
    const float line_h = ImGui::GetTextLineHeightWithSpacing(), font = ImGui::GetFontSize();
    const std::int64_t N = std::min<std::int64_t>(st.trace->config.num_tokens(), 48);
    const auto plan = [&](float h) { return plan_tiles(st, width, std::max(h - top - style.WindowPadding.y, 1.0f)); };
    const auto text_of = [&](const TilesPlan& p) {
        return top + p.grids_y + static_cast<float>(p.tiling.rows) * (2 * line_h + font) + 2 * line_h + style.WindowPadding.y;
    };
    // The least height whose grids have legible cells, found by halving between the text
    // alone and the column; more than the column by as much as the cells lack.
    const TilesPlan whole = plan(panel.y);
    const float rows = static_cast<float>(std::max(whole.tiling.rows, 1) * N);
    n.cell = whole.tiling.cell, n.legible = whole.legible;
    n.named = label_stride(std::clamp(whole.tiling.cell, 1.0f, 4.5f * font), font) == 1;  // as DrawFlashTiles names rows
    // The memory lines' shortest forms beside their bars (draw_memory_bars).
    const Config& c = st.trace->config;
    const std::int64_t copies = c.batch * c.heads, blk = c.flash_block();
    const float words = std::max(ImGui::CalcTextSize(("flash: " + grouped(blk * blk * copies) + " scores").c_str()).x,
                                 ImGui::CalcTextSize(("split: 2 x " + grouped(c.num_tokens() * c.num_keys() * copies) + " scores").c_str()).x);
    n.min_w = std::max(words + 4 * font, (words + font) / 0.8f) + 2 * style.WindowPadding.x + 2;
    if (whole.tiling.cell < whole.legible) {
        n.text_h = text_of(whole);
        n.need_h = panel.y + (whole.legible - whole.tiling.cell) * rows + 1;
        return n;
    }
    float lo = text_of(whole), hi = panel.y;
    for (int i = 0; i < 16 && hi - lo > 0.5f; ++i) {
        const float mid = 0.5f * (lo + hi);
        (plan(mid).tiling.cell >= whole.legible ? hi : lo) = mid;
    }
    n.text_h = text_of(plan(hi));
    n.need_h = std::ceil(hi) + 1;
    return n;
}

void DrawFlashTiles(AppState& st) {
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    const std::int64_t T = c.num_tokens(), S = c.num_keys(), blk = c.flash_block();
    const Step& here = tr.steps[static_cast<std::size_t>(st.step)];
    if (quiz_hides(st, st.step)) {
        ImGui::TextDisabled("predict the shape: the tiles show once the class has answered");
        return;
    }
    // Up to 48 tokens each way are drawn.
    const std::int64_t N = std::min<std::int64_t>(T, 48), NS = std::min<std::int64_t>(S, 48);
    const TileSteps ts = tile_steps(tr, st.step, N, NS, blk);
    const std::string what = tiles_what(st, N, NS);
    const std::int64_t sentence = std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - 1);
    const float content_top = ImGui::GetCursorPosY();
    SentenceSlider(st);
    if (ImGui::CalcTextSize(what.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
    const float what_top = ImGui::GetCursorPosY(), what_w = ImGui::GetContentRegionAvail().x;
    ImGui::PushTextWrapPos(0.0f);  // at the panel's edge: the line is told whole
    ImGui::TextDisabled("%s", what.c_str());
    ImGui::PopTextWrapPos();
    audit_last_item(what);
    // As many lines as the longest any step says (up to 200 steps), so that the tiles keep
    // their place from step to step.
    const float most = tr.steps.size() > 200 ? 0.0f : st.panels.tiles_line_h.of(steps_key(st.trace.get(), what_w), tr, [&](const Step& s) {
        return ImGui::CalcTextSize(tiles_line(c, s, tile_steps(tr, s.index, N, NS, blk), blk).c_str(), nullptr, false, what_w).y;
    });
    const float what_end = what_top + std::floor(most + ImGui::GetStyle().ItemSpacing.y);
    if (ImGui::GetCursorPosY() < what_end) ImGui::SetCursorPosY(what_end);

    const float font = ImGui::GetFontSize();
    const float line_h = ImGui::GetTextLineHeightWithSpacing();
    ImVec2 avail = room_left();  // the panel never scrolls
    TileView v{c, here, ts, here.op == Op::Tile, sentence, N, NS, blk, ImGui::GetWindowDrawList(), font, line_h, 0, 0, 0, 0,
               ImGui::GetColorU32(ImGuiCol_Text), ImGui::GetColorU32(ImGuiCol_TextDisabled), number_size_min(st.presenting)};
    // The memory bars where the panel has 10 lines of room (the grids first).
    if (avail.y >= 10 * line_h) {
        draw_memory_bars(v, avail);
        avail.y -= 2 * line_h;
    }
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    // The layout measured the panel before placing it: the audit holds the two alike.
    if (frame_watch().watching() && !st.document && !st.presenting) {
        const float drawn = ImGui::GetCursorPosY() - content_top;
        const TilesPlan p = plan_tiles(st, ImGui::GetWindowWidth() - 2 * ImGui::GetStyle().WindowPadding.x,
                                       ImGui::GetWindowHeight() - content_top - ImGui::GetStyle().WindowPadding.y);
        if (std::abs(p.grids_y - drawn) > 1) frame_watch().mismeasured("the tiles' top", p.grids_y, drawn);
    }
    // Up to four heads (the first, said in the line above), each a grid with its m and l columns beside it.
    const int heads = static_cast<int>(std::min<std::int64_t>(c.heads, 4));
    float label_w = 0;
    for (std::int64_t i = 0; i < N; ++i)
        label_w = std::max(label_w, ImGui::CalcTextSize(c.token_at(sentence, i).substr(0, 8).c_str()).x);
    v.label_w = label_w = std::min(label_w, 6.0f * font) + 6;
    // m and l: two columns of cells after a gap of one cell; the grids of a row share the
    // first one's token labels.
    const MapTiling tiling = tile_maps(heads, NS + 3, avail.x - label_w, avail.y, 0, 2 * line_h, font, N);
    // As large as the panel allows, never more (nothing scrolls): numbers where they fit.
    const float cell = v.cell = std::clamp(tiling.cell, 1.0f, 4.5f * font);
    v.row_stride = label_stride(cell, font);
    for (const auto& [key, s] : ts.tiles)
        if (const TensorRecord* t = s->find("tile_scores"))
            for (float x : t->values())
                if (std::isfinite(x)) v.bound = std::max(v.bound, std::fabs(x));

    if (tiling.cell < 2) {  // not even 2 px cells fit: say so rather than draw past the edge
        ImGui::TextDisabled("(no room for the tiles: a taller panel shows them)");
        return;
    }
    const float map_w = (NS + 3) * cell + font, map_h = 2 * line_h + N * cell + font;
    float bottom = origin.y;
    for (int h = 0; h < heads; ++h) {
        const int col = h % tiling.columns, row = h / tiling.columns;
        const float x0 = origin.x + label_w + col * map_w, y_title = origin.y + row * map_h, y0 = y_title + line_h;
        // The title, or "hK" where it does not fit the grid (the head is always named).
        const std::string title = "head " + std::to_string(h);
        draw_label(v.dl, {x0, y_title}, head_ink(h), ImGui::CalcTextSize(title.c_str()).x <= NS * cell ? title : "h" + std::to_string(h));
        draw_scores(v, h, x0, y0, col == 0);
        draw_tile_outlines(v, x0, y0);
        draw_running_stats(st, v, h, x0 + (NS + 1) * cell, y0);
        bottom = std::max(bottom, y0 + N * cell + font);
    }

    ImGui::Dummy({std::min(avail.x, label_w + tiling.columns * map_w), bottom - origin.y});
}

}  // namespace headsplit::gui
