// Heatmaps: one T x T map per head for the score steps (scores, mask, scale, softmax,
// dropout), tiled to fill the panel, token labels on both axes (thinned when crowded, the
// full pair on hover), a colour legend on its own line, -inf marked. At other steps it shows
// the attention weights each context was computed from. Click a map to show that head
// alone, large; click again (or "all heads") to go back.
#include <algorithm>
#include <cmath>

#include <map>
#include <optional>

#include <imgui.h>
#include <imgui_internal.h>  // the window's flags, for the audit

#include "gui/view/layout.hpp"
#include "gui/panels/heatmaps_fit.hpp"
#include "gui/panels/heatmaps_maps.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

using namespace heat;  // the maps the panel draws

namespace {

const ImU32 kCausalFill = IM_COL32(35, 35, 35, 255);
const ImU32 kPaddingFill = IM_COL32(45, 60, 90, 255);


// Keeps the next control on this line when it fits, else starts a new one.
void same_line_if(float w) {
    ImGui::SameLine();
    if (w > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
}

void draw_what(const AppState& st, const Grids& g, const Step& first);

// One line of controls and what is shown, above the maps.
void draw_header(AppState& st, const Grids& g, const Step& first) {
    if (st.document) {  // a handout page: what is shown, no controls
        draw_what(st, g, first);
        return;
    }
    if (st.presenting) {  // keys only: what is shown, beside a batch's sentence slider
        SentenceSlider(st);
        draw_what(st, g, first);
        return;
    }
    if (st.focus_head >= 0 && !g.comparing && st.panels.heads_fit) {
        if (ImGui::SmallButton("all heads")) st.focus_head = -1;
        audit_last_item("all heads");
        ImGui::SameLine();
    }
    SentenceSlider(st);
    const char* compare_label = "causal vs bidirectional";
    if (ImGui::GetContentRegionAvail().x < toggle_width(compare_label)) ImGui::NewLine();  // after the slider
    if (ImGui::Checkbox(compare_label, &st.compare_masks)) recompute(st);
    audit_last_item(compare_label);
    if (g.comparing && g.heads_here > 1) {
        int head = std::max(st.focus_head, 0);
        const float w = ImGui::CalcTextSize("head").x + 6 * ImGui::GetFontSize();
        same_line_if(w);
        ImGui::SetNextItemWidth(4 * ImGui::GetFontSize());
        if (ImGui::SliderInt("head", &head, 0, g.heads_here - 1)) st.focus_head = head;
        audit_last_item("head");
    }
    // The colour scale is the weights': at the scores' steps it stands greyed out, naming the
    // scores' own (one range, -m .. m, every head alike: the legend's), so that the header
    // keeps its lines from step to step.
    same_line_if(ImGui::CalcTextSize("each row to its max colour scale").x + ImGui::GetFrameHeight() * 2.5f);
    {
        ImGui::BeginDisabled(!g.weights);
        ImGui::SetNextItemWidth(std::min(ImGui::CalcTextSize("each row to its max").x + ImGui::GetFrameHeight() * 1.5f,
                                         ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("colour scale").x -
                                             ImGui::GetStyle().ItemInnerSpacing.x));
        if (ImGui::BeginCombo("colour scale", g.weights ? scale_name(st.heat_scale) : "scores: -m .. m")) {
            for (auto s : {AppState::HeatScale::Unit, AppState::HeatScale::PerRow, AppState::HeatScale::Log})
                if (ImGui::Selectable(scale_name(s), s == st.heat_scale)) st.heat_scale = s;
            ImGui::EndCombo();
        }
        ImGui::EndDisabled();
        audit_last_item("colour scale");
    }
    // What is shown goes beside the controls when it fits, else on its own line, where the
    // panel has the room for it and a row of thumbnails under it.
    if (room_left().y < 4 * ImGui::GetTextLineHeightWithSpacing() + 4 + 2 * ImGui::GetFontSize()) return;
    ImGui::SameLine();
    draw_what(st, g, first);
}

void draw_what(const AppState& st, const Grids& g, const Step& first) {
    const bool captioned = st.presenting && !st.document;
    const std::string what = what_text(*st.trace, g, st.step, first, captioned);
    if (what.empty()) return;
    // On a line of its own where the widest any map step says would not fit beside the
    // controls, so that the maps keep their place from step to step.
    const bool beside = ImGui::GetCursorPosX() > ImGui::GetCursorStartPos().x + 0.5f;  // after a control
    if (beside && what_width(st, g, first, captioned) > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
    ImGui::PushTextWrapPos(0.0f);  // at the panel's edge: told whole
    ImGui::TextDisabled("%s", what.c_str());
    ImGui::PopTextWrapPos();
    audit_last_item(what);
}

// The maps fitted to the room left in the panel (it never scrolls), at the cursor;
// `heads_fit` is set to whether every map fits legibly.
Canvas place_maps(const AppState& st, const Grids& g, const std::vector<Map>& maps, int focus, bool& heads_fit) {
    Canvas cv = fit_maps(st, g, maps, focus, room_left());
    heads_fit = cv.tiling.cell >= cv.legible || maps.size() == 1;
    cv.origin = ImGui::GetCursorScreenPos();
    cv.dl = ImGui::GetWindowDrawList();
    cv.text_col = ImGui::GetColorU32(ImGuiCol_Text), cv.dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    return cv;
}

// The colour of a cell holding `v` (key j of a row whose largest finite value is row_max).
ImU32 cell_fill(const AppState& st, const Grids& g, float bound, float v, std::int64_t j, float row_max) {
    if (std::isinf(v)) return g.is_padding(j) ? kPaddingFill : kCausalFill;
    if (!g.weights) return diverging_color(bound > 0 ? v / bound : 0);
    float shade = v;
    if (st.heat_scale == AppState::HeatScale::PerRow) shade = row_max > 0 ? v / row_max : 0;
    if (st.heat_scale == AppState::HeatScale::Log) shade = v > 0 ? std::clamp(1.0f + std::log10(v) / 4.0f, 0.0f, 1.0f) : 0.0f;
    return sequential_color(shade);
}

float row_max_of(const float* row, std::int64_t T) {
    float m = 0;
    for (std::int64_t j = 0; j < T; ++j)
        if (std::isfinite(row[j])) m = std::max(m, row[j]);
    return m;
}

// Map `mi` in the tiling (slot 0 when one head is shown large): its title, row labels, cells
// (the one under the mouse outlined, told in a tooltip, the stage's hover) and key labels.
// A click sets st.focus_head to `click_to` (-2: a click does nothing).
// `text`: the number format of m's grid, chosen once for the frame.
void draw_map(AppState& st, const Grids& g, const Canvas& cv, const Map& m, std::size_t mi, const CellText& text,
              int click_to) {
    const std::int64_t R = g.R, T = g.T, N = g.N, NR = g.NR;
    const float cell = cv.cell, label_w = cv.label_w;
    ImDrawList* dl = cv.dl;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const int col = static_cast<int>(mi) % cv.tiling.columns, row = static_cast<int>(mi) / cv.tiling.columns;
    const float x0 = cv.origin.x + col * cv.map_w + label_w;
    const float y_title = cv.origin.y + row * cv.map_h;
    const float y0 = y_title + cv.line_h;
    // The title over the map and the gap after it, or where it does not fit the mask two maps
    // compare ("head 0: causal": "causal"; the slider above names the head), else "hK" (the
    // head is always named).
    const auto fits = [&](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x <= N * cell + cv.gap; };
    const std::size_t colon = m.title.find(": ");
    // The one large map's title may run on to the thumbnails' strip (or the panel's edge).
    const float named_w = mi == 0 && cv.focus >= 0 && !cv.thumbs_only
                              ? cv.origin.x + cv.avail.x - (cv.strip.right ? cv.strip.strip : 0.0f) - x0 - cv.gap
                              : N * cell + cv.gap;
    // A trained model's head named by what it looks at where a pattern stands out: "head 3:
    // the token before".
    const std::vector<std::string>& notes = st.trace->head_notes;
    const std::string noted = m.mine && !g.comparing && g.sentence == 0 && m.head >= 0 && m.head < static_cast<int>(notes.size()) &&
                                      !notes[static_cast<std::size_t>(m.head)].empty()
                                  ? m.title + ": " + notes[static_cast<std::size_t>(m.head)]
                                  : "";
    const std::string title = !noted.empty() && ImGui::CalcTextSize(noted.c_str()).x <= named_w ? noted
                              : fits(m.title)                ? m.title
                              : g.comparing && colon != std::string::npos && fits(m.title.substr(colon + 2)) ? m.title.substr(colon + 2)
                                                                                                            : "h" + std::to_string(m.head);
    draw_label(dl, {x0, y_title}, head_ink(m.head), title);
    for (std::int64_t i = 0; i < NR; ++i) {
        const float* row_v = &m.t->values()[static_cast<std::size_t>(m.block * R * T + i * T)];
        const float row_max = row_max_of(row_v, T);
        if (i % cv.row_stride == 0)
            draw_label(dl, {x0 - label_w, y0 + i * cell + cell * 0.5f - cv.row_size * 0.5f}, cv.text_col,
                       fit_token(g.query_label(i), label_w - 6, cv.row_size), g.query_token(i), cv.row_size);
        for (std::int64_t j = 0; j < N; ++j) {
            const float v = row_v[j];
            const ImVec2 p0(x0 + j * cell, y0 + i * cell), p1(p0.x + cell - 1, p0.y + cell - 1);
            const ImU32 fill = cell_fill(st, g, cv.bound, v, j, row_max);
            dl->AddRectFilled(p0, p1, fill);
            if (std::isinf(v) && g.is_padding(j)) {  // padding: a cross on slate, the key is no token at all
                dl->AddLine(p0, p1, IM_COL32(150, 170, 200, 255), 1.5f);
                dl->AddLine({p0.x, p1.y}, {p1.x, p0.y}, IM_COL32(150, 170, 200, 255), 1.5f);
            } else if (std::isinf(v)) {
                dl->AddLine(p0, p1, IM_COL32(120, 120, 120, 255), 1.5f);  // hatched: the future
            }
            std::vector<long long> index;  // for the audit only
            if (frame_watch().watching()) {
                const Shape at = unravel(m.t->shape, m.block * R * T + i * T + j);
                index.assign(at.begin(), at.end());
            }
            cell_value(dl, p0, p1, std::isinf(v) ? IM_COL32(200, 200, 200, 255) : text_on(fill), v, text, true, m.head,
                       std::move(index));
            if (mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y && ImGui::IsWindowHovered()) {
                dl->AddRect(p0, p1, IM_COL32(255, 255, 255, 255), 0, 0, 2.5f);
                ImGui::SetTooltip("%s: \"%s\" -> \"%s\" = %s%s", m.title.c_str(), g.query_token(i).c_str(),
                                  g.key_token(j).c_str(), format_cell(v).c_str(),
                                  std::isinf(v) ? (g.is_padding(j) ? " (padding)" : " (future)") : "");
                const int tensor = static_cast<int>(m.t - &m.step->tensors[0]);
                if (m.mine) st.hover = Hover{true, m.step->index, tensor, m.block * R * T + i * T + j};
                if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && click_to > -2) st.focus_head = click_to;
            }
        }
    }
    // Key tokens along the bottom, every k-th: across their columns cut to the room they have,
    // on end, centred on the column, cut to the band, or across on two lines.
    if (cv.key_stride > 1) frame_watch().thinned("key labels every " + std::to_string(cv.key_stride) + "th");
    if (cv.row_stride > 1) frame_watch().thinned("row labels every " + std::to_string(cv.row_stride) + "th");
    for (std::int64_t j = 0; j < N; j += cv.key_stride) {
        if (cv.keys_on_end) {  // within the band and the panel
            const float y = y0 + NR * cell + 2, room = std::min(cv.key_band - 6, cv.origin.y + cv.avail.y - y);
            draw_label_on_end(dl, {x0 + j * cell + (cell - 1 - cv.key_size) * 0.5f, y}, cv.dim_col,
                              fit_token(g.key_label(j), room, cv.key_size), g.key_token(j), cv.key_size);
            continue;
        }
        if (cv.key_lines > 1) {  // centred on the column, each on the next of the lines in turn
            const std::string text = fit_token(g.key_label(j), cv.key_lines * cell - 6, cv.key_size);
            const float w = ImGui::GetFont()->CalcTextSizeA(cv.key_size, FLT_MAX, 0, text.c_str()).x;
            draw_label(dl, {x0 + j * cell + (cell - w) * 0.5f, y0 + NR * cell + 2 + (j % cv.key_lines) * (cv.key_size + 2)},
                       cv.dim_col, text, g.key_token(j), cv.key_size);
            continue;
        }
        draw_label(dl, {x0 + j * cell + 1, y0 + NR * cell + 2}, cv.dim_col,
                   fit_token(g.key_label(j), std::min<std::int64_t>(cv.key_stride, N - j) * cell - 4, cv.key_size),
                   g.key_token(j), cv.key_size);
    }
}

// Every head as a thumbnail in the strip beside (or under) the large map: its name, its grid
// in colour without numbers, the one shown large outlined; a click shows that head large.
// Returns where the strip ends at the bottom.
float draw_thumbnails(AppState& st, const Grids& g, const Canvas& cv, const std::vector<Map>& maps) {
    ImDrawList* dl = cv.dl;
    const FocusTiling& ft = cv.strip;
    const float gap = thumb_gap(cv.font);
    const float box_w = std::max(cv.thumb, cv.thumb_w) + gap, box_h = cv.line_h + cv.thumb + gap;
    const float sx = ft.right ? cv.origin.x + cv.avail.x - ft.strip + gap : cv.origin.x;
    const float sy = ft.right || cv.thumbs_only ? cv.origin.y : cv.origin.y + cv.map_h;
    const std::int64_t side = std::max(g.N, g.NR);
    const float tc = cv.thumb / static_cast<float>(side);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    float bottom = sy;
    for (std::size_t k = 0; k < maps.size(); ++k) {
        const Map& m = maps[k];
        const int along = static_cast<int>(k) % ft.per_line, across = static_cast<int>(k) / ft.per_line;
        const float x = sx + (ft.right ? across * box_w : along * box_w);
        const float y = sy + (ft.right ? along * box_h : across * box_h);
        draw_label(dl, {x, y}, head_ink(m.head), "h" + std::to_string(m.head));
        const float y0 = y + cv.line_h;
        for (std::int64_t i = 0; i < g.NR; ++i) {
            const float* row_v = &m.t->values()[static_cast<std::size_t>(m.block * g.R * g.T + i * g.T)];
            const float row_max = row_max_of(row_v, g.T);
            for (std::int64_t j = 0; j < g.N; ++j)
                dl->AddRectFilled({x + j * tc, y0 + i * tc}, {x + (j + 1) * tc, y0 + (i + 1) * tc},
                                  cell_fill(st, g, cv.bound, row_v[j], j, row_max));
        }
        const ImVec2 a(x - 2, y0 - 2), b(x + g.N * tc + 2, y0 + g.NR * tc + 2);
        if (static_cast<int>(k) == cv.focus) dl->AddRect(a, b, head_color(m.head), 0, 0, 3.0f);
        const bool over = mouse.x >= x && mouse.x < x + box_w && mouse.y >= y && mouse.y < y + box_h && ImGui::IsWindowHovered();
        if (over) {
            dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
            ImGui::SetTooltip("%s: click to show it large ([ and ] step through the heads)", m.title.c_str());
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) st.focus_head = static_cast<int>(k);
        }
        bottom = std::max(bottom, y0 + cv.thumb);
    }
    return bottom;
}

// Legend, under the maps (legend_lines() lines from ly) from the panel's left, or, `stacked`,
// its parts one under another from (x0, ly). Returns where it ends on the right.
float draw_legend(const Grids& g, const Canvas& cv, float ly, bool stacked = false, float x0 = 0) {
    ImDrawList* dl = cv.dl;
    const float font = cv.font, sw = legend_bar(cv), left = stacked ? x0 : cv.origin.x;
    const ImU32 text_col = cv.text_col;
    float x = left, right = x;
    for (const LegendPart& p : legend_parts(g, cv.bound, sw, font)) {
        if (x > left && (stacked || x + 2 * font + p.w > cv.origin.x + cv.avail.x)) x = left, ly += cv.line_h;
        else if (x > left) x += 2 * font;
        if (p.kind == LegendPart::Scale) {
            const std::size_t bar = p.text.find('|');
            x += draw_label(dl, {x, ly}, text_col, p.text.substr(0, bar)).x + 6;
            for (int i = 0; i < 64; ++i) {
                const float f = i / 63.0f;
                const ImU32 col = g.weights ? sequential_color(f) : diverging_color(f * 2 - 1);
                dl->AddRectFilled({x + f * sw, ly + 2}, {x + f * sw + sw / 63 + 1, ly + font - 2}, col);
            }
            x += sw + 6;
            x += draw_label(dl, {x, ly}, text_col, p.text.substr(bar + 1)).x;
        } else {
            dl->AddRectFilled({x, ly + 2}, {x + font - 4, ly + font - 2}, p.kind == LegendPart::Masked ? kCausalFill : kPaddingFill);
            if (p.kind == LegendPart::Padding) {
                dl->AddLine({x, ly + 2}, {x + font - 4, ly + font - 2}, IM_COL32(150, 170, 200, 255), 1.5f);
                dl->AddLine({x, ly + font - 2}, {x + font - 4, ly + 2}, IM_COL32(150, 170, 200, 255), 1.5f);
            }
            x += font;
            x += draw_label(dl, {x, ly}, text_col, p.text).x;
        }
        right = std::max(right, x);
    }
    return right;
}

}  // namespace

