// Stage: the current step's tensors as grids of cells, coloured by head, moving from where
// they stood in the previous step; below, the buffer as it lies in memory.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <list>
#include <memory>

#include <imgui.h>

#include "gui/view/layout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/stage_parts.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {


using namespace stage;  // the panel's parts

namespace {

// The wheel zooms about the pointer; a drag pans the window over a tensor larger than it (or
// scrolls the panel where the window already shows the whole axis); a double-click resets.
// Offsets take effect from the next frame's layout.
void handle_view(AppState& st, const StepLayout& L, int variant, float cell) {
    AppState::StageView& v = st.stage_view;
    const ImGuiIO& io = ImGui::GetIO();
    const bool hovered = ImGui::IsWindowHovered();
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        v = {};
        ImGui::SetScrollX(0);
        ImGui::SetScrollY(0);
        return;
    }
    if (hovered && io.MouseWheel != 0) {
        const float before = v.zoom;
        v.zoom = std::clamp(v.zoom * std::pow(1.25f, io.MouseWheel), 1.0f, 8.0f);
        const float r = v.zoom / before;
        const ImVec2 wp = ImGui::GetWindowPos();
        const float mx = io.MousePos.x - wp.x, my = io.MousePos.y - wp.y;
        ImGui::SetScrollX(std::max(0.0f, (ImGui::GetScrollX() + mx) * r - mx));
        ImGui::SetScrollY(std::max(0.0f, (ImGui::GetScrollY() + my) * r - my));
    }
    if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && !ImGui::IsAnyItemActive()) {
        v.dragging = true;
        v.drag_x = v.drag_y = 0;
    }
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) v.dragging = false;
    if (!v.dragging || (io.MouseDelta.x == 0 && io.MouseDelta.y == 0) || !(cell > 0)) return;
    LayoutLimits lim = layout_variant(variant);
    lim.token0 = v.token0, lim.col0 = v.col0, lim.head0 = v.head0;
    const Pan p = pan_window(lim, L, v.drag_x + io.MouseDelta.x / cell, v.drag_y + io.MouseDelta.y / cell);
    v.token0 = lim.token0, v.col0 = lim.col0, v.head0 = lim.head0;
    v.drag_x = p.pans_x ? p.rest_x : 0;
    v.drag_y = p.pans_y ? p.rest_y : 0;
    if (!p.pans_x) ImGui::SetScrollX(std::max(0.0f, ImGui::GetScrollX() - io.MouseDelta.x));
    if (!p.pans_y) ImGui::SetScrollY(std::max(0.0f, ImGui::GetScrollY() - io.MouseDelta.y));
}


std::string heading_title(const Step& s) {
    return "Step " + std::to_string(s.index) + ": " + op_name(s.op) + (s.part().empty() ? "" : " (" + s.part() + ")");
}

// Whether the heading's line on memory fits beside its title.
bool storage_beside(const std::string& title, const std::string& storage, float width) {
    return ImGui::CalcTextSize(title.c_str()).x + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize("   ").x +
               ImGui::CalcTextSize(storage.c_str()).x <=
           width;
}

// The height of step s's heading without its explanation at this width, px, as drawn below
// (`titled`: with its title, or the quiz's `verdict` in its place).
float heading_h(const Step& s, float width, bool titled, const std::string& verdict = "") {
    const float gap = ImGui::GetStyle().ItemSpacing.y;
    const std::string storage = storage_sentence(s.tensors.front().storage), title = verdict.empty() ? heading_title(s) : verdict;
    float h = 0;
    if (titled) {
        h += std::floor(ImGui::CalcTextSize(title.c_str(), nullptr, false, width).y + gap);
        if (storage_beside(title, storage, width)) return h;
    }
    return h + std::floor(ImGui::CalcTextSize(storage.c_str(), nullptr, false, width).y + gap);
}

