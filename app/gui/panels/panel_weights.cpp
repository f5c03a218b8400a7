// Weight split: one view at a time, chosen by a row of buttons (a projector has room for one):
// W_query in math layout (D_in x D_out, x @ W), its column blocks coloured by head, and in loop
// mode the separate per-head matrices under them; the matmuls each mode runs for this shape;
// what sharing keys and values saves.
#include <algorithm>

#include <imgui.h>

#include "headsplit/engine/engine.hpp"
#include "gui/view/layout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

enum class Ink { Plain, Current, Dim };  // Current: the mode or KV head count on screen

ImVec4 ink_color(Ink ink) {
    return ink == Ink::Current ? accent_color()
           : ink == Ink::Dim   ? ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled)
                               : ImGui::GetStyleColorVec4(ImGuiCol_Text);
}

// A line that wraps at the panel's edge (or its table column's); the audit sees it.
void wrapped_line(const std::string& text, Ink ink) {
    ImGui::PushStyleColor(ImGuiCol_Text, ink_color(ink));
    ImGui::TextWrapped("%s", text.c_str());
    ImGui::PopStyleColor();
    audit_last_item(text);
}

std::string ll(std::int64_t v) { return std::to_string(v); }

// Matmul counts of loop, split and fused for this shape (counted with the trace, off the
// frame): a row each, all of a forward's matmuls, the Q/K/V projections among them and their
// weights (the one column that wraps: a projector's panel is narrow); then the attention's
// weight count.
void draw_counts(const std::vector<ModeCount>& counts, const Config& c) {
    const std::int64_t Di = c.d_in, D = c.d_out, H = c.heads, hd = c.head_dim();
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("counts", 4, flags, {room_left().x, 0})) {
        ImGui::TableSetupColumn("mode");
        ImGui::TableSetupColumn("all");
        ImGui::TableSetupColumn("Q/K/V");
        ImGui::TableSetupColumn("Q/K/V weights", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableHeadersRow();
        // Only the weights wrap: the other columns are as wide as their widest line.
        auto cell = [](const std::string& text, Ink ink, bool wrap = false) {
            ImGui::TableNextColumn();
            if (wrap) return wrapped_line(text, ink);
            ImGui::TextColored(ink_color(ink), "%s", text.c_str());
            audit_last_item(text);
        };
        for (const ModeCount& n : counts) {
            const Mode m = n.mode;
            const Ink ink = m == c.mode ? Ink::Current : Ink::Plain;
            ImGui::TableNextRow();
            cell(mode_name(m), ink);
            if (!n.refused.empty()) {
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", n.refused.c_str());
                cell("-", Ink::Dim);
                cell("-", Ink::Dim);
                cell("not here (hover the mode: why)", Ink::Dim, true);
                continue;
            }
            cell(ll(n.total), ink);
            cell(ll(n.projections), ink);
            cell(m == Mode::Loop ? "3 x " + ll(H) + " of " + ll(Di) + " x " + ll(hd)
                 : m == Mode::Split && !c.grouped() && !c.cross()
                     ? "3 of " + ll(Di) + " x " + ll(D)
                 : m == Mode::Split ? ll(Di) + " x " + ll(D) + ", 2 of " + ll(c.key_dim()) + " x " + ll(c.kv_width())
                                    : "1 of " + ll(Di) + " x " + ll(D + 2 * c.kv_width()),
                 ink, true);
        }
        ImGui::EndTable();
    }
    wrapped_line(parameter_line(c), Ink::Plain);
}

// What sharing keys and values saves: MHA, this configuration's GQA, MQA, a line each.
void draw_kv_sharing(const Config& c) {
    wrapped_line("KV heads: W_key + W_value, and the KV cache a token adds", Ink::Dim);
    std::vector<std::int64_t> kvs{c.heads};
    if (c.grouped() && c.kv_head_count() > 1) kvs.push_back(c.kv_head_count());
    kvs.push_back(1);
    for (std::int64_t kv : kvs) {
        Config v = c;
        v.kv_heads = kv == c.heads ? 0 : kv;
        const ParamCounts p = attention_params(v);
        std::string line = ll(kv) + (kv == c.heads ? " (MHA): " : kv == 1 ? " (MQA): " : " (GQA): ") + grouped(p.key + p.value) +
                           " weights, " + grouped(kv_cache_bytes_per_token(v)) + " bytes a token (one layer, float32)";
        if (c.layers > 1)
            line += ", " + human_bytes(static_cast<double>(model_kv_cache_bytes_per_token(v))) + " for " + ll(c.layers) +
                    " layers in fp16";
        wrapped_line(line, kv == c.kv_head_count() ? Ink::Current : Ink::Plain);
    }
}

