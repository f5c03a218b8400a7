// Weight split: one view at a time, chosen by a row of buttons (a projector has room for one):
// W_query in math layout (D_in x D_out, x @ W), its column blocks coloured by head, and in loop
// mode the separate per-head matrices under them; the matmuls each mode runs for this shape;
// what sharing keys and values saves.
#include <algorithm>
#include <array>
#include <cmath>

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

// The matmul counts' table: its cells' text, a row per mode (loop, split, fused) under the
// header; each column as wide as its widest text but the weights', which takes the rest and
// wraps (a projector's panel is narrow). Widths set here, not fitted by ImGui from the frame
// before, so that its height is measured before the panel is placed.
struct CountsTable {
    std::vector<std::array<std::string, 4>> rows;  // rows[0]: the header
    std::vector<Ink> name_inks, inks;  // a row's mode name, and its other cells
    std::vector<bool> refused;         // a mode this shape cannot run: hovering its name says why
    std::array<float, 3> fixed_w{};  // the first three columns' widths
};

CountsTable counts_table(const std::vector<ModeCount>& counts, const Config& c) {
    const std::int64_t Di = c.d_in, D = c.d_out, H = c.heads, hd = c.head_dim();
    CountsTable t;
    t.rows.push_back({"mode", "all", "Q/K/V", "Q/K/V weights"});
    t.name_inks.push_back(Ink::Plain), t.inks.push_back(Ink::Plain), t.refused.push_back(false);
    for (const ModeCount& n : counts) {
        const Mode m = n.mode;
        t.name_inks.push_back(m == c.mode ? Ink::Current : Ink::Plain);
        t.refused.push_back(!n.refused.empty());
        if (!n.refused.empty()) {
            t.rows.push_back({mode_name(m), "-", "-", "not here (hover the mode: why)"});
            t.inks.push_back(Ink::Dim);
            continue;
        }
        t.rows.push_back({mode_name(m), ll(n.total), ll(n.projections),
                          m == Mode::Loop ? "3 x " + ll(H) + " of " + ll(Di) + " x " + ll(hd)
                          : m == Mode::Split && !c.grouped() && !c.cross()
                              ? "3 of " + ll(Di) + " x " + ll(D)
                          : m == Mode::Split ? ll(Di) + " x " + ll(D) + ", 2 of " + ll(c.key_dim()) + " x " + ll(c.kv_width())
                                             : "1 of " + ll(Di) + " x " + ll(D + 2 * c.kv_width())});
        t.inks.push_back(m == c.mode ? Ink::Current : Ink::Plain);
    }
    for (const auto& row : t.rows)
        for (int k = 0; k < 3; ++k) t.fixed_w[k] = std::max(t.fixed_w[k], ImGui::CalcTextSize(row[k].c_str()).x);
    return t;
}

// The weights column's width in a table `width` px wide (ImGui's cell padding on both sides of
// each column, a border between columns and at the ends).
float weights_column_w(const CountsTable& t, float width) {
    const float pad = 2 * ImGui::GetStyle().CellPadding.x;
    return std::max(width - t.fixed_w[0] - t.fixed_w[1] - t.fixed_w[2] - 4 * pad - 5, 1.0f);
}

// The table's height `width` px wide: each row its tallest cell and the cell padding above and
// below; then the parameter line, wrapped (ImGui places each line at a whole pixel).
float counts_height(const CountsTable& t, const Config& c, float width) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float weights_w = weights_column_w(t, width);
    float h = 0;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        const float cell = i == 0 ? ImGui::GetTextLineHeight()
                                  : ImGui::CalcTextSize(t.rows[i][3].c_str(), nullptr, false, weights_w).y;
        h += std::floor(std::max(cell, ImGui::GetTextLineHeight()) + 2 * style.CellPadding.y);
    }
    return h + std::floor(style.ItemSpacing.y) +
           std::floor(ImGui::CalcTextSize(parameter_line(c).c_str(), nullptr, false, width).y + style.ItemSpacing.y);
}

// Matmul counts of loop, split and fused for this shape (counted with the trace, off the
// frame): a row each, all of a forward's matmuls, the Q/K/V projections among them and their
// weights; then the attention's weight count.
void draw_counts(const std::vector<ModeCount>& counts, const Config& c) {
    const CountsTable t = counts_table(counts, c);
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("counts", 4, flags, {room_left().x, 0})) {
        for (int k = 0; k < 3; ++k) ImGui::TableSetupColumn(t.rows[0][k].c_str(), ImGuiTableColumnFlags_WidthFixed, t.fixed_w[k]);
        ImGui::TableSetupColumn(t.rows[0][3].c_str(), ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableHeadersRow();
        for (std::size_t i = 1; i < t.rows.size(); ++i) {
            ImGui::TableNextRow();
            for (int k = 0; k < 4; ++k) {
                ImGui::TableNextColumn();
                if (k == 3) {
                    wrapped_line(t.rows[i][k], t.inks[i]);
                    continue;
                }
                ImGui::TextColored(ink_color(k == 0 ? t.name_inks[i] : t.inks[i]), "%s", t.rows[i][k].c_str());
                audit_last_item(t.rows[i][k]);
                if (k == 0 && t.refused[i] && ImGui::IsItemHovered())
                    ImGui::SetTooltip("%s", counts[i - 1].refused.c_str());
            }
        }
        ImGui::EndTable();
    }
    wrapped_line(parameter_line(c), Ink::Plain);
}

