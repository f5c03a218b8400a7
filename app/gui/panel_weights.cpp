// Weight split: W_query in math layout (D_in x D_out, x @ W), its column blocks coloured by
// head; in loop mode the separate per-head matrices beside it; and the matmul counts of
// the three modes for this shape.
#include <algorithm>
#include <map>

#include <imgui.h>

#include "headsplit/engine.hpp"
#include "panels.hpp"
#include "style.hpp"

namespace headsplit::gui {

namespace {

struct Counts {
    std::int64_t projections = 0, total = 0;
};

// Matmul counts per mode from the engine's own walk through the steps (plan(): no compute).
Counts counts(Config c, Mode m) {
    static std::map<std::string, Counts> cache;
    c.mode = m;
    const std::string key = std::to_string(c.num_tokens()) + "/" + std::to_string(c.d_in) + "/" + std::to_string(c.d_out) +
                            "/" + std::to_string(c.heads) + "/" + std::to_string(static_cast<int>(m)) + "/" +
                            std::to_string(c.out_proj) + std::to_string(c.causal) + std::to_string(c.dropout > 0);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    Counts n;
    const Trace t = plan(c);
    for (const Step& s : t.steps) {
        n.total += s.matmuls;
        if (s.op == Op::Project) n.projections += s.matmuls;
    }
    if (cache.size() > 256) cache.clear();
    return cache[key] = n;
}

}  // namespace

void DrawWeightSplit(AppState& st) {
    if (!st.trace) return;
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    const std::int64_t Di = c.d_in, D = c.d_out, H = c.heads, hd = c.head_dim();

    // Matmul counts, side by side.
    if (ImGui::BeginTable("counts", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
        ImGui::TableSetupColumn("mode");
        ImGui::TableSetupColumn("Q/K/V projection matmuls");
        ImGui::TableSetupColumn("all matmuls");
        ImGui::TableSetupColumn("projection weight shape");
        ImGui::TableHeadersRow();
        for (Mode m : {Mode::Loop, Mode::Split, Mode::Fused}) {
            const Counts n = counts(c, m);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextColored(m == c.mode ? ImVec4(1, 0.85f, 0.3f, 1) : ImGui::GetStyleColorVec4(ImGuiCol_Text), "%s",
                               mode_name(m));
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(n.projections));
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(n.total));
            ImGui::TableNextColumn();
            if (m == Mode::Loop) ImGui::Text("3 x %lld of %lld x %lld", static_cast<long long>(H), static_cast<long long>(Di), static_cast<long long>(hd));
            else if (m == Mode::Split) ImGui::Text("3 of %lld x %lld", static_cast<long long>(Di), static_cast<long long>(D));
            else ImGui::Text("1 of %lld x %lld", static_cast<long long>(Di), static_cast<long long>(3 * D));
        }
        ImGui::EndTable();
    }
    ImGui::TextDisabled("%s", parameter_line(c).c_str());

    // W_Q in math layout [D_in, D_out]: column j belongs to head j / head_dim.
    const std::int64_t rows = std::min<std::int64_t>(Di, 12), cols = std::min<std::int64_t>(D, 48);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool loop = c.mode == Mode::Loop;
    const float room = loop ? avail.x * 0.48f : avail.x - 20;
    float cell = std::min(room / (cols + 1), (avail.y - 3 * ImGui::GetTextLineHeightWithSpacing()) / (rows + 1));
    cell = std::clamp(cell, 3.0f, 3.2f * ImGui::GetFontSize());
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const bool text = cell_fits_number(cell - 1) && !tr.weights.w_query.empty();
    dl->AddText(o, ImGui::GetColorU32(ImGuiCol_Text),
                ("W_query (" + std::to_string(Di) + " x " + std::to_string(D) + "): head h owns columns h*" +
                 std::to_string(hd) + " .. (h+1)*" + std::to_string(hd) + "-1").c_str());
    const float y0 = o.y + ImGui::GetTextLineHeightWithSpacing();
    auto weight = [&](std::int64_t i, std::int64_t j) {  // math layout W[i][j] = nn.Linear weight[j][i]
        return tr.weights.w_query.empty() ? 0.0f : tr.weights.w_query[static_cast<std::size_t>(j * Di + i)];
    };
    for (std::int64_t j = 0; j < cols; ++j) {
        const int h = static_cast<int>(j / hd);
        for (std::int64_t i = 0; i < rows; ++i) {
            const ImVec2 p0(o.x + j * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
            const ImU32 col = head_color(h, 0.75f);
            dl->AddRectFilled(p0, p1, col, 2.0f);
            if (text) cell_label(dl, p0, p1, text_on(col), format_cell(weight(i, j)));
        }
        if (j % hd == 0) dl->AddText({o.x + j * cell, y0 + rows * cell + 2}, head_color(h), ("h" + std::to_string(h)).c_str());
    }
    if (loop) {
        // The same numbers as H separate D_in x head_dim matrices, one per head.
        const float x1 = o.x + cols * cell + 30;
        dl->AddText({x1, o.y}, ImGui::GetColorU32(ImGuiCol_Text), "loop mode: one small W_query per head");
        float x = x1;
        for (std::int64_t h = 0; h < std::min<std::int64_t>(H, 6); ++h) {
            for (std::int64_t d = 0; d < std::min<std::int64_t>(hd, 16); ++d)
                for (std::int64_t i = 0; i < rows; ++i) {
                    const ImVec2 p0(x + d * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
                    dl->AddRectFilled(p0, p1, head_color(static_cast<int>(h), 0.75f), 2.0f);
                    if (text) cell_label(dl, p0, p1, text_on(head_color(static_cast<int>(h), 0.75f)), format_cell(weight(i, h * hd + d)));
                }
            dl->AddText({x, y0 + rows * cell + 2}, head_color(static_cast<int>(h)), ("W_q" + std::to_string(h)).c_str());
            x += std::min<std::int64_t>(hd, 16) * cell + cell;
        }
    }
    ImGui::Dummy({avail.x, rows * cell + 3 * ImGui::GetTextLineHeightWithSpacing()});
}

}  // namespace headsplit::gui
