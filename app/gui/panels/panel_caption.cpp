// Presenter mode's caption: one large line with the step (a checkpoint run's layer first) and
// its shape change, read from the trace's links (what the step's result was made from -> the
// result), and the step's PyTorch line under it. Keys only: Left/Right, Space, F5 or Escape to leave.
#include <imgui.h>

#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

void DrawCaption(const AppState& st) {
    audit_panel("caption");
    const Step* s = st.current();
    if (!s) {
        ImGui::TextUnformatted("computing ...");
        return;
    }
    const TensorRecord& out = s->result();
    const TensorRecord* in = out.from.empty() ? nullptr : st.trace->source(out.from.front());
    // A checkpoint run names its layer: the same steps run on every layer's weights.
    const Config& c = st.trace->config;
    std::string caption = (c.weights_dir.empty() ? std::string()
                                                 : "Layer " + std::to_string(c.layer) + " (0-" + std::to_string(c.layers - 1) + "), ") +
                          "Step " + std::to_string(s->index) + " of " + std::to_string(st.trace->steps.size() - 1) + ": " +
                          op_name(s->op) + (s->part().empty() ? "" : " (" + s->part() + ")") + "   " +
                          (in ? shape_str(in->shape) + " -> " : "") +
                          (quiz_hides(st, s->index) ? std::string("?") : shape_str(out.shape));
    if (st.quiz.on) caption += "   (score " + std::to_string(st.quiz.right) + " / " + std::to_string(st.quiz.asked) + ")";
    ImGui::SetWindowFontScale(1.5f);
    ImGui::TextUnformatted(caption.c_str());
    audit_last_item(caption);
    ImGui::SetWindowFontScale(1.0f);
    ImGui::PushFont(code_font());
    ImGui::TextColored({1.0f, 0.85f, 0.3f, 1}, "%s", s->code.c_str());
    audit_last_item(s->code);
    ImGui::PopFont();
    const std::string keys = quiz_waiting(st) ? "1-4: answer   Q: end the quiz   F5 or Escape: leave presenter mode"
                                              : "Left / Right: step   Space: play   Q: predict the shape   F5 or Escape: leave presenter mode";
    ImGui::TextDisabled("%s", keys.c_str());
    audit_last_item(keys);
}

}  // namespace headsplit::gui