// What sharing keys and values saves: MHA, this configuration's GQA, MQA, a line each.
std::vector<std::pair<std::string, Ink>> kv_lines(const Config& c) {
    std::vector<std::pair<std::string, Ink>> out{{"KV heads: W_key + W_value, and the KV cache a token adds", Ink::Dim}};
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
        out.emplace_back(std::move(line), kv == c.kv_head_count() ? Ink::Current : Ink::Plain);
    }
    return out;
}

// Lines that wrap at `width`, as wrapped_line() draws them, one under the other.
float wrapped_height(const std::vector<std::pair<std::string, Ink>>& lines, float width) {
    float h = 0;
    for (const auto& l : lines)
        h += std::floor(ImGui::CalcTextSize(l.first.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y);
    return h;
}

// W_query's picture `width` px wide: its title's and its labels' heights, and its cells'
// rows and the side of a cell the layout is asked for.
struct QuerySizes {
    std::string title, loop_title;
    float title_h = 0, loop_title_h = 0, below = 0, text_h = 0;
    std::int64_t rows = 0, cols = 0;
    float grid_rows = 0, across = 0, floor_px = 0;
};

// The weights drawn, W[i][j] (math layout; nn.Linear's weight[j][i]) for the first `rows`
// and `cols`, column by column; none before the trace holds them.
std::vector<float> shown_weights(const Trace& tr, std::int64_t rows, std::int64_t cols) {
    std::vector<float> out;
    if (tr.weights.w_query.empty()) return out;
    for (std::int64_t j = 0; j < cols; ++j)
        for (std::int64_t i = 0; i < rows; ++i) out.push_back(tr.weights.w_query[static_cast<std::size_t>(j * tr.config.d_in + i)]);
    return out;
}

QuerySizes query_sizes(const Trace& tr, float width, float number_min) {
    QuerySizes q;
    const Config& c = tr.config;
    const std::int64_t Di = c.d_in, D = c.d_out, hd = c.head_dim();
    q.rows = std::min<std::int64_t>(Di, 12), q.cols = std::min<std::int64_t>(D, 64);
    const bool loop = c.mode == Mode::Loop;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    q.title = "W_query (" + ll(Di) + " x " + ll(D) + "): head h owns columns h*" + ll(hd) + " .. (h+1)*" + ll(hd) + "-1" +
              (D > q.cols ? " (the first " + ll(q.cols) + " shown)" : "");
    q.title_h = std::floor(ImGui::CalcTextSize(q.title.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y);
    q.loop_title = "loop mode: one small W_query per head, " + ll(Di) + " x " + ll(hd) + " each";
    q.loop_title_h = loop ? ImGui::CalcTextSize(q.loop_title.c_str(), nullptr, false, width).y + 4 : 0.0f;
    // Under the cells: the heads' names, and in loop mode the title and names of the second grid.
    q.below = line + (loop ? q.loop_title_h + line : 0.0f);
    q.grid_rows = loop ? 2.0f * q.rows : static_cast<float>(q.rows);
    q.across = width / static_cast<float>(q.cols);
    // What the layout is asked for: rows of cells that show these weights' numbers with two
    // decimals, 12 px or 3 px, no taller than the width lets a cell be. (A cell is drawn 1 px
    // smaller than its pitch.)
    float floor = D <= 64 ? 12.0f : 3.0f;
    if (D <= 8) {
        const std::vector<float> shown = shown_weights(tr, q.rows, q.cols);
        floor = shown.empty() ? value_cell() : cell_text(shown, 1e9f, 1e9f, "W_query", 0, number_min).need_w + 5;
    }
    q.floor_px = std::min(floor, q.across);
    q.text_h = q.title_h + q.below;
    return q;
}

// W_Q in math layout [D_in, D_out]: column j belongs to head j / head_dim. Its title wraps;
// the cells take the room left (up to 3.2 font heights), and show their numbers where the room
// allows (all or none). Loop mode adds each head's own matrix under its block of columns.
// Returns the height without cells, and `legible`: the height whose cells show a number (up
// to D_out = 8), are 12 px (up to 64) or 3 px, as drawn.
float draw_query_weight(const Trace& tr, float& legible, float number_min) {
    const Config& c = tr.config;
    const std::int64_t Di = c.d_in, hd = c.head_dim();
    const bool loop = c.mode == Mode::Loop;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float top = ImGui::GetCursorScreenPos().y;
    const QuerySizes q = query_sizes(tr, room_left().x, number_min);
    const std::int64_t rows = q.rows, cols = q.cols;
    wrapped_line(q.title, Ink::Plain);
    const ImVec2 room = room_left();
    // Square (a wide, short cell would have room across for a number it cannot show), as large
    // as the room, up to 3.2 font heights; 1 px at least (only below a projector's size, where
    // the panel may scroll, does the room get that small).
    const float cell = std::clamp(std::min(q.across, (room.y - q.below) / q.grid_rows), 1.0f, 3.2f * ImGui::GetFontSize());
    const float text_h = ImGui::GetCursorScreenPos().y - top + q.below;
    legible = text_h + q.grid_rows * q.floor_px;

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
    const CellText numbers = cell_text(shown_weights(tr, rows, cols), cell - 1, cell - 1, "W_query", 0, number_min);
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
        label({o.x + h * block_w, o.y + rows * cell + 2}, head_ink(static_cast<int>(h)),
              fit_text("h" + std::to_string(h), stride * block_w - 4));
    float y_end = o.y + rows * cell + line;
    if (loop) {
        // The same numbers as H separate D_in x head_dim matrices, one per head, each under
        // its own block of columns.
        ImGui::SetCursorScreenPos({o.x, y_end});
        wrapped_line(q.loop_title, Ink::Plain);
        const float y2 = y_end + q.loop_title_h;
        for (std::int64_t h = 0; h < heads_shown; ++h) {
            block(y2, h * hd, std::min<std::int64_t>((h + 1) * hd, cols));
            dl->AddRect({o.x + h * block_w - 1, y2 - 1},
                        {o.x + static_cast<float>(std::min<std::int64_t>((h + 1) * hd, cols)) * cell, y2 + rows * cell},
                        head_color(static_cast<int>(h)), 2.0f, 0, 2.0f);
        }
        for (std::int64_t h = 0; h < heads_shown; h += stride)
            label({o.x + h * block_w, y2 + rows * cell + 2}, head_ink(static_cast<int>(h)),
                  fit_text("h" + std::to_string(h), stride * block_w - 4));
        y_end = y2 + rows * cell + line;
    }
    ImGui::SetCursorScreenPos(o);
    ImGui::Dummy({std::min(right - o.x, room.x), y_end - o.y});
    return text_h;
}

}  // namespace

namespace {

using View = AppState::WeightsView;

// The view buttons (no "KV heads" with one head: sharing keys and values needs more).
std::vector<const char*> view_labels(const Config& c) {
    if (c.heads > 1) return {"W_query", "matmuls", "KV heads"};
    return {"W_query", "matmuls"};
}

// The view's height under its buttons `width` px wide: its text, and (W_query) with cells that
// read.
std::pair<float, float> view_need(const AppState& st, View view, float width) {
    const Config& c = st.trace->config;
    if (view == View::Query) {
        const QuerySizes q = query_sizes(*st.trace, width, number_size_min(st.presenting));
        return {q.text_h, q.text_h + q.grid_rows * q.floor_px};
    }
    const float h = view == View::Matmuls ? counts_height(counts_table(st.mode_counts, c), c, width)
                                          : wrapped_height(kv_lines(c), width);
    return {h, h};
}

}  // namespace

PanelNeed MeasureWeightSplit(const AppState& st, ImVec2 panel, bool window_titled) {
    PanelNeed n;
    if (!st.trace) return n;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = std::max(panel.x - 2 * style.WindowPadding.x, 1.0f);
    const View view = st.trace->config.heads <= 1 && st.weights_view == View::KvHeads ? View::Query : st.weights_view;
    const float top = heads_content_top(st, window_titled) + radio_row_height(view_labels(st.trace->config), width);
    const auto [text_h, need_h] = view_need(st, view, width);
    n.text_h = std::ceil(top + text_h + style.WindowPadding.y);
    n.need_h = std::ceil(top + need_h + style.WindowPadding.y);
    n.min_w = radio_row_width(view_labels(st.trace->config)) + 2 * style.WindowPadding.x;
    return n;
}

void DrawWeightSplit(AppState& st) {
    audit_panel("weights");
    scroll_below_projector_size(st.font_scale);  // every view fits from 1024x768 at text 1.5
    if (!st.trace) return;
    const Config& c = st.trace->config;
    const float top = ImGui::GetWindowPos().y;
    // Shared keys and values need more than one head.
    if (c.heads <= 1 && st.weights_view == View::KvHeads) st.weights_view = View::Query;
    st.weights_view = static_cast<View>(radio_row(view_labels(c), static_cast<int>(st.weights_view)));
    // What the layout measured before placing the panel, against what is drawn.
    const float before = ImGui::GetCursorScreenPos().y - top;
    const auto [told_text, told_need] = view_need(st, st.weights_view, room_left().x);
    float rigid = 0, legible = 0;
    if (st.weights_view == View::Query) {
        rigid = draw_query_weight(*st.trace, legible, number_size_min(st.presenting));
    } else {
        if (st.weights_view == View::Matmuls) draw_counts(st.mode_counts, c);
        else
            for (const auto& [text, ink] : kv_lines(c)) wrapped_line(text, ink);
        rigid = legible = ImGui::GetCursorScreenPos().y - top - before;
    }
    if (std::abs(rigid - told_text) > 1) frame_watch().mismeasured("the weight split's text", told_text, rigid);
    if (std::abs(legible - told_need) > 1) frame_watch().mismeasured("the weight split's cells", told_need, legible);
}

}  // namespace headsplit::gui