// W_Q in math layout [D_in, D_out]: column j belongs to head j / head_dim. Its title wraps;
// the cells take the room left (up to 3.2 font heights), and show their numbers where the room
// allows (all or none). Loop mode adds each head's own matrix under its block of columns.
// Returns the height without cells, and `legible`: the height whose cells show a number (up
// to D_out = 8), are 12 px (up to 64) or 3 px, for the layout.
float draw_query_weight(const Trace& tr, float& legible, float number_min) {
    const Config& c = tr.config;
    const std::int64_t Di = c.d_in, D = c.d_out, hd = c.head_dim();
    const std::int64_t rows = std::min<std::int64_t>(Di, 12), cols = std::min<std::int64_t>(D, 64);
    const bool loop = c.mode == Mode::Loop;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float top = ImGui::GetCursorScreenPos().y;
    wrapped_line("W_query (" + ll(Di) + " x " + ll(D) + "): head h owns columns h*" + ll(hd) + " .. (h+1)*" + ll(hd) + "-1" +
                     (D > cols ? " (the first " + ll(cols) + " shown)" : ""),
                 Ink::Plain);
    const std::string loop_title = "loop mode: one small W_query per head, " + ll(Di) + " x " + ll(hd) + " each";
    const float loop_title_h = loop ? ImGui::CalcTextSize(loop_title.c_str(), nullptr, false, room_left().x).y + 4 : 0.0f;
    // Under the cells: the heads' names, and in loop mode the title and names of the second grid.
    const float below = line + (loop ? loop_title_h + line : 0.0f);
    const float grid_rows = loop ? 2.0f * rows : static_cast<float>(rows);
    const ImVec2 room = room_left();
    // Square (a wide, short cell would have room across for a number it cannot show), as large
    // as the room, up to 3.2 font heights; 1 px at least (only below a projector's size, where
    // the panel may scroll, does the room get that small).
    const float across = room.x / static_cast<float>(cols);
    const float cell = std::clamp(std::min(across, (room.y - below) / grid_rows), 1.0f, 3.2f * ImGui::GetFontSize());
    // What the layout is asked for: rows of cells that show a number, 12 px or 3 px, no
    // taller than the width lets a cell be.
    const float floor_px = std::min(D <= 8 ? value_cell() : D <= 64 ? 12.0f : 3.0f, across);
    const float text_h = ImGui::GetCursorScreenPos().y - top + below;
    legible = text_h + grid_rows * floor_px;

    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const bool text = !tr.weights.w_query.empty();
    float right = o.x + cols * cell;
    auto label = [&](ImVec2 pos, ImU32 col, const std::string& t) {
        right = std::max(right, pos.x + draw_label(dl, pos, col, t).x);
    };
    auto weight = [&](std::int64_t i, std::int64_t j) {  // math layout W[i][j] = nn.Linear weight[j][i]
        return tr.weights.w_query.empty() ? 0.0f : tr.weights.w_query[static_cast<std::size_t>(j * Di + i)];
    };
    // One number format for every weight drawn, or none.
    std::vector<float> shown;
    for (std::int64_t j = 0; j < cols && text; ++j)
        for (std::int64_t i = 0; i < rows; ++i) shown.push_back(weight(i, j));
    const CellText numbers = cell_text(shown, cell - 1, cell - 1, "W_query", 0, number_min);
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
    block(o.y, 0, cols);
    // Head labels under their blocks: every k-th head when a block is narrower than its label.
    const std::int64_t heads_shown = (cols + hd - 1) / hd;
    const float block_w = hd * cell;
    const int stride = label_stride(block_w, ImGui::CalcTextSize(("h" + std::to_string(heads_shown - 1)).c_str()).x + 6);
    for (std::int64_t h = 0; h < heads_shown; h += stride)
        label({o.x + h * block_w, o.y + rows * cell + 2}, head_color(static_cast<int>(h)),
              fit_text("h" + std::to_string(h), stride * block_w - 4));
    float y_end = o.y + rows * cell + line;
    if (loop) {
        // The same numbers as H separate D_in x head_dim matrices, one per head, each under
        // its own block of columns.
        ImGui::SetCursorScreenPos({o.x, y_end});
        wrapped_line(loop_title, Ink::Plain);
        const float y2 = y_end + loop_title_h;
        for (std::int64_t h = 0; h < heads_shown; ++h) {
            block(y2, h * hd, std::min<std::int64_t>((h + 1) * hd, cols));
            dl->AddRect({o.x + h * block_w - 1, y2 - 1},
                        {o.x + static_cast<float>(std::min<std::int64_t>((h + 1) * hd, cols)) * cell, y2 + rows * cell},
                        head_color(static_cast<int>(h)), 2.0f, 0, 2.0f);
        }
        for (std::int64_t h = 0; h < heads_shown; h += stride)
            label({o.x + h * block_w, y2 + rows * cell + 2}, head_color(static_cast<int>(h)),
                  fit_text("h" + std::to_string(h), stride * block_w - 4));
        y_end = y2 + rows * cell + line;
    }
    ImGui::SetCursorScreenPos(o);
    ImGui::Dummy({std::min(right - o.x, room.x), y_end - o.y});
    return text_h;
}

}  // namespace

void DrawWeightSplit(AppState& st) {
    using View = AppState::WeightsView;
    audit_panel("weights");
    scroll_below_projector_size(st.font_scale);  // every view fits from 1024x768 at text 1.5
    if (!st.trace) return;
    const Config& c = st.trace->config;
    const float top = ImGui::GetWindowPos().y;
    // Shared keys and values need more than one head.
    if (c.heads <= 1 && st.weights_view == View::KvHeads) st.weights_view = View::Query;
    st.weights_view = static_cast<View>(c.heads > 1 ? radio_row({"W_query", "matmuls", "KV heads"}, static_cast<int>(st.weights_view))
                                                    : radio_row({"W_query", "matmuls"}, static_cast<int>(st.weights_view)));
    // The layout is told the height the view needs: its text, and (W_query) cells that read.
    const float before = ImGui::GetCursorScreenPos().y - top;
    float rigid = 0, legible = 0;
    if (st.weights_view == View::Query) {
        rigid = before + draw_query_weight(*st.trace, legible, number_size_min(st.presenting));
        legible += before;
    } else {
        if (st.weights_view == View::Matmuls) draw_counts(st.mode_counts, c);
        else draw_kv_sharing(c);
        rigid = legible = ImGui::GetCursorScreenPos().y - top;
    }
    const float pad = ImGui::GetStyle().WindowPadding.y;
    st.panels.heads_text_h = rigid + pad;
    st.panels.heads_need_h = legible + pad;
}

}  // namespace headsplit::gui
