// Weight split: W_query in math layout (D_in x D_out, x @ W), its column blocks coloured by
// head; in loop mode the separate per-head matrices beside it; and the matmul counts of
// the three modes for this shape.
#include <algorithm>
#include <map>

#include <imgui.h>

#include "headsplit/engine/engine.hpp"
#include "gui/view/layout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

std::string thousands(std::int64_t v) { return grouped(v); }

// Matmul counts of loop, split and fused, side by side (counted with the trace, off the frame).
void draw_counts(const std::vector<ModeCount>& counts, const Config& c) {
    const std::int64_t Di = c.d_in, D = c.d_out, H = c.heads, hd = c.head_dim();
    if (ImGui::BeginTable("counts", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
        ImGui::TableSetupColumn("mode");
        ImGui::TableSetupColumn("Q/K/V projection matmuls");
        ImGui::TableSetupColumn("all matmuls");
        ImGui::TableSetupColumn("projection weight shape");
        ImGui::TableHeadersRow();
        for (const ModeCount& n : counts) {
            const Mode m = n.mode;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextColored(m == c.mode ? ImVec4(1, 0.85f, 0.3f, 1) : ImGui::GetStyleColorVec4(ImGuiCol_Text), "%s",
                               mode_name(m));
            if (!n.refused.empty()) {
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", n.refused.c_str());
                ImGui::TableNextColumn();
                ImGui::TextDisabled("-");
                ImGui::TableNextColumn();
                ImGui::TextDisabled("-");
                ImGui::TableNextColumn();
                ImGui::TextDisabled("not with this configuration (hover the mode: why)");
                continue;
            }
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(n.projections));
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(n.total));
            ImGui::TableNextColumn();
            const auto ll = [](std::int64_t v) { return static_cast<long long>(v); };
            if (m == Mode::Loop) ImGui::Text("3 x %lld of %lld x %lld", ll(H), ll(Di), ll(hd));
            else if (m == Mode::Split && !c.grouped() && !c.cross()) ImGui::Text("3 of %lld x %lld", ll(Di), ll(D));
            else if (m == Mode::Split)
                ImGui::Text("%lld x %lld, 2 of %lld x %lld", ll(Di), ll(D), ll(c.key_dim()), ll(c.kv_width()));
            else ImGui::Text("1 of %lld x %lld", ll(Di), ll(D + 2 * c.kv_width()));
        }
        ImGui::EndTable();
    }
}

