// Flash mode's tiles, where the other modes show heatmaps: per head, the T x S score grid that
// flash never holds, drawn as a ghost; the tiles computed so far filled with the scores each
// tile step recorded, the current tile outlined, tiles above the diagonal crossed out as
// skipped. Beside each grid the running max m and sum l of every row as they stand after
// the current step; below, the memory strip: one tile held per head against split's T x S.
#include <algorithm>
#include <cmath>
#include <map>

#include <imgui.h>

#include "layout.hpp"
#include "panels.hpp"
#include "style.hpp"

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

}  // namespace

void DrawFlashTiles(AppState& st) {
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    const std::int64_t T = c.num_tokens(), S = c.num_keys(), blk = c.flash_block();
    const Step& here = tr.steps[static_cast<std::size_t>(st.step)];
    if (quiz_hides(st, st.step)) {
        ImGui::TextDisabled("predict the shape: the tiles show once the class has answered");
        return;
    }
    // The tile steps by (query block, key block) up to the current step, and each query
    // block's latest: only the blocks the grids show (the first 48 tokens) are kept, so a
    // long pass costs a frame no more than a short one.
    const std::int64_t N = std::min<std::int64_t>(T, 48), NS = std::min<std::int64_t>(S, 48);
    std::map<std::pair<int, int>, const Step*> tiles;
    std::vector<const Step*> latest(static_cast<std::size_t>((N + blk - 1) / blk), nullptr);
    int done = 0, total = 0;
    for (const Step& s : tr.steps) {
        if (s.op != Op::Tile) continue;
        ++total;
        if (s.index > st.step) continue;
        ++done;
        if (s.tile_q * blk >= N) continue;
        latest[static_cast<std::size_t>(s.tile_q)] = &s;
        if (s.tile_k * blk < NS) tiles[{s.tile_q, s.tile_k}] = &s;
    }
    const bool current = here.op == Op::Tile;
    const std::int64_t skipped = c.query_blocks() * c.key_blocks() - c.tiles_run();
    std::string what;
    if (current)
        what = "tile (" + std::to_string(here.tile_q) + ", " + std::to_string(here.tile_k) + "), " +
               std::to_string(done) + " of " + std::to_string(total) + " computed";
    else if (done == 0)
        what = "the tiles come after the transpose: " + std::to_string(total) + " to compute";
    else
        what = "all " + std::to_string(total) + " tiles computed";
    if (skipped > 0) what += ", " + std::to_string(skipped) + " skipped above the diagonal";
    what += "; block " + std::to_string(blk);
    const std::int64_t sentence = std::clamp<std::int64_t>(st.heat_sentence, 0, c.batch - 1);
    SentenceSlider(st);
    if (c.batch > 1) what += ", sentence " + std::to_string(sentence);
    if (N < T || NS < S) what += " (the first " + std::to_string(std::max(N, NS)) + " tokens)";
    if (ImGui::CalcTextSize(what.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
    ImGui::TextDisabled("%s", what.c_str());
    audit_last_item(what);

    const float font = ImGui::GetFontSize();
    const float line_h = ImGui::GetTextLineHeightWithSpacing();
    ImVec2 avail = ImGui::GetContentRegionAvail();
    if (ImGui::GetScrollMaxY() <= 0) avail.x -= ImGui::GetStyle().ScrollbarSize;
    if (ImGui::GetScrollMaxX() <= 0) avail.y -= ImGui::GetStyle().ScrollbarSize;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text), dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    // The memory strip: what flash holds (one tile per head) against split's whole grids, two
    // bars to scale, each with its words on the same line.
    {
        const std::int64_t copies = c.batch * c.heads;
        const double held = static_cast<double>(blk * blk), whole = static_cast<double>(T * S);
        const float bar_w = std::max(avail.x * 0.2f, 3 * font);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float bar_h = font * 0.6f, dy = (line_h - bar_h) * 0.5f;
        dl->AddRectFilled({p.x, p.y + dy}, {p.x + std::max(3.0f, bar_w * static_cast<float>(held / whole)), p.y + dy + bar_h},
                          head_color(0, 0.9f));
        draw_label(dl, {p.x + bar_w + font * 0.5f, p.y}, text_col,
                   fit_text("flash holds one tile: " + grid_words(blk, blk, copies), avail.x - bar_w - font));
        dl->AddRectFilled({p.x, p.y + line_h + dy}, {p.x + bar_w, p.y + line_h + dy + bar_h}, IM_COL32(200, 90, 80, 230));
        draw_label(dl, {p.x + bar_w + font * 0.5f, p.y + line_h}, dim_col,
                   fit_text("split holds 2 grids, each " + grid_words(T, S, copies), avail.x - bar_w - font));
        ImGui::Dummy({avail.x, 2 * line_h});
    }
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    avail.y -= 2 * line_h;
    // Up to four heads (the first), each a grid with its m and l columns beside it.
    const int heads = static_cast<int>(std::min<std::int64_t>(c.heads, 4));
    float label_w = 0;
    for (std::int64_t i = 0; i < N; ++i)
        label_w = std::max(label_w, ImGui::CalcTextSize(c.token_at(sentence, i).substr(0, 8).c_str()).x);
    label_w = std::min(label_w, 6.0f * font) + 6;
    // m and l: two columns of cells after a gap of one cell.
    const MapTiling tiling = tile_maps(heads, std::max(N, NS) + 3, avail.x, avail.y, label_w,
                                       2 * line_h, font);
    const float floor_px = std::max(N, NS) <= 4 ? value_cell() : std::max(N, NS) <= 12 ? 33.0f : 6.0f;
    const float cell = std::clamp(tiling.cell, floor_px, std::max(floor_px, 4.5f * font));
    const int row_stride = label_stride(cell, font);

    // One colour range for every score drawn.
    float bound = 0;
    for (const auto& [key, s] : tiles)
        if (const TensorRecord* t = s->find("tile_scores"))
            for (float v : t->data)
                if (std::isfinite(v)) bound = std::max(bound, std::fabs(v));
    const std::int64_t H = c.heads;
    // Value of record t ([B, H, rows, cols] or [B, H, rows]) at (sentence, head, r, col).
    auto value = [&](const TensorRecord& t, int h, std::int64_t r, std::int64_t col) {
        const std::int64_t rows = t.shape[2], cols = t.shape.size() == 4 ? t.shape[3] : 1;
        return t.data[static_cast<std::size_t>(((sentence * H + h) * rows + r) * cols + col)];
    };
    const float map_w = label_w + (N + 3) * cell + font, map_h = 2 * line_h + N * cell + font;
    float bottom = origin.y;
    for (int h = 0; h < heads; ++h) {
        const int col = h % tiling.columns, row = h / tiling.columns;
        const float x0 = origin.x + col * map_w + label_w, y_title = origin.y + row * map_h, y0 = y_title + line_h;
        draw_label(dl, {x0, y_title}, head_color(h), fit_text("head " + std::to_string(h), NS * cell));
        for (std::int64_t i = 0; i < N; ++i) {
            if (i % row_stride == 0)
                draw_label(dl, {x0 - label_w, y0 + i * cell + cell * 0.5f - font * 0.5f}, text_col,
                           fit_text(c.token_at(sentence, i), label_w - 6));
            const int qi = static_cast<int>(i / blk);
            for (std::int64_t j = 0; j < NS; ++j) {
                const int kj = static_cast<int>(j / blk);
                const ImVec2 p0(x0 + j * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
                if (!c.tile_runs(qi, kj)) {
                    dl->AddRectFilled(p0, p1, kSkippedFill);
                    continue;
                }
                const auto it = tiles.find({qi, kj});
                const TensorRecord* t = it == tiles.end() ? nullptr : it->second->find("tile_scores");
                if (!t || t->data.empty()) {  // to come (or not kept): the ghost of the grid
                    dl->AddRect(p0, p1, IM_COL32(120, 120, 120, 110));
                    continue;
                }
                const float v = value(*t, h, i - qi * blk, j - kj * blk);
                const ImU32 fill = std::isinf(v) ? kMaskedFill : diverging_color(bound > 0 ? v / bound : 0);
                dl->AddRectFilled(p0, p1, fill);
                cell_value(dl, p0, p1, text_on(fill), v, true);
            }
        }
        // The tiles: skipped ones crossed out, the current one outlined.
        for (std::int64_t qi = 0; qi * blk < N; ++qi)
            for (std::int64_t kj = 0; kj * blk < NS; ++kj) {
                const ImVec2 a(x0 + kj * blk * cell, y0 + qi * blk * cell);
                const ImVec2 b(x0 + std::min((kj + 1) * blk, NS) * cell - 1, y0 + std::min((qi + 1) * blk, N) * cell - 1);
                if (!c.tile_runs(qi, kj)) {
                    dl->AddLine(a, b, IM_COL32(150, 110, 110, 200), 1.5f);
                    dl->AddLine({a.x, b.y}, {b.x, a.y}, IM_COL32(150, 110, 110, 200), 1.5f);
                } else {
                    dl->AddRect(a, b, IM_COL32(170, 170, 170, 160), 0, 0, 1.0f);
                }
                if (current && qi == here.tile_q && kj == here.tile_k)
                    dl->AddRect({a.x - 2, a.y - 2}, {b.x + 2, b.y + 2}, IM_COL32(255, 255, 255, 255), 0, 0, 3.0f);
            }
        // m and l of each row after its latest tile so far.
        const float xm = x0 + (NS + 1) * cell;
        draw_label(dl, {xm, y0 - line_h}, dim_col, fit_text("m", cell));
        draw_label(dl, {xm + cell, y0 - line_h}, dim_col, fit_text("l", cell));
        for (std::int64_t i = 0; i < N; ++i) {
            const int qi = static_cast<int>(i / blk);
            const Step* last = latest[static_cast<std::size_t>(qi)];
            const TensorRecord* m = last ? last->find("m") : nullptr;
            const TensorRecord* l = last ? last->find("l") : nullptr;
            for (int k = 0; k < 2; ++k) {
                const TensorRecord* t = k == 0 ? m : l;
                const ImVec2 p0(xm + k * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
                if (!t || t->data.empty()) {
                    dl->AddRect(p0, p1, IM_COL32(120, 120, 120, 110));
                    continue;
                }
                const float v = value(*t, h, i - qi * blk, 0);
                const bool changed = current && last == &here;
                const ImU32 fill = changed ? head_color(h, 0.85f) : neutral_color(st.dark);
                dl->AddRectFilled(p0, p1, fill);
                cell_value(dl, p0, p1, text_on(fill), v, true);
            }
        }
        bottom = std::max(bottom, y0 + N * cell + font);
    }

    ImGui::Dummy({std::max(avail.x, tiling.columns * map_w), bottom - origin.y});
}

}  // namespace headsplit::gui
