// Inspector: where the hovered cell's value came from, with the actual numbers.
#include <cstdio>

#include <imgui.h>

#include "gui/view/explain.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

void DrawInspector(const AppState& st) {
    if (!st.trace) return;
    if (quiz_waiting(st)) {
        ImGui::TextWrapped("Predict the shape: the explanation shows with the answer.");
        return;
    }
    const Hover& h = st.hover;
    if (!h.valid) {
        const Step* s = st.current();
        // The step's explanation first: the stage leaves it here when its room is short.
        if (s) {
            ImGui::TextWrapped("%s", s->explain.c_str());
            char cost[160];
            std::snprintf(cost, sizeof cost, "%lld matmuls, %.3g MFLOP, %.3f ms, %lld dispatches", static_cast<long long>(s->matmuls),
                          s->flops / 1e6, s->ms, static_cast<long long>(s->stats.dispatches));
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            text_at_spaces(cost, false);  // its narrow column breaks it between its parts
            ImGui::PopStyleColor();
            ImGui::Separator();
        }
        ImGui::TextWrapped("Hover over any cell on the stage or a heatmap to see where its value comes from.");
        return;
    }
    const Explanation e = explain_cell(*st.trace, h.step, h.tensor, h.index);
    section_title(e.title.c_str());
    ImFont* mono = code_font();
    for (const std::string& line : e.lines) {
        if (mono && line.rfind("= ", 0) == 0) ImGui::PushFont(mono);
        text_at_spaces(line, false);  // a number is never broken ("0." / "04551")
        if (mono && line.rfind("= ", 0) == 0) ImGui::PopFont();
    }
}

}  // namespace headsplit::gui
