// Timeline: every step as a clickable tile (op and shape), previous / play / next, speed.
#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

// Tile colour by what happened to memory in the step: the stage's colour, darkened so the
// tile's white text reads on it.
ImVec4 storage_tint(Storage s) {
    const ImVec4 c = storage_color(s);
    return {c.x * 0.6f, c.y * 0.6f, c.z * 0.6f, 1};
}

}  // namespace

void DrawTimeline(AppState& st, double now) {
    if (!st.trace) {
        ImGui::TextUnformatted("computing the first trace ...");
        return;
    }
    const auto& steps = st.trace->steps;
    // The row of buttons and where we are fits from 1024x768 at text 1.5; the strip scrolls.
    scroll_below_projector_size(st.font_scale);
    if (st.panels.controls_fold) {  // a narrow window: the controls column folded away
        const char* label = st.controls_shown ? "hide controls" : "controls";
        if (ImGui::Button(label)) st.controls_shown = !st.controls_shown;
        audit_last_item(label);
        ImGui::SameLine();
    }
    if (ImGui::Button("< prev")) go_to_step(st, st.step - 1, now);
    audit_last_item("< prev");
    ImGui::SameLine();
    if (ImGui::Button(st.playing ? "pause" : "play")) {
        st.playing = !st.playing;
        st.last_advance = now;
        if (st.playing && st.step + 1 >= static_cast<int>(steps.size())) go_to_step(st, 0, now);
    }
    audit_last_item(st.playing ? "pause" : "play");
    ImGui::SameLine();
    if (ImGui::Button("next >")) go_to_step(st, st.step + 1, now);
    audit_last_item("next >");
    ImGui::SameLine();
    // The speed takes what the row leaves after where we are ("step 7 of 11", which must show:
    // at 1024x768, text 1.5, a labelled slider pushed it past the window's edge).
    const std::string last = std::to_string(steps.size() - 1), where = "step " + std::to_string(st.step) + " of " + last;
    // Measured at its widest, so that the slider keeps its width from step 9 to step 10.
    const float spacing = ImGui::GetStyle().ItemSpacing.x,
                where_w = ImGui::CalcTextSize(("step " + last + " of " + last).c_str()).x;
    const float room = ImGui::GetContentRegionAvail().x - spacing - where_w;
    ImGui::SetNextItemWidth(std::max(std::min(room, 230 * st.font_scale), ImGui::CalcTextSize("0.5 s a step").x +
                                                                          2 * ImGui::GetStyle().FramePadding.x));
    ImGui::SliderFloat("##speed", &st.seconds_per_step, 0.5f, 6.0f, "%.1f s a step");
    audit_last_item("s a step");
    ImGui::SameLine();
    ImGui::TextDisabled("%s", where.c_str());
    audit_last_item(where);

    // The strip of steps, scrolling sideways under the buttons, which stay.
    const float tile_h = ImGui::GetTextLineHeight() * 2 + 10;
    ImGui::BeginChild("steps", {0, tile_h + ImGui::GetStyle().ScrollbarSize + 2}, false,
                      ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    audit_panel("timeline steps");  // a panel of its own for the audit: it scrolls, the buttons above do not
    for (const Step& s : steps) {
        char label[128];
        const TensorRecord& t = s.result();
        const std::string shape = quiz_hides(st, s.index) ? "[?]" : shape_str(t.shape);
        if (s.head >= 0)
            std::snprintf(label, sizeof label, "%d %s h%d\n%s##step%d", s.index, op_name(s.op), s.head, shape.c_str(), s.index);
        else if (s.round >= 0)
            std::snprintf(label, sizeof label, "%d %s r%d\n%s##step%d", s.index, op_name(s.op), s.round, shape.c_str(), s.index);
        else
            std::snprintf(label, sizeof label, "%d %s\n%s##step%d", s.index, op_name(s.op), shape.c_str(), s.index);
        ImVec4 tint = storage_tint(t.storage);
        const bool current = s.index == st.step;
        if (!current) tint.w = 0.55f;
        ImGui::PushStyleColor(ImGuiCol_Button, tint);
        ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(tint.x + 0.1f, tint.y + 0.1f, tint.z + 0.1f, 1));
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 1, 1, current ? 1.0f : 0.85f));
        if (current) ImGui::PushStyleVar(ImGuiStyleVar_FrameBorderSize, 3.0f);
        if (ImGui::Button(label, ImVec2(0, tile_h))) go_to_step(st, s.index, now);
        audit_last_item(label);
        if (current) {
            ImGui::PopStyleVar();
            // The current step is brought into view whenever it changes (and while playing), over
            // as many frames as the scroll needs to reach it; the reader may scroll away after.
            const float left = ImGui::GetWindowPos().x, right = left + ImGui::GetWindowWidth();
            const bool in_view = ImGui::GetItemRectMin().x >= left && ImGui::GetItemRectMax().x <= right;
            if (st.panels.timeline_step != st.step || st.playing) {
                if (!in_view) ImGui::SetScrollHereX(0.5f);
                else st.panels.timeline_step = st.step;
            }
        }
        ImGui::PopStyleColor(3);
        if (ImGui::IsItemHovered() && !quiz_hides(st, s.index)) ImGui::SetTooltip("%s", s.explain.c_str());
        ImGui::SameLine();
    }
    ImGui::NewLine();
    ImGui::EndChild();
}

}  // namespace headsplit::gui
