// Where the panels stand: one fixed window per panel, laid out for the display size, and the
// splitters on their boundaries; presenter mode's caption, stage and heads.
#include <algorithm>
#include <cmath>
#include <vector>

#include <imgui.h>

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
                dragging = -1;
        }
    }
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
    // The step line (1.5x), the code, the keys, the live strip and the line on the last change.
    const float caption_h = ImGui::GetTextLineHeightWithSpacing() * 1.5f + 3 * ImGui::GetTextLineHeightWithSpacing() +
                            ImGui::GetFrameHeightWithSpacing() +
                            style.WindowPadding.y * 2 + 4;
    place(0, 0, W, caption_h);
    if (ImGui::Begin("Presenter", nullptr, fixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_HorizontalScrollbar))
        DrawCaption(st);
    ImGui::End();
    st.hover = Hover{};
    // A question waiting takes the heads' room too: they show nothing until it is answered.
    const bool asking = quiz_waiting(st);
    const float stage_w = asking ? W : W * st.splits.stage;
    place(0, caption_h, stage_w, H - caption_h);
    if (ImGui::Begin("Stage", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
        audit_panel("stage");
        DrawStage(st, now);
    }
    ImGui::End();
    if (asking) return;
    place(stage_w, caption_h, W - stage_w, H - caption_h);
    if (ImGui::Begin("Heads", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) DrawHeatmaps(st);
    ImGui::End();
    handle_splitters(st.panels.dragging_splitter, {{5, true, stage_w, caption_h, H, &st.splits.stage, 0, W, 0.3f, 0.8f}});
}

}  // namespace

void DrawPanels(AppState& st, double now) {
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
    const float left = st.splits.left * std::min(W, 1650.0f * st.font_scale);
    const float right = st.splits.right * std::min(W, 2240.0f * st.font_scale);
    const ImGuiStyle& style = ImGui::GetStyle();
    const float timeline_h = ImGui::GetFrameHeight() /* title */ + ImGui::GetFrameHeightWithSpacing() /* buttons */ +
                             ImGui::GetTextLineHeight() * 2 + 10 /* tiles */ + style.ScrollbarSize +
                             style.WindowPadding.y * 2 + style.ItemSpacing.y * 2;
    // A question waiting takes the heads panel's room too: it shows nothing until it is answered.
    const bool asking = quiz_waiting(st);
    const float bottom_h = asking ? 0.0f : (H - timeline_h) * (1.0f - st.splits.stage);
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   ImGuiWindowFlags_NoSavedSettings;
    auto place = [&](float x, float y, float w, float h) {
        ImGui::SetNextWindowPos({x, y}, ImGuiCond_Always);
        ImGui::SetNextWindowSize({std::max(w, 50.0f), std::max(h, 50.0f)}, ImGuiCond_Always);
    };

    place(0, 0, left, H);
    if (ImGui::Begin("Controls", nullptr, fixed)) DrawControls(st, now);
    ImGui::End();
    // A change made above is computed at once for teaching sizes: show it in this frame.
    take_result(st, now);

    place(left, 0, W - left, timeline_h);
    if (ImGui::Begin("Timeline", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) {
        audit_panel("timeline");
        DrawTimeline(st, now);
    }
    ImGui::End();

    st.hover = Hover{};
    place(left, timeline_h, W - left - right, H - timeline_h - bottom_h);
    if (ImGui::Begin("Stage", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
        audit_panel("stage");
        DrawStage(st, now);
    }
    ImGui::End();

    if (!asking) place(left, H - bottom_h, W - left - right, bottom_h);
    if (!asking && ImGui::Begin("Heads", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) {
        if (ImGui::BeginTabBar("bottom")) {
            if (ImGui::BeginTabItem("Attention heatmaps", nullptr, st.open_heatmaps ? ImGuiTabItemFlags_SetSelected : 0)) {
                DrawHeatmaps(st);
                ImGui::EndTabItem();
            }
            if (ImGui::BeginTabItem("Weight split", nullptr, st.open_weights ? ImGuiTabItemFlags_SetSelected : 0)) {
                DrawWeightSplit(st);
                ImGui::EndTabItem();
            }
            if (ImGui::BeginTabItem("Why weight splits", nullptr, st.open_why ? ImGuiTabItemFlags_SetSelected : 0)) {
                DrawWhy(st);
                ImGui::EndTabItem();
            }
            st.open_why = st.open_weights = st.open_heatmaps = false;
            ImGui::EndTabBar();
        }
    }
    if (!asking) ImGui::End();

    const float code_h = (H - timeline_h) * st.splits.code;
    place(W - right, timeline_h, right, code_h);
    if (ImGui::Begin("PyTorch code", nullptr, fixed | ImGuiWindowFlags_HorizontalScrollbar)) {
        audit_panel("code");
        DrawCode(st);
    }
    ImGui::End();

    place(W - right, timeline_h + code_h, right, H - timeline_h - code_h);
    if (ImGui::Begin("Inspector", nullptr, fixed)) DrawInspector(st);
    ImGui::End();

    std::vector<Splitter> splitters{
        {1, true, left, 0, H, &st.splits.left, 0, W, 0.1f, 0.4f},
        {2, true, W - right, timeline_h, H, &st.splits.right, W, -W, 0.1f, 0.45f},
        {4, false, timeline_h + code_h, W - right, W, &st.splits.code, timeline_h, H - timeline_h, 0.15f, 0.85f},
    };
    if (!asking)  // the stage and the heads' boundary
        splitters.push_back({3, false, H - bottom_h, left, W - right, &st.splits.stage, timeline_h, H - timeline_h, 0.2f, 0.85f});
    handle_splitters(st.panels.dragging_splitter, splitters);
}

}  // namespace headsplit::gui
