// Code: the PyTorch module for the current mode, its forward pass built from the trace's
// own code lines, the current step's line highlighted and every line's output shape beside it.
#include <imgui.h>

#include "headsplit/narration.hpp"
#include "panels.hpp"
#include "style.hpp"

namespace headsplit::gui {

namespace {

struct Line {
    std::string text;
    int step = -1;           // the step it stands for (-1: a line without one)
    std::string shape;       // its output shape
};

// The module's listing: its header and return from the narration module, and between them
// each step's own line (loop mode's body once, inside the for loop, for the head shown).
std::vector<Line> listing(const Trace& tr, int current) {
    const Config& c = tr.config;
    std::vector<Line> out;
    for (const std::string& text : module_header(c)) out.push_back({text, -1, ""});
    const int cur_head = tr.steps[current].head;
    bool in_loop = false;
    for (const Step& s : tr.steps) {
        if (s.head > 0) continue;  // loop mode: the body is listed once
        if (s.head == 0 && !in_loop) {
            out.push_back({"    " + loop_header() + (cur_head >= 0 ? "   # h = " + std::to_string(cur_head) : ""), -1, ""});
            in_loop = true;
        }
        if (s.head < 0 && in_loop) in_loop = false;
        // A loop step's line stands for the current head's step when one is shown.
        int step = s.index;
        if (s.head == 0 && cur_head >= 0)
            for (const Step& o : tr.steps)
                if (o.head == cur_head && o.op == s.op) step = o.index;
        const TensorRecord& t = tr.steps[step].tensors.back();
        out.push_back({std::string(in_loop ? "      " : "    ") + s.code, step, shape_str(t.shape)});
    }
    out.push_back({"    " + module_return(c), -1, ""});
    return out;
}

}  // namespace

void DrawCode(const AppState& st) {
    if (!st.trace) return;
    const std::vector<Line> lines = listing(*st.trace, st.step);
    ImGui::PushFont(code_font());
    const ImVec4 dim = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    // Code wraps in the first column, so the highlighted line is read whole; shapes in the second.
    if (ImGui::BeginTable("code", 2, ImGuiTableFlags_SizingStretchProp)) {
        ImGui::TableSetupColumn("code", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("shape", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("[1, 12, 128, 128]").x);
        for (const Line& l : lines) {
            const bool here = l.step == st.step;
            ImGui::TableNextRow();
            if (here) {
                ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, ImGui::GetColorU32(ImGuiCol_TextSelectedBg));
                ImGui::SetScrollHereY(0.4f);
            }
            ImGui::TableNextColumn();
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextUnformatted(l.text.empty() ? " " : l.text.c_str());
            ImGui::PopTextWrapPos();
            ImGui::TableNextColumn();
            if (!l.shape.empty()) ImGui::TextColored(here ? ImVec4(1.0f, 0.85f, 0.3f, 1) : dim, "%s", l.shape.c_str());
        }
        ImGui::EndTable();
    }
    ImGui::PopFont();
}

}  // namespace headsplit::gui
