// Code: the PyTorch module for the current mode, its forward pass built from the trace's
// own code lines, the current step's line highlighted and every line's output shape beside it.
#include <imgui.h>

#include "panels.hpp"
#include "style.hpp"

namespace headsplit::gui {

namespace {

struct Line {
    std::string text;
    int step = -1;           // the step it stands for (-1: a line without one)
    std::string shape;       // its output shape
};

std::string dims(std::int64_t a, std::int64_t b) { return std::to_string(a) + " x " + std::to_string(b); }

std::vector<Line> listing(const Trace& tr, int current) {
    const Config& c = tr.config;
    const std::string bias = c.qkv_bias ? "True" : "False";
    std::vector<Line> out;
    auto add = [&](std::string text) { out.push_back({std::move(text), -1, ""}); };
    if (c.mode == Mode::Loop) {
        add("class MultiHeadAttentionWrapper(nn.Module):");
        add("  def __init__(self, d_in, d_out, num_heads):");
        add("    # one small head per head: " + dims(c.d_in, c.head_dim()) + " weights each");
        add("    self.heads = nn.ModuleList([CausalAttention(d_in, d_out // num_heads)");
        add("                                for _ in range(num_heads)])");
    } else if (c.mode == Mode::Split) {
        add("class MultiHeadAttention(nn.Module):");
        add("  def __init__(self, d_in, d_out, num_heads):");
        add("    # one " + dims(c.d_in, c.d_out) + " weight per component, all heads inside");
        add("    self.W_query = nn.Linear(d_in, d_out, bias=" + bias + ")");
        add("    self.W_key = nn.Linear(d_in, d_out, bias=" + bias + ")");
        add("    self.W_value = nn.Linear(d_in, d_out, bias=" + bias + ")");
    } else {
        add("class FusedMultiHeadAttention(nn.Module):");
        add("  def __init__(self, d_in, d_out, num_heads):");
        add("    # Q, K and V stacked: one " + dims(c.d_in, 3 * c.d_out) + " weight");
        add("    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=" + bias + ")");
    }
    if (c.out_proj) add("    self.out_proj = nn.Linear(d_out, d_out)");
    if (c.dropout > 0) add("    self.dropout = nn.Dropout(" + cell_text(static_cast<float>(c.dropout)) + ")");
    add("");
    add("  def forward(self, x):");
    const int cur_head = tr.steps[current].head;
    bool in_loop = false;
    for (const Step& s : tr.steps) {
        if (s.head > 0) continue;  // loop mode: the body is listed once, for head 0
        if (s.head == 0 && !in_loop) {
            add("    for h in range(self.num_heads):" + std::string(cur_head >= 0 ? "   # h = " + std::to_string(cur_head) : ""));
            in_loop = true;
        }
        if (s.head < 0 && in_loop) in_loop = false;
        std::string code = s.code;
        if (s.head == 0) {
            const auto pos = code.find("heads[0]");
            if (pos != std::string::npos) code.replace(pos, 8, "heads[h]");
        }
        // A loop step's line stands for the current head's step when one is shown.
        int step = s.index;
        if (s.head == 0 && cur_head >= 0)
            for (const Step& o : tr.steps)
                if (o.head == cur_head && o.op == s.op) step = o.index;
        const TensorRecord& t = tr.steps[step].tensors.back();
        out.push_back({std::string(in_loop ? "      " : "    ") + code, step, shape_str(t.shape)});
    }
    add(std::string("    return ") + (c.out_proj ? "output" : "context_vec"));
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
