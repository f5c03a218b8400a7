// Where the panels stand: one fixed window per panel, laid out for the display size, and the
// splitters on their boundaries; presenter mode's caption, stage and heads.
#include <algorithm>
#include <cmath>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>  // MarkIniSettingsDirty

#include "gui/model/why.hpp"
#include "gui/view/layout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

// A splitter: a thin strip on a boundary between panels; dragging it moves the boundary,
// a fraction of the window kept in st.splits.
struct Splitter {
    int id;
    bool vertical;    // a vertical line (drag left and right)
    float at;         // its x (vertical) or y
    float from, to;   // its extent along the other axis
    float* fraction;  // what dragging sets
    float origin, span, lo, hi;  // fraction = (mouse - origin) / span, clamped to [lo, hi]
};

// `dragging`: the id of the splitter a drag holds, -1 when none.
void handle_splitters(int& dragging, const std::vector<Splitter>& splitters) {
    const ImGuiIO& io = ImGui::GetIO();
    const ImVec2 m = io.MousePos;
    const float grab = 5.0f;
    for (const Splitter& sp : splitters) {
        const float along = sp.vertical ? m.y : m.x, across = sp.vertical ? m.x : m.y;
        const bool hovered = along >= sp.from && along <= sp.to && std::abs(across - sp.at) <= grab;
        if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) dragging = sp.id;
        if (!hovered && dragging != sp.id) continue;
        ImGui::SetMouseCursor(sp.vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
        const ImVec2 a = sp.vertical ? ImVec2(sp.at, sp.from) : ImVec2(sp.from, sp.at);
        const ImVec2 b = sp.vertical ? ImVec2(sp.at, sp.to) : ImVec2(sp.to, sp.at);
        ImGui::GetForegroundDrawList()->AddLine(a, b, ImGui::GetColorU32(ImGuiCol_SeparatorActive), 3.0f);
        if (dragging == sp.id) {
            if (ImGui::IsMouseDown(ImGuiMouseButton_Left))
                *sp.fraction = std::clamp((across - sp.origin) / sp.span, sp.lo, sp.hi);
            else
                dragging = -1, ImGui::MarkIniSettingsDirty();  // the settings file keeps the fractions
        }
    }
}

// The stage scrolls only when the reader zoomed in; at zoom 1 it fits and never shows a bar
// (a bar appearing would take the room its content was fitted to).
ImGuiWindowFlags stage_flags(const AppState& st) {
    return ImGuiWindowFlags_NoScrollWithMouse |
           (st.stage_view.zoom > 1.0f ? ImGuiWindowFlags_HorizontalScrollbar : ImGuiWindowFlags_NoScrollbar);
}

// Beside the weight split or the why tab (W, Y): the view as narrow as keeps, in turn where
// any share has it, its buttons on one line, its text whole without scrolling, its picture
// legible (W_query's numbers, a chart of three ticks); the stage the rest. Measured on the
// view alone, so that the share holds from step to step.
float side_share(const AppState& st, float W, float column) {
    using Side = AppState::PresenterSide;
    float best_f = st.splits.stage;
    int best = -1;
    for (int i = 0; i <= 25; ++i) {
        const float f = 0.3f + 0.02f * static_cast<float>(i);
        const float view_w = W - std::floor(W * f);
        const PanelNeed view = st.presenter_side == Side::Weights ? MeasureWeightSplit(st, {view_w, column}, true)
                                                                  : MeasureWhy(st, {view_w, column}, true);
        if (view.text_h < 0) return st.splits.stage;
        const int tier = 4 * (view_w >= view.min_w) + 2 * (view.text_h <= column) + (view.need_h <= column);
        if (tier >= best) best = tier, best_f = f;
    }
    return best_f;
}