void SentenceSlider(AppState& st) {
    const std::int64_t batch = st.trace ? st.trace->config.batch : 1;
    if (batch <= 1 || st.document) return;  // a page shows the first sentence, no slider
    // Which sentence of the batch the maps show (the stage follows it too).
    int b = static_cast<int>(std::clamp<std::int64_t>(st.heat_sentence, 0, batch - 1));
    ImGui::SetNextItemWidth(4 * ImGui::GetFontSize());
    if (ImGui::SliderInt("sentence", &b, 0, static_cast<int>(batch) - 1, "%d", ImGuiSliderFlags_AlwaysClamp))
        st.heat_sentence = b;
    audit_last_item("sentence");
    ImGui::SameLine();
}

std::string heatmaps_off(const AppState& st) {
    if (!st.trace || st.shapes_only) return "";
    if (st.trace->config.mode == Mode::Flash) {  // its tiles, from the first to the normalizing step
        if (st.trace->config.decoding()) return "";
        int first = -1, last = -1;
        for (const Step& s : st.trace->steps) {
            if (s.op == Op::Tile && first < 0) first = s.index;
            if (s.op == Op::Tile || s.op == Op::Normalize) last = s.index;
        }
        if (first < 0) return "";
        if (st.step < first) return "flash's tiles are computed from step " + std::to_string(first);
        if (st.step > last)
            return "the tiles were computed at steps " + std::to_string(first) + " to " + std::to_string(last) + " (Left goes back to them)";
        return "";
    }
    const std::vector<const Step*> grids = grids_for(*st.trace, st.step);
    if (grids.empty()) return "";
    if (grids.front()->index > st.step)
        return "the attention weights are computed at step " + std::to_string(grids.front()->index);
    // (Decoding: the context steps of the round whose weights these are.)
    int last_context = -1;
    for (const Step& s : st.trace->steps)
        if (s.op == Op::Context && s.round == grids.front()->round) last_context = s.index;
    if (last_context >= 0 && st.step > last_context)
        return "the attention weights were used at step " + std::to_string(last_context) + " (Left goes back to them)";
    return "";
}

