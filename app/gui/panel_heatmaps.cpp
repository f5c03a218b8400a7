// Heatmaps: one T x T map per head for the score steps (scores, mask, scale, softmax,
// dropout), token labels on both axes, a colour legend, -inf marked, values on hover.
// At other steps it shows the attention weights the context was computed from.
#include <algorithm>
#include <cmath>

#include <imgui.h>

#include "panels.hpp"
#include "style.hpp"

namespace headsplit::gui {

namespace {

bool is_grid(Op op) {
    return op == Op::Scores || op == Op::Mask || op == Op::Scale || op == Op::Softmax || op == Op::Dropout;
}

// The grid steps to show: the current one if it is one, else every head's final weights.
std::vector<const Step*> grids_for(const Trace& tr, int step) {
    const Step& s = tr.steps[step];
    if (is_grid(s.op)) return {&s};
    // The weights each context step actually used (dropout's when there is one): its links.
    std::vector<const Step*> out;
    for (const Step& g : tr.steps) {
        if (g.op != Op::Context || g.tensors.empty() || g.tensors.back().from.empty()) continue;
        if (const Step* w = tr.source_step(g.tensors.back().from.front())) out.push_back(w);
    }
    return out;
}

}  // namespace

void DrawHeatmaps(AppState& st) {
    if (!st.trace || st.shapes_only) {
        ImGui::TextDisabled("no values to draw");
        return;
    }
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    const std::vector<const Step*> grids = grids_for(tr, st.step);
    if (grids.empty()) return;
    const bool weights = grids.front()->op == Op::Softmax || grids.front()->op == Op::Dropout;
    if (!is_grid(tr.steps[st.step].op))
        ImGui::TextDisabled("attention weights of each head (step %d); step to scores .. softmax to follow them", grids.front()->index);

    // Each map: [T, T] for one head. Batched steps hold all heads, loop steps one each.
    struct Map {
        const Step* step;
        const TensorRecord* t;
        int head;
        std::int64_t block;
    };
    std::vector<Map> maps;
    for (const Step* g : grids) {
        const TensorRecord* t = &g->tensors.back();  // the step's result (dropout records its mask first)
        if (t->shape.size() == 4)
            for (std::int64_t h = 0; h < t->shape[1]; ++h) maps.push_back({g, t, static_cast<int>(h), h});
        else
            maps.push_back({g, t, g->head, 0});
    }
    const std::int64_t T = c.num_tokens();
    const std::int64_t shown = std::min<std::int64_t>(T, 24);
    const std::size_t max_maps = 6;
    float lo = 0, hi = 0;
    for (const Map& m : maps)
        for (std::int64_t i = 0; i < T * T; ++i) {
            const float v = m.t->data[m.block * T * T + i];
            if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
        }
    const float bound = std::max(std::fabs(lo), std::fabs(hi));

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float label = 4.5f * ImGui::GetFontSize();
    const std::size_t count = std::min(maps.size(), max_maps);
    const float line_h = ImGui::GetTextLineHeightWithSpacing();
    // title line, the grid, the key names, the legend
    float cell = std::min((avail.x / count - label - 12) / shown, (avail.y - 3.6f * line_h) / shown);
    cell = std::clamp(cell, 3.0f, 3.5f * ImGui::GetFontSize());
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool text = cell_fits_number(cell - 1);

    for (std::size_t mi = 0; mi < count; ++mi) {
        const Map& m = maps[mi];
        const float x0 = origin.x + mi * (shown * cell + label + 12) + label;
        const float y0 = origin.y + line_h;
        const std::string title = "head " + std::to_string(m.head);
        dl->AddText({x0, origin.y}, head_color(m.head), title.c_str());
        for (std::int64_t i = 0; i < shown; ++i) {
            std::string name = c.tokens[i];
            if (name.size() > 7) name = name.substr(0, 6) + ".";
            if (mi == 0 || count <= 3)
                dl->AddText({x0 - label + 2, y0 + i * cell + cell * 0.5f - ImGui::GetFontSize() * 0.5f},
                            ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
            // key tokens along the bottom, every few when crowded
            // key tokens along the bottom, cut to the column's width
            const std::size_t fit = static_cast<std::size_t>(cell / (ImGui::GetFontSize() * 0.62f));
            if (fit >= 1)
                dl->AddText({x0 + i * cell + 2, y0 + shown * cell + 2}, ImGui::GetColorU32(ImGuiCol_TextDisabled),
                            c.tokens[i].substr(0, fit).c_str());
            for (std::int64_t j = 0; j < shown; ++j) {
                const float v = m.t->data[m.block * T * T + i * T + j];
                const ImVec2 p0(x0 + j * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
                ImU32 fill;
                if (std::isinf(v)) {
                    fill = IM_COL32(35, 35, 35, 255);
                    dl->AddRectFilled(p0, p1, fill);
                    dl->AddLine(p0, p1, IM_COL32(120, 120, 120, 255), 1.5f);  // hatched: masked
                } else {
                    fill = weights ? sequential_color(v) : diverging_color(bound > 0 ? v / bound : 0);
                    dl->AddRectFilled(p0, p1, fill);
                }
                if (text) cell_label(dl, p0, p1, std::isinf(v) ? IM_COL32(200, 200, 200, 255) : text_on(fill), format_cell(v));
                if (mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y && ImGui::IsWindowHovered()) {
                    dl->AddRect(p0, p1, IM_COL32(255, 255, 255, 255), 0, 0, 2.5f);
                    ImGui::SetTooltip("head %d: \"%s\" -> \"%s\" = %s", m.head, c.tokens[i].c_str(), c.tokens[j].c_str(),
                                      format_cell(v).c_str());
                    const int tensor = static_cast<int>(m.t - &m.step->tensors[0]);
                    st.hover = Hover{true, m.step->index, tensor, m.block * T * T + i * T + j};
                }
            }
        }
    }
    // Legend: the colour scale with its range, and the -inf swatch.
    const float ly = origin.y + line_h + shown * cell + line_h + 4;
    const float lw = std::min(avail.x * 0.4f, 260.0f * st.font_scale);
    for (int i = 0; i < 64; ++i) {
        const float f = i / 63.0f;
        const ImU32 col = weights ? sequential_color(f) : diverging_color(f * 2 - 1);
        dl->AddRectFilled({origin.x + label + f * lw, ly}, {origin.x + label + f * lw + lw / 63 + 1, ly + 14}, col);
    }
    const std::string lo_s = weights ? "0" : format_cell(-bound), hi_s = weights ? "1" : format_cell(bound);
    dl->AddText({origin.x + 4, ly - 2}, ImGui::GetColorU32(ImGuiCol_Text), lo_s.c_str());
    dl->AddText({origin.x + label + lw + 6, ly - 2}, ImGui::GetColorU32(ImGuiCol_Text), hi_s.c_str());
    dl->AddRectFilled({origin.x + label + lw + 60, ly}, {origin.x + label + lw + 74, ly + 14}, IM_COL32(35, 35, 35, 255));
    dl->AddText({origin.x + label + lw + 80, ly - 2}, ImGui::GetColorU32(ImGuiCol_Text), "-inf (masked)");
    if (maps.size() > count)
        dl->AddText({origin.x + label, ly + 18}, ImGui::GetColorU32(ImGuiCol_TextDisabled),
                    ("+" + std::to_string(maps.size() - count) + " more heads not drawn").c_str());
    ImGui::Dummy({avail.x, ly + 40 - origin.y});
}

}  // namespace headsplit::gui