// Presenter mode's share of the width for the stage beside the heads, at a step about the
// attention weights: measured, unless the reader dragged the splitter. Each share from 0.3
// to 0.8 is tried that leaves the stage its text and 4 px cells and the heads panel its
// lines whole. Kept, in turn, where any share has it: every token named on both panels (no
// label thinned for want of room), legible cells on the panel the step is
// about (the heads panel's maps from the scores to the dropout and flash mode's tiles, else
// the stage), legible cells on the other, every part of the step's panel shown (every
// head's map, not one large; the whole tensors, not a window), its numbers shown (the
// heatmaps: every step's, else some step's, the same at every step), every part of
// the other; then the step's panel's cells at 90% of the largest at least, counted by the
// share of them shown (a window of a large tensor grows with the room; a tenth smaller, maps
// in two rows may fill a panel that one row leaves half empty); and of those, beside the
// heads' picture the one that gives it the least width, beside the stage's the one that
// gives the stage the most while the heads' cells stay within 3% of their largest: the
// step's picture takes the room until its cells stop growing, the other the rest. Both are
// measures of what each panel must show, not of the frame before.
float presenter_stage_share(const AppState& st, float W, float column) {
    using Side = AppState::PresenterSide;
    if (st.panels.presenter_split_set || st.presenter_side == Side::Inspector) return st.splits.stage;
    if (st.presenter_side != Side::Heads) return side_share(st, W, column);
    const Step* s = st.current();
    const bool flash = st.trace && st.trace->config.mode == Mode::Flash;
    const bool maps_step = s && (is_grid_op(s->op) || (flash && s->op == Op::Tile));  // the heads panel's picture
    struct Try {
        float f;
        int every;
        float mine;   // the cells of the step's panel, times the share of them it shows
        float other;  // the other's cells
    };
    std::vector<Try> tries;
    for (int i = 0; i <= 25; ++i) {
        const float f = 0.3f + 0.02f * static_cast<float>(i);
        const float stage_w = std::floor(W * f);
        const PanelNeed stage = MeasureStage(st, {stage_w, column}, false);
        const PanelNeed heads = flash ? MeasureFlashTiles(st, {W - stage_w, column}, true)
                                      : MeasureHeatmaps(st, {W - stage_w, column}, true);
        if (stage.cell < 0 || heads.cell < 0) return st.splits.stage;
        if (stage.min_h > column || W - stage_w < heads.min_w) continue;
        const PanelNeed& mine = maps_step ? heads : stage;
        const PanelNeed& other = maps_step ? stage : heads;
        // (A pixel and a half to spare: the panel draws at whole pixels what was measured.)
        const auto shows = [&](float numbers) { return numbers > 0 && mine.cell >= numbers + 1.5f; };
        const int numbers = 2 * shows(mine.numbers) + shows(mine.numbers_some);
        tries.push_back({f, 64 * (mine.named && other.named) + 32 * (mine.cell >= mine.legible) + 16 * (other.cell >= other.legible) +
                                8 * mine.every + 2 * numbers + other.every,
                         mine.cell * mine.shown, other.cell * other.shown});
    }
    if (tries.empty()) return st.splits.stage;
    int every = 0;
    float largest = 0;
    for (const Try& t : tries) every = std::max(every, t.every);
    for (const Try& t : tries)
        if (t.every == every) largest = std::max(largest, t.mine);
    float other = 0;  // the other's largest of those kept
    const auto kept = [&](const Try& t) { return t.every == every && t.mine >= 0.9f * largest; };
    for (const Try& t : tries)
        if (kept(t)) other = std::max(other, t.other);
    // From the stage's widest share: beside the heads' picture the narrowest heads panel kept
    // (the stage's cells change from step to step with its tensors, so they decide nothing
    // there and the share holds over the heads' steps); beside the stage's picture, the
    // widest stage that leaves the heads' cells within 3% of their largest.
    for (std::size_t i = tries.size(); i-- > 0;)
        if (kept(tries[i]) && (maps_step || tries[i].other >= 0.97f * other)) return tries[i].f;
    return st.splits.stage;
}