// The step's heading: its number and op (`titled`: not where a caption names them) and what
// happened to memory (on a line of its own when the two do not fit one), then its explanation:
// where nothing else shows it (presenter mode, a page) when it takes no more than a third of
// the panel and leaves the cells legible (`cramps`: whether an explanation that tall would
// not); in the normal layout when the layout gave it the room (panels.stage_explains) and it
// takes no more than a tenth of the window's height, else the inspector has it. The quiz's
// verdict on the step, where one is shown (`verdict`), stands in the title's place: the
// timeline names the step.
void draw_heading(const AppState& st, const Step& s, bool explain_here, bool room_for_it, bool titled,
                  const std::function<bool(float)>& cramps, const std::string& verdict) {
    const std::string title = verdict.empty() ? heading_title(s) : verdict;
    const TensorRecord& first = s.tensors.front();
    const std::string storage = storage_sentence(first.storage);
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = room_left().x;
    if (titled && !verdict.empty()) {
        DrawQuizVerdict(st, verdict);
        if (storage_beside(title, storage, width)) ImGui::SameLine(0, style.ItemSpacing.x + ImGui::CalcTextSize("   ").x);
    } else if (titled) {
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
        ImGui::TextUnformatted(title.c_str());
        ImGui::PopTextWrapPos();
        audit_last_item(title);
        if (storage_beside(title, storage, width)) ImGui::SameLine(0, style.ItemSpacing.x + ImGui::CalcTextSize("   ").x);
    }
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    ImGui::TextColored(storage_color(first.storage), "%s", storage.c_str());
    ImGui::PopTextWrapPos();
    audit_last_item(storage);
    const float text_h = ImGui::CalcTextSize(s.explain.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y;
    const bool drawn = explain_here ? text_h <= ImGui::GetWindowHeight() / 3 && !cramps(text_h)
                                    : room_for_it && text_h <= 0.1f * ImGui::GetIO().DisplaySize.y;
    if (!drawn) return;
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    ImGui::TextUnformatted(s.explain.c_str());
    ImGui::PopTextWrapPos();
    audit_last_item(s.explain);
}

// A configuration not computed (over the memory or the time budget): why, the step's tensors,
// then its sizes as far as the panel has room (a line that would not fit whole is left out:
// nothing is cut at the panel's edge), all wrapped to the panel.
void draw_shapes_only(const Step& s, const Config& c, const std::string& notice) {
    // The computation's own line when it gave one ("shapes only, not computed: ..."), which
    // says which budget and what would work.
    const std::string why = notice.rfind("shapes only", 0) == 0 ? notice : "shapes only: this configuration was not computed";
    ImGui::PushStyleColor(ImGuiCol_Text, warning_ink());
    ImGui::TextWrapped("%s", why.c_str());
    ImGui::PopStyleColor();
    for (const TensorRecord& t : s.tensors) {
        ImGui::Bullet();
        ImGui::TextWrapped("%s %s  strides %s  %s", t.name.c_str(), shape_str(t.shape).c_str(),
                           shape_str(t.strides).c_str(), storage_name(t.storage));
    }
    const std::string sizes[] = {
        parameter_line(c),
        "each head's " + std::to_string(c.num_tokens()) + " x " + std::to_string(c.num_tokens()) + " score grid: " +
            grouped(c.num_tokens() * c.num_tokens() * 4) + " bytes; all heads: " +
            grouped(c.heads * c.num_tokens() * c.num_tokens() * 4) + " bytes"};
    for (const std::string& line : sizes) {
        const ImVec2 room = ImGui::GetContentRegionAvail();
        if (ImGui::CalcTextSize(line.c_str(), nullptr, false, room.x).y > room.y) break;
        ImGui::TextWrapped("%s", line.c_str());
    }
}

// The cells the stage shows in `room_h` px under its heading, `width` px wide: their side,
// the share of them and whether the tensors are whole. In presenter mode the step's
// explanation stands above the cells where it takes a third of the panel at most, as
// draw_heading puts it: the tallest of any step's is counted, so that the stage asks alike
// from step to step.
void shown_cells(const AppState& st, const Step& s, float room_h, float width, PanelNeed& n) {
    if (st.presenting) {
        const float e = st.panels.explain_tallest.of(steps_key(st.trace.get(), width), *st.trace, [&](const Step& other) {
            return ImGui::CalcTextSize(other.explain.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y;
        });
        if (e <= room_h / 3) room_h -= e;
    }
    Room room = room_of(s, st.trace->config, st.stage_view.zoom > 1.0f, {width, std::max(room_h, 1.0f)}, number_size_min(st.presenting, st.document));
    // (Where memory is the lesson the strip may stand beside the grid, or not be drawn.)
    const Choice ch = memory_lesson(s) ? place_cells(st, room, s) : choose_window(st, room, s);
    const StepLayout& L = layout_of(st, st.trace, st.step, ch.variant, st.stage_view, ch.batch_shown, ch.batch0, ch.alone);
    n.cell = std::min(ch.best, room.cell_cap);
    std::int64_t cells = 0, hidden = 0;
    for (const TensorLayout& t : L.tensors) cells += static_cast<std::int64_t>(t.cells.size()), hidden += t.hidden;
    n.shown = cells + hidden > 0 ? static_cast<float>(cells) / static_cast<float>(cells + hidden) : 1.0f;
    n.every = ch.variant < 2 * kArrangements && ch.batch_shown == std::min<std::int64_t>(st.trace->config.batch, 4);
}

// The rooms every step of a run of reshaping steps (reshape_run) is measured in for their
// numbers' decimals, whichever of them is drawn (`whole`: this one's): the panel under the
// tallest of their headings with its explanation, less a line (a panel may be a line shorter
// on a step of the run), so that no step of the run has less room than that; and the panel
// under each one's heading without it (a step given more room may draw every tensor, in
// smaller cells), so that every step of the run meets the same rooms.
std::vector<Room> run_rooms(const AppState& st, const Step& s, const Room& whole, float heading_drawn, const std::string& verdict) {
    const auto [first, last] = reshape_run(*st.trace, s.index);
    if (first < 0) return {whole};
    const float width = room_left().x;
    std::vector<Room> rooms{whole, whole};
    float tallest = 0;
    for (int k = first; k <= last; ++k) {
        const Step& other = st.trace->steps[static_cast<std::size_t>(k)];
        const float heading = heading_h(other, width, !st.presenting, verdict);
        tallest = std::max(tallest, heading + ImGui::CalcTextSize(other.explain.c_str(), nullptr, false, width).y +
                                        ImGui::GetStyle().ItemSpacing.y);
        rooms.push_back(whole);
        rooms.back().avail.y = std::max(whole.avail.y + heading_drawn - heading, 1.0f);
    }
    rooms[1].avail.y = std::max(whole.avail.y + heading_drawn - tallest - whole.line, 1.0f);
    return rooms;
}

}  // namespace

PanelNeed MeasureStage(const AppState& st, ImVec2 panel, bool window_titled) {
    PanelNeed n;
    const Step* s = st.current();
    if (!s || st.shapes_only || quiz_waiting(st)) return n;
    const Config& c = st.trace->config;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = std::max(panel.x - 2 * style.WindowPadding.x, 1.0f);
    const bool titled = !st.presenting;  // the heading names the step
    // Above the cells: the title bar and the padding, a question's verdict, the heading without
    // its explanation (the layout decides whether that has the room); beside the heatmaps (the
    // normal layout's tab, presenter mode) the tallest heading of any step, so that the stage
    // and the maps share the room alike from step to step.
    // (The normal layout's verdict stands in the title's place: what it adds to the heading.)
    const std::string verdict = QuizVerdictLine(st, width);
    float above = (window_titled ? ImGui::GetFrameHeight() : 0.0f) + 2 * style.WindowPadding.y +
                  (titled ? std::max(heading_h(*s, width, true, verdict) - heading_h(*s, width, true), 0.0f)
                          : QuizVerdictHeight(st, width));
    above += st.panels.heatmaps_tab || st.presenting
                 ? st.panels.heading_tallest.of(steps_key(st.trace.get(), width, titled ? "titled" : ""), *st.trace,
                                                [&](const Step& other) { return heading_h(other, width, titled); })
                 : heading_h(*s, width, titled);
    // Measured as if the stage had the whole column: what it must show does not depend on the
    // share it is given.
    Room room = room_of(*s, c, st.stage_view.zoom > 1.0f, {width, std::max(panel.y - above, 1.0f)}, number_size_min(st.presenting, st.document));
    // The shape and the strides measured on two lines, as a step whose captions are wider has
    // them: what the stage asks stays from step to step (drawn on one, the cells take the line).
    room.caption_line_w = 0;
    const Choice ch = choose_window(st, room, *s);
    const StepLayout& L = layout_of(st, st.trace, st.step, ch.variant, st.stage_view, ch.batch_shown, ch.batch0, ch.alone);
    n.text_h = above + text_room(room, *s, L, true, true);
    // Legible cells in the arrangement that needs the least height of those whose width lets
    // the cells be legible (else the one with the largest cells); a step of up to 64 numbers
    // (the teaching example) at the size that shows them, where the steps of its op around it
    // have no more (flash's tiles at a sentence's end hold fewer: the size asked stays).
    std::int64_t numbers = 0;
    const Step* most = s;  // the step of the most numbers
    const auto count = [&](const Step& step) {
        if (step.numbers() > numbers) numbers = step.numbers(), most = &step;
    };
    const std::vector<Step>& steps = st.trace->steps;
    for (int i = st.step; i >= 0 && i > st.step - 256 && steps[static_cast<std::size_t>(i)].op == s->op; --i) count(steps[static_cast<std::size_t>(i)]);
    for (int i = st.step + 1; i < static_cast<int>(steps.size()) && i < st.step + 256 && steps[static_cast<std::size_t>(i)].op == s->op; ++i)
        count(steps[static_cast<std::size_t>(i)]);
    const float legible = numbers <= 64 ? value_cell() : legible_cell(room);
    n.legible = legible;
    if (numbers <= 64) n.numbers = value_cell();
    shown_cells(st, *s, panel.y - above, width, n);
    // Every row named at the step of the most numbers of those around it (whose cells are the
    // smallest): so that what a layout asks for the names holds from step to step.
    const Room most_room = room_of(*most, c, st.stage_view.zoom > 1.0f, {width, std::max(panel.y - above, 1.0f)}, number_size_min(st.presenting, st.document));
    n.named = row_label_stride(std::min(choose_window(st, most_room, *most).best, most_room.cell_cap), most_room.font) == 1;
    n.need_h = 1e9f;
    float widest = -1;  // the largest cell the width allows, of the arrangements tried
    for (int v = 0; v < kArrangements; ++v) {
        if (!arrangement_differs(layout_of(st, st.trace, st.step, 0, {}, ch.batch_shown, ch.batch0, ch.alone), v, room.captions_w > 0))
            continue;
        const StepLayout& wide = layout_of(st, st.trace, st.step, v, {}, ch.batch_shown, ch.batch0, ch.alone);
        const float least = above + text_room(room, *s, wide, true, true) + 4.0f * wide.height;
        n.min_h = n.min_h < 0 ? least : std::min(n.min_h, least);
        const float cell_w = std::min((room.avail.x - room.label_w - 10) / std::max(wide.width, 1.0f), legible);
        if (cell_w < widest || (cell_w < legible && cell_w == widest)) continue;
        const float need = above + text_room(room, *s, wide, true) + cell_w * wide.height;
        if (cell_w > widest || need < n.need_h) widest = cell_w, n.need_h = need;
    }
    // Where memory is the lesson, the strip is drawn only in a room that holds it as well as
    // the grid (memory_strip_drawn): the need is such a room, the strip under the grid.
    n.lesson = memory_lesson(*s) && memory_strip_drawn(room, *s);
    if (n.lesson) {
        const float strip_h = strip_text_h(room, s->tensors.front());
        n.need_h = std::max(n.need_h, above + std::max(strip_h / 0.6f, strip_h + 5.7f * room.line));
    }
    // (Windows are placed at whole pixels.)
    n.need_h = std::ceil(n.need_h) + 1;
    n.explain_h = ImGui::CalcTextSize(s->explain.c_str(), nullptr, false, width).y + style.ItemSpacing.y;
    return n;
}

void DrawStage(AppState& st, double now) {
    const Step* s = st.current();
    if (!s) {
        ImGui::TextUnformatted("no trace yet");
        return;
    }
    if (quiz_waiting(st)) {
        DrawQuizCard(st, now);
        return;
    }
    // A verdict on the step: above the heading in presenter mode, in its title's place else.
    const std::string verdict = QuizVerdictLine(st, room_left().x);
    if (st.presenting) DrawQuizVerdict(st, verdict);
    const Config& c = st.trace->config;
    // Presenter mode's caption names the step already.
    const auto cramps = [&](float h) {
        if (st.shapes_only) return false;
        const float number_min = number_size_min(st.presenting, st.document);
        Room with = measure_room(*s, c, st.stage_view.zoom > 1.0f, number_min);
        Room without = with;
        with.avail.y -= h;
        // The strip first where it shows a view's or a merge's lesson.
        if (reshapes(*s) && memory_strip_drawn(without, *s) && !memory_strip_drawn(with, *s)) return true;
        const float cell = place_cells(st, with, *s).best;
        if (cell < legible_cell(with)) return true;  // the cells first
        // In presenter mode the numbers too, where the room of the explanation lets them show
        // (a step of more than kWholeNumbers never shows them: its values are not scanned).
        return st.presenting && s->numbers() <= kWholeNumbers && !numbers_show(*s, 1, std::min(cell, with.cell_cap), number_min) &&
               numbers_show(*s, 1, std::min(place_cells(st, without, *s).best, without.cell_cap), number_min);
    };
    const float heading_top = ImGui::GetCursorPosY();
    draw_heading(st, *s, st.presenting || st.document, st.panels.stage_explains, !st.presenting, cramps,
                 st.presenting ? "" : verdict);
    const float heading_drawn = ImGui::GetCursorPosY() - heading_top;
    if (st.shapes_only) {
        draw_shapes_only(*s, c, st.notice);
        return;
    }

    Room room = measure_room(*s, c, st.stage_view.zoom > 1.0f, number_size_min(st.presenting, st.document));
    const Room whole = room;  // before place_cells narrows it for a strip beside the grid
    const Choice ch = place_cells(st, room, *s);
    // Measured again only when what they depend on changes (the run's headings are measured
    // with them); before the step's layout is looked up: measuring the run's other steps
    // fills the layout cache.
    const std::string run_verdict = st.presenting ? "" : verdict;
    char measured[192];
    std::snprintf(measured, sizeof measured, "%d %.1f %.1f %.1f %.2f %d %d ", s->index, static_cast<double>(whole.avail.x),
                  static_cast<double>(whole.avail.y), static_cast<double>(heading_drawn),
                  static_cast<double>(ImGui::GetFontSize()), static_cast<int>(st.presenting) + 2 * static_cast<int>(st.document),
                  static_cast<int>(whole.scrolls));
    PanelState::RunDecimals& decimals = st.panels.stage_decimals;
    if (const std::string key = steps_key(st.trace.get(), 0, measured + run_verdict); decimals.key != key) {
        decimals.most = shared_decimals(st, run_rooms(st, *s, whole, heading_drawn, run_verdict), *s,
                                        number_size_min(st.presenting, st.document));
        decimals.key = key;
    }
    // Zoomed in, the reader asked for larger cells: they show what they can.
    const std::vector<int> most_decimals = st.stage_view.zoom > 1.0f ? std::vector<int>() : decimals.most;
    const StepLayout& L = layout_of(st, st.trace, st.step, ch.variant, st.stage_view, ch.batch_shown, ch.batch0, ch.alone);
    const Motion motion = motion_of(st, ch, now);
    const float span_w = std::max(L.width, motion.from ? motion.from->width : 0.0f);
    bool any_hidden = false;
    for (const TensorLayout& tl : L.tensors) any_hidden |= tl.hidden > 0;
    const float cell = cell_size(room, *s, ch, motion, st.stage_view.zoom);
    if (st.stage_view.zoom > 1.0f) frame_watch().allow_scroll();  // zoomed in: the reader pans and scrolls
    handle_view(st, L, ch.variant, cell);

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 grid0(origin.x + room.label_w, origin.y + room.line * 1.2f);
    Canvas cv{*s, c, L, room, ch.variant, st.document, number_size_max(), number_size_min(st.presenting, st.document), cell, ImGui::GetWindowDrawList(), origin, grid0,
              origin.x + ImGui::GetScrollX(), grid0.x + span_w * cell, grid0.y + L.height * cell,
              most_decimals};
    // Token names stay on the left edge when the panel is scrolled sideways (zoomed in), over
    // a backdrop so the cells pass under them: they are drawn on a channel above the cells.
    cv.dl->ChannelsSplit(2);
    cv.dl->ChannelsSetCurrent(1);
    if (ImGui::GetScrollX() > 0)
        cv.dl->AddRectFilled({cv.label_x - ImGui::GetStyle().WindowPadding.x, grid0.y},
                             {cv.label_x + room.label_w - 2, grid0.y + L.height * cell},
                             ImGui::ColorConvertFloat4ToU32(panel_background(st.dark)));
    // Under the grid, and under a token label that reaches below its small last row.
    const float below = grid0.y + L.height * cell + 4 + std::clamp((ImGui::GetTextLineHeight() - cell) * 0.5f - 3.0f, 0.0f, 0.3f * room.line);
    const bool beside = captions_beside(room, L, cell);
    draw_tensor_captions(cv, below, beside, !tiny_stage(room));  // a tiny stage: the names alone
    if (any_hidden && !tiny_stage(room)) draw_window_note(cv, below, beside);
    if (!L.tensors.empty()) draw_row_labels(cv);
    draw_panel_titles(cv);
    cv.dl->ChannelsSetCurrent(0);
    draw_cells(st, cv, motion);
    cv.dl->ChannelsMerge();

    const float y_mem = draw_strip_placed(
        st, cv, below + ((beside ? 0.0f : caption_lines(room)) + (any_hidden ? note_lines(room) : 0.0f)) * room.line);
    ImGui::Dummy({std::max(cv.right, origin.x + room.label_w + span_w * cell) - origin.x + 4,
                  std::max(y_mem, cv.bottom) - origin.y + 4});
}

}  // namespace headsplit::gui