// What sharing keys and values saves: MHA, this configuration's GQA, MQA side by side.
void draw_kv_sharing(const Config& c) {
    if (c.heads > 1 && ImGui::BeginTable("kv", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
        const std::string all_layers = c.layers > 1 ? std::to_string(c.layers) + " layers, fp16" : "";
        ImGui::TableSetupColumn("KV heads");
        ImGui::TableSetupColumn("W_key + W_value");
        ImGui::TableSetupColumn("KV cache / token (1 layer, fp32)");
        ImGui::TableSetupColumn(all_layers.c_str());
        ImGui::TableHeadersRow();
        std::vector<std::int64_t> kvs{c.heads};
        if (c.grouped() && c.kv_head_count() > 1) kvs.push_back(c.kv_head_count());
        kvs.push_back(1);
        for (std::int64_t kv : kvs) {
            Config v = c;
            v.kv_heads = kv == c.heads ? 0 : kv;
            const ParamCounts p = attention_params(v);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            const std::string name = std::to_string(kv) + (kv == c.heads ? " (MHA)" : kv == 1 ? " (MQA)" : " (GQA)");
            ImGui::TextColored(kv == c.kv_head_count() ? ImVec4(1, 0.85f, 0.3f, 1) : ImGui::GetStyleColorVec4(ImGuiCol_Text),
                               "%s", name.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(thousands(p.key + p.value).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted((thousands(kv_cache_bytes_per_token(v)) + " bytes").c_str());
            ImGui::TableNextColumn();
            if (c.layers > 1) ImGui::TextUnformatted(human_bytes(static_cast<double>(model_kv_cache_bytes_per_token(v))).c_str());
        }
        ImGui::EndTable();
    }
}

// W_Q in math layout [D_in, D_out]: column j belongs to head j / head_dim. Cells as large as
// the panel allows; floors, below which the panel scrolls: the size that shows a number up to
// D_out = 8, 12 px up to 64, 3 px beyond. Loop mode adds each head's own matrix under its
// block of columns.
void draw_query_weight(const Trace& tr) {
    const Config& c = tr.config;
    const std::int64_t Di = c.d_in, D = c.d_out, hd = c.head_dim();
    const std::int64_t rows = std::min<std::int64_t>(Di, 12), cols = std::min<std::int64_t>(D, 64);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool loop = c.mode == Mode::Loop;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    // Loop mode draws each head's own matrix under its block of columns: twice the rows.
    const float grid_rows = loop ? 2.0f * rows + 1 : static_cast<float>(rows);
    float cell = std::min(avail.x / (cols + 1), (avail.y - 4 * line) / (grid_rows + 1));
    const float floor_px = D <= 8 ? value_cell() : D <= 64 ? 12.0f : 3.0f;  // the teaching sizes show every number
    cell = std::clamp(cell, floor_px, std::max(floor_px, 3.2f * ImGui::GetFontSize()));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const bool text = !tr.weights.w_query.empty();
    float right = o.x + cols * cell;
    auto label = [&](ImVec2 pos, ImU32 col, const std::string& t) {
        right = std::max(right, pos.x + draw_label(dl, pos, col, t).x);
    };
    label(o, ImGui::GetColorU32(ImGuiCol_Text),
          "W_query (" + std::to_string(Di) + " x " + std::to_string(D) + "): head h owns columns h*" + std::to_string(hd) +
              " .. (h+1)*" + std::to_string(hd) + "-1" + (D > cols ? " (the first " + std::to_string(cols) + " shown)" : ""));
    const float y0 = o.y + line;
    auto weight = [&](std::int64_t i, std::int64_t j) {  // math layout W[i][j] = nn.Linear weight[j][i]
        return tr.weights.w_query.empty() ? 0.0f : tr.weights.w_query[static_cast<std::size_t>(j * Di + i)];
    };
    // One number format for every weight drawn, or none.
    std::vector<float> shown;
    for (std::int64_t j = 0; j < cols && text; ++j)
        for (std::int64_t i = 0; i < rows; ++i) shown.push_back(weight(i, j));
    const CellText numbers = cell_text(shown, cell - 1, cell - 1, "W_query");
    auto block = [&](float y, std::int64_t j_first, std::int64_t j_last) {  // columns [first, last) at their own x
        for (std::int64_t j = j_first; j < j_last; ++j) {
            const int h = static_cast<int>(j / hd);
            for (std::int64_t i = 0; i < rows; ++i) {
                const ImVec2 p0(o.x + j * cell, y + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
                const ImU32 col = head_color(h, 0.75f);
                dl->AddRectFilled(p0, p1, col, 2.0f);
                if (text) cell_value(dl, p0, p1, text_on(col), weight(i, j), numbers);
            }
        }
    };
    block(y0, 0, cols);
    // Head labels under their blocks: every k-th head when a block is narrower than its label.
    const std::int64_t heads_shown = (cols + hd - 1) / hd;
    const float block_w = hd * cell;
    const int stride = label_stride(block_w, ImGui::CalcTextSize(("h" + std::to_string(heads_shown - 1)).c_str()).x + 6);
    for (std::int64_t h = 0; h < heads_shown; h += stride)
        label({o.x + h * block_w, y0 + rows * cell + 2}, head_color(static_cast<int>(h)),
              fit_text("h" + std::to_string(h), stride * block_w - 4));
    float y_end = y0 + rows * cell + line;
    if (loop) {
        // The same numbers as H separate D_in x head_dim matrices, one per head, each under
        // its own block of columns.
        const float y1 = y_end + 4;
        label({o.x, y1}, ImGui::GetColorU32(ImGuiCol_Text),
              "loop mode: one small W_query per head, " + std::to_string(Di) + " x " + std::to_string(hd) + " each");
        const float y2 = y1 + line;
        for (std::int64_t h = 0; h < heads_shown; ++h) {
            block(y2, h * hd, std::min<std::int64_t>((h + 1) * hd, cols));
            dl->AddRect({o.x + h * block_w - 1, y2 - 1}, {o.x + (h + 1) * block_w, y2 + rows * cell},
                        head_color(static_cast<int>(h)), 2.0f, 0, 2.0f);
        }
        for (std::int64_t h = 0; h < heads_shown; h += stride)
            label({o.x + h * block_w, y2 + rows * cell + 2}, head_color(static_cast<int>(h)),
                  fit_text("W_q" + std::to_string(h), stride * block_w - 4));
        y_end = y2 + rows * cell + line;
    }
    ImGui::Dummy({right - o.x + 4, y_end - o.y + 4});
}

}  // namespace

void DrawWeightSplit(AppState& st) {
    audit_panel("weights");
    if (!st.trace) return;
    const Config& c = st.trace->config;
    draw_counts(st.mode_counts, c);
    ImGui::TextDisabled("%s", parameter_line(c).c_str());
    draw_kv_sharing(c);
    draw_query_weight(*st.trace);
}

}  // namespace headsplit::gui