void draw_presenter(AppState& st, double now) {
    // Keys only: the caption across the top, the stage and the heatmaps share the rest.
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    const float W = size.x, H = size.y;
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   ImGuiWindowFlags_NoSavedSettings;
    auto place = [&](float x, float y, float w, float h) {
        ImGui::SetNextWindowPos({x, y}, ImGuiCond_Always);
        ImGui::SetNextWindowSize({std::max(w, 50.0f), std::max(h, 50.0f)}, ImGuiCond_Always);
    };
    take_result(st, now);
    const ImGuiStyle& style = ImGui::GetStyle();
    // As tall as the caption's lines (they wrap at large fonts), measured before it is placed;
    // a live lesson's answers, in the live strip's place after a reveal, as tall as they were
    // drawn the frame before.
    const float measured = std::ceil(MeasureCaption(st, W - 2 * style.WindowPadding.x));
    const bool answers = LessonAnswersShown(st);
    const float caption_h = std::min(answers ? std::max(measured, st.panels.caption_h) : measured, std::floor(H * 0.55f));
    place(0, 0, W, caption_h);
    if (ImGui::Begin("Presenter", nullptr, fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar)) {
        DrawCaption(st);
        const float used = ImGui::GetCursorPosY() + style.WindowPadding.y;
        st.panels.caption_h = answers ? used : 0.0f;
        if (!answers && std::abs(used - measured) > 1) frame_watch().mismeasured("the caption's height", measured, used);
    }
    ImGui::End();
    st.hover = Hover{};
    // The heads show beside the steps about the attention weights (scores to context); a
    // question waiting, and every other step, gives the stage the whole width.
    // --tab weights and --tab why open presenter mode beside their view.
    using Side = AppState::PresenterSide;
    if (st.open_weights) st.presenter_side = Side::Weights;
    if (st.open_why) st.presenter_side = Side::Why;
    st.open_weights = st.open_why = false;
    const Step* s = st.current();
    const bool about_weights = s && heatmaps_off(st).empty() && (is_grid_op(s->op) || s->op == Op::Context || s->op == Op::Tile);
    const bool asking = quiz_waiting(st) || (!about_weights && st.presenter_side == Side::Heads);
    // A live lesson's corner line stands under the stage and the heads, covering neither.
    const float below = LessonStripHeight(st);
    const float stage_w = asking ? W : std::floor(W * presenter_stage_share(st, W, H - caption_h - below));
    place(0, caption_h, stage_w, H - caption_h - below);
    if (ImGui::Begin("Stage", nullptr, fixed | stage_flags(st) | ImGuiWindowFlags_NoTitleBar)) {
        audit_panel("stage");
        DrawStage(st, now);
    }
    ImGui::End();
    if (asking) return;
    place(stage_w, caption_h, W - stage_w, H - caption_h - below);
    switch (st.presenter_side) {
        case Side::Heads:
            if (ImGui::Begin("Heads", nullptr, fixed | ImGuiWindowFlags_NoScrollbar)) DrawHeatmaps(st);  // fitted
            break;
        case Side::Weights:
            if (ImGui::Begin("Weight split", nullptr, fixed)) DrawWeightSplit(st);
            break;
        case Side::Why:
            if (ImGui::Begin("Why split", nullptr, fixed)) DrawWhy(st);
            break;
        case Side::Inspector:
            if (ImGui::Begin("Inspector", nullptr, fixed)) {
                audit_panel("inspector");
                DrawInspector(st);
            }
            break;
    }
    ImGui::End();
    handle_splitters(st.panels.dragging_splitter, {{5, true, stage_w, caption_h, H, &st.splits.stage, 0, W, 0.3f, 0.8f}});
    if (st.panels.dragging_splitter == 5) st.panels.presenter_split_set = true;
}

}  // namespace