namespace {
// A line in the dimmed colour, wrapped at the panel's edge.
void dim_line(const std::string& text) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", text.c_str());
    ImGui::PopTextWrapPos();
    audit_last_item(text);
}
}  // namespace

namespace {

// A grid tensor's number format in cells `cell` px wide, from every block of it, shown or not;
// where the stage shows the same values with fewer decimals, with those (shared_decimals).
CellText grid_format(const AppState& st, const Map& m, float cell) {
    ValueRange whole;
    for (const ValueRange& r : block_ranges(st, m)) whole.add(r);
    const float least = number_size_min(st.presenting, st.document);
    CellText t = cell_text(whole, cell - 1, cell - 1, "", number_size_max(), least);
    if (t.shown && m.mine && shared_decimals(st, 1, m.t->name + " at step " + std::to_string(m.step->index), t.decimals) < t.decimals)
        t = cell_text(whole, cell - 1, cell - 1, "", number_size_max(), least, 1);
    return t;
}

}  // namespace

void DrawHeatmaps(AppState& st) {
    // Before the weights exist (or after they were used), a line on the tabs' row where it
    // fits there, so that the panel is its tabs alone; else under them.
    const std::string when_off = heatmaps_off(st);
    const std::string beside = when_off.empty() ? "" : when_beside_tabs(st, when_off, ImGui::GetWindowWidth());
    audit_panel("heatmaps", beside.empty() ? 0.0f : ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.y);
    if (!st.trace || st.shapes_only) {
        ImGui::TextDisabled("no values to draw");
        return;
    }
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    const auto off = [&](const std::string& when) {  // the stage takes the room
        if (!beside.empty()) {
            const ImGuiStyle& style = ImGui::GetStyle();
            const float right = ImGui::GetWindowPos().x + ImGui::GetWindowWidth() - style.WindowPadding.x;
            const float w = ImGui::CalcTextSize(beside.c_str()).x;
            const float y = ImGui::GetCursorScreenPos().y - style.ItemSpacing.y - ImGui::GetFrameHeight() + style.FramePadding.y;
            draw_label(ImGui::GetWindowDrawList(), {right - w, y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), beside);
            return;
        }
        dim_line(when);
    };
    if (c.mode == Mode::Flash) {  // no score grid is ever held: its tiles instead
        if (const std::string when = heatmaps_off(st); !when.empty()) off(when);
        else DrawFlashTiles(st);
        return;
    }
    const std::vector<const Step*> grids = grids_for(tr, st.step);
    if (grids.empty()) return;
    // (Before the weights, the line on when they come: the panel the layout measured.)
    if (const std::string when = heatmaps_off(st); !when.empty()) {
        off(when);
        return;
    }
    if (quiz_hides(st, grids.front()->index)) {
        dim_line("predict the shape: the heatmaps show once the class has answered");
        return;
    }
    std::optional<Scene> scene = scene_of(st);
    if (!scene) return;
    if (st.focus_head >= scene->g.heads_here) st.focus_head = -1;
    if (!scene->g.comparing) {  // each on screen, large or as a thumbnail
        std::vector<int> heads;
        for (const Map& m : scene->all) heads.push_back(m.head);
        frame_watch().expect_heads(heads);
    }
    const Grids& g = scene->g;
    const std::vector<Map>& maps = scene->maps;
    const bool comparing = g.comparing;

    // One line of controls and what is shown, then the maps, then the legend line.
    const float header_top = ImGui::GetCursorPosY();
    draw_header(st, g, *grids.front());
    const Canvas cv = place_maps(st, g, maps, comparing ? -1 : st.focus_head, st.panels.heads_fit);
    // The layout measured the header before the panel was placed: the audit holds the two alike.
    if (frame_watch().watching() && !st.document) {
        const bool titled = !(ImGui::GetCurrentWindow()->Flags & ImGuiWindowFlags_NoTitleBar);
        if (std::abs(heads_content_top(st, titled) - header_top) > 1) frame_watch().mismeasured("the heatmaps' top", heads_content_top(st, titled), header_top);
        const float told = header_h(st, g, *grids.front(), ImGui::GetWindowWidth() - 2 * ImGui::GetStyle().WindowPadding.x,
                                    ImGui::GetWindowHeight() - header_top - ImGui::GetStyle().WindowPadding.y);
        const float drawn = ImGui::GetCursorPosY() - header_top;
        if (std::abs(told - drawn) > 1) frame_watch().mismeasured("heatmaps' header", told, drawn);
    }
    // One number format for every cell of a grid (all its heads), or none: worked out once per
    // grid tensor, not once per map.
    std::map<const TensorRecord*, CellText> formats;
    auto format_of = [&](const Map& m) {
        auto it = formats.find(m.t);
        if (it == formats.end()) it = formats.emplace(m.t, grid_format(st, m, cv.cell)).first;
        CellText text = it->second;
        text.tensor = m.title;
        if (m.mine && frame_watch().watching()) text.values_of = m.t->name + " at step " + std::to_string(m.step->index);
        return text;
    };
    float bottom = cv.origin.y + cv.tiling.rows * cv.map_h;
    if (cv.focus >= 0) {  // one head large (a click goes back to all heads where they fit), every head small
        if (cv.strip.right) bottom -= cv.gap;  // no gap under the large map (focus_tiling)
        const Map& m = maps[static_cast<std::size_t>(cv.focus)];
        if (!cv.thumbs_only) draw_map(st, g, cv, m, 0, format_of(m), st.panels.heads_fit ? -1 : -2);
        else bottom = cv.origin.y;
        bottom = std::max(bottom, draw_thumbnails(st, g, cv, maps));
    } else {
        for (std::size_t mi = 0; mi < maps.size(); ++mi)
            draw_map(st, g, cv, maps[mi], mi, format_of(maps[mi]), g.comparing ? -2 : static_cast<int>(mi));
    }
    const float ly = bottom + 2;
    if (cv.legend_beside && cv.focus >= 0)  // beside the large map, under its title
        draw_legend(g, cv, cv.origin.y + cv.line_h, true, cv.origin.x + cv.label_w + static_cast<float>(g.N) * cv.cell + 2 * cv.font);
    const bool under = cv.legend && !cv.legend_beside;
    const float x = under ? draw_legend(g, cv, ly) : cv.origin.x;
    const int lines = under ? legend_lines(legend_parts(g, cv.bound, legend_bar(cv), cv.font), cv.avail.x, cv.font) : 0;
    const float maps_w = cv.focus >= 0 ? cv.avail.x : cv.tiling.columns * cv.map_w;
    ImGui::Dummy({std::max(maps_w, x - cv.origin.x) + 4, ly + lines * cv.line_h - cv.origin.y});
}

}  // namespace headsplit::gui