// The heads panel's height under the stage (0 while a question waits): the stage above, the
// heads below, sharing the column by what each needs; `split_origin` and `split_span` are set
// to what the splitter's fraction is of. `titled`: the panels have title bars.
float heads_share(AppState& st, const ImVec2& window, float left, float right, float timeline_h, bool asking, bool titled,
                  float& split_origin, float& split_span) {
    const float W = window.x, H = window.y;
    const float column = H - timeline_h;
    // Measured before the panels are placed: the stage, and the heads panel's tab on screen
    // (the heatmaps or flash mode's tiles, the weight split, the why tab).
    const PanelNeed stage = MeasureStage(st, {W - left - right, column}, titled);
    const PanelState& ps = st.panels;
    PanelNeed heads;
    if (!asking) {
        const ImVec2 panel{W - left - right, column};
        const bool flash = st.trace && st.trace->config.mode == Mode::Flash;
        heads = ps.weights_tab ? MeasureWeightSplit(st, panel, titled)
                : ps.why_tab   ? MeasureWhy(st, panel, titled)
                : flash        ? MeasureFlashTiles(st, panel, titled)
                               : MeasureHeatmaps(st, panel, titled);
    }
    // When both fit at a legible size, each its need and the splitter's fraction of the rest
    // (a heads panel showing a line alone, no weights yet or none any more, its line); else
    // where memory is the lesson the stage as much as it needs, the heads their text; at the
    // maps' steps (scores to dropout, flash's tiles) the maps as much as they need, the stage
    // its text and 4 px cells; else, but at the other steps beside maps of more than 4 tokens
    // (the stage's picture then), the heads legible, the stage's cells 4 px at least; else
    // each its text and a share of the rest in proportion to its cells' need. Until both are
    // known, the splitter's fraction.
    float bottom_h = column * (1.0f - st.splits.stage);
    split_origin = timeline_h, split_span = column;
    if (stage.need_h > 0 && heads.need_h > 0) {
        const bool heads_idle = st.panels.heatmaps_tab && !heatmaps_off(st).empty();
        const Step* here = st.current();
        // The heads panel's text (its line where it shows one alone): its cells may shrink.
        const float least_heads = heads_idle ? heads.need_h : heads.text_h;
        // (Flash mode's tiles are its maps: a tile step's picture is the heads panel's.)
        const bool maps_step = st.panels.heatmaps_tab && here && (is_grid_op(here->op) || here->op == Op::Tile);
        // Beside the maps or flash's tiles, a step whose picture is the stage's own, while the
        // maps' legible size is less than their numbers' (more than 4 tokens): the two share.
        const bool numbered = heads.numbers > 0 && heads.legible + 0.5f >= heads.numbers;
        const bool stage_step = st.panels.heatmaps_tab && here && !is_grid_op(here->op) && here->op != Op::Tile && !numbered;
        if (stage.need_h + heads.need_h <= column && heads_idle) {
            bottom_h = heads.need_h;
        } else if (stage.need_h + heads.need_h <= column) {
            split_origin = timeline_h + stage.need_h, split_span = column - stage.need_h - heads.need_h;
            bottom_h = heads.need_h + split_span * (1.0f - st.splits.stage);
        } else if (stage.lesson && stage.min_h + least_heads <= column) {
            bottom_h = std::max(column - stage.need_h, least_heads);  // the strip first, the heads the rest
        } else if (maps_step && heads.text_h + stage.min_h <= column) {
            // the maps first, until their cells stop growing; the stage the rest
            bottom_h = std::min(std::max(heads.need_h, heads.full_h), column - stage.min_h);
        } else if (!stage_step && heads.need_h + stage.min_h <= column) {
            bottom_h = heads.need_h;  // the heads legible, the stage's cells 4 px at least
        } else if (column > stage.text_h + heads.text_h) {
            const float cells = column - stage.text_h - heads.text_h;
            const float want_s = std::max(stage.need_h - stage.text_h, 1.0f), want_h = std::max(heads.need_h - heads.text_h, 1.0f);
            bottom_h = heads.text_h + cells * want_h / (want_s + want_h);
        }
    }
    // The stage's explanation where the room the stage was given holds it beside the cells'
    // need (the inspector shows it anyway): so the share does not change with its length.
    if (stage.need_h > 0) st.panels.stage_explains = column - bottom_h - stage.need_h >= stage.explain_h;
    if (asking) bottom_h = 0;
    // The weight split's and the why tab's text in the room measured for it shows no scroll bar
    // (one would narrow the width the text was measured at, and a line wrap).
    st.panels.heads_scroll = heads.text_h < 0 || heads.text_h > bottom_h + 0.5f;
    return bottom_h;
}

// The controls' column: the splitter's share of the window, up to 330 px x text size, and at
// least its widest row that cannot wrap (a toggle's or a button's label: narrower, the scroll
// bar covers its last word), where that is a quarter of the window at most. A share under
// 180 px per unit of text size (1024x768 from text 1.25, 1280x800 at 1.5), or one its rows
// would have to widen past a quarter (1366x768 at text 1.5), folds away (0) and the stage
// comes first; the timeline's "controls" button brings it back, as wide as its rows.
float controls_width(AppState& st, float W) {
    const float full = st.splits.left * std::min(W, 1650.0f * st.font_scale), rows = ControlsRowsWidth();
    st.panels.controls_fold = full < 180.0f * st.font_scale || (full < rows && rows > 0.25f * W);
    return std::min(!st.panels.controls_fold || st.controls_shown ? std::max(full, rows) : 0.0f, 0.45f * W);
}

// The heads panel's tabs: the heatmaps, the weight split, the why split.
void draw_heads_tabs(AppState& st) {
    if (ImGui::BeginTabBar("bottom")) {
        st.panels.heatmaps_tab = st.panels.why_tab = st.panels.weights_tab = false;
        if (ImGui::BeginTabItem(kHeadsTabs[0], nullptr, st.open_heatmaps ? ImGuiTabItemFlags_SetSelected : 0)) {
            st.panels.heatmaps_tab = true;
            DrawHeatmaps(st);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem(kHeadsTabs[1], nullptr, st.open_weights ? ImGuiTabItemFlags_SetSelected : 0)) {
            st.panels.weights_tab = true;
            DrawWeightSplit(st);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem(kHeadsTabs[2], nullptr, st.open_why ? ImGuiTabItemFlags_SetSelected : 0)) {
            st.panels.why_tab = true;
            DrawWhy(st);
            ImGui::EndTabItem();
        }
        st.open_why = st.open_weights = st.open_heatmaps = false;
        ImGui::EndTabBar();
    }
}

void DrawPanels(AppState& st, double now) {
    if (st.blank) {  // B again brings it back
        take_result(st, now);
        return;
    }
    if (st.presenting) {
        draw_presenter(st, now);
        return;
    }
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    const float W = size.x, H = size.y;
    // The stage and the heads are the show: by default the controls and the code columns
    // take what their text needs at this font, no more than a fifth and a quarter of the
    // width; the splitters move every boundary.
    // (At the default fractions the caps are 330 and 560 px x font scale.)
    const float left = controls_width(st, W);
    // The code column as wide as its longest line needs at a mid code size, up to 30% of the
    // window, when that is wider than the splitter's.
    const float right = std::max(st.splits.right * std::min(W, 2240.0f * st.font_scale),
                                 std::min(MeasureCode(st, 0, false).w, 0.3f * W));
    const ImGuiStyle& style = ImGui::GetStyle();
    // On a short window (under 720 px per unit of text size) the panels but the controls go
    // without title bars: the timeline's buttons, the stage's heading, the heads' tabs and the
    // code say what they are, and the cells get the lines.
    const bool titled = H >= 720.0f * st.font_scale;
    const ImGuiWindowFlags title = titled ? 0 : ImGuiWindowFlags_NoTitleBar;
    const float timeline_h = (titled ? ImGui::GetFrameHeight() : 0.0f) /* title */ + ImGui::GetFrameHeightWithSpacing() /* buttons */ +
                             ImGui::GetTextLineHeight() * 2 + 10 /* tiles */ + style.ScrollbarSize +
                             style.WindowPadding.y * 2 + style.ItemSpacing.y * 2;
    // A question waiting takes the heads panel's room too: it shows nothing until it is answered.
    const bool asking = quiz_waiting(st);
    float split_origin = 0, split_span = 0;  // what the splitter's fraction is of
    const float bottom_h = heads_share(st, size, left, right, timeline_h, asking, titled, split_origin, split_span);
    const float column = H - timeline_h;
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   ImGuiWindowFlags_NoSavedSettings;
    auto place = [&](float x, float y, float w, float h) {
        ImGui::SetNextWindowPos({x, y}, ImGuiCond_Always);
        ImGui::SetNextWindowSize({std::max(w, 50.0f), std::max(h, 50.0f)}, ImGuiCond_Always);
    };

    if (left > 0) {
        place(0, 0, left, H);
        if (ImGui::Begin("Controls", nullptr, fixed)) DrawControls(st);
        ImGui::End();
    }
    // A change made above is computed at once for teaching sizes: show it in this frame.
    take_result(st, now);

    place(left, 0, W - left, timeline_h);
    if (ImGui::Begin("Timeline", nullptr, fixed | title | ImGuiWindowFlags_HorizontalScrollbar)) {
        audit_panel("timeline");
        DrawTimeline(st, now);
    }
    ImGui::End();

    st.hover = Hover{};
    place(left, timeline_h, W - left - right, H - timeline_h - bottom_h);
    if (ImGui::Begin("Stage", nullptr, fixed | title | stage_flags(st))) {
        audit_panel("stage");
        DrawStage(st, now);
    }
    ImGui::End();

    if (!asking) place(left, H - bottom_h, W - left - right, bottom_h);
    // The heatmaps are fitted and never show a bar; the weight split's and the why tab's views
    // fit the width, and scroll down only where the window is too short for their text.
    const ImGuiWindowFlags heads_scroll = st.panels.heatmaps_tab ? ImGuiWindowFlags_NoScrollbar
                                          : st.panels.why_tab || st.panels.weights_tab
                                              ? (st.panels.heads_scroll ? ImGuiWindowFlags_None : ImGuiWindowFlags_NoScrollbar)
                                              : ImGuiWindowFlags_HorizontalScrollbar;
    if (!asking && ImGui::Begin("Heads", nullptr, fixed | title | heads_scroll)) draw_heads_tabs(st);
    if (!asking) ImGui::End();

    // The code as tall as its whole listing needs at its largest font, leaving the inspector six
    // lines at least; the splitter may give it more.
    const float code_h = std::max(column * st.splits.code,
                                  std::min(MeasureCode(st, right, titled).h, column - 6 * ImGui::GetTextLineHeightWithSpacing()));
    place(W - right, timeline_h, right, code_h);
    if (ImGui::Begin("PyTorch code", nullptr, fixed | title | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
        audit_panel("code");
        DrawCode(st);
    }
    ImGui::End();

    place(W - right, timeline_h + code_h, right, H - timeline_h - code_h);
    if (ImGui::Begin("Inspector", nullptr, fixed)) DrawInspector(st);
    ImGui::End();

    std::vector<Splitter> splitters{
        {2, true, W - right, timeline_h, H, &st.splits.right, W, -W, 0.1f, 0.45f},
        {4, false, timeline_h + code_h, W - right, W, &st.splits.code, timeline_h, H - timeline_h, 0.15f, 0.85f},
    };
    if (!st.panels.controls_fold) splitters.push_back({1, true, left, 0, H, &st.splits.left, 0, W, 0.1f, 0.4f});
    if (!asking)  // the stage and the heads' boundary
        splitters.push_back({3, false, H - bottom_h, left, W - right, &st.splits.stage, split_origin, split_span, 0.2f, 0.85f});
    handle_splitters(st.panels.dragging_splitter, splitters);
}

}  // namespace headsplit::gui
