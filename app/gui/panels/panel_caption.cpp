// Presenter mode's caption: one large line with the step (a checkpoint run's layer first) and
// its shape change, read from the trace's links (what the step's result was made from -> the
// result, its sizes named by their axes: "[1, 2 heads, 3 tokens, 3 keys]", so that equal
// sizes are told apart), and the step's PyTorch line under it; then the live strip (heads, D_out, KV heads,
// mode, mask, sentence: each a button with its key) and the line on the last change.
// Keys: Left/Right, Space, F5 or Escape to leave, and the strip's.
#include <algorithm>
#include <string>
#include <vector>

#include <imgui.h>

#include "headsplit/teaching/narration.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

// One button of the strip: "H heads 3"; a click changes up, a Shift+click down.
void strip_button(AppState& st, const std::string& label, LiveChange up, LiveChange down) {
    same_line_if_fits(button_width(label.c_str()));
    if (ImGui::SmallButton(label.c_str())) live_change(st, ImGui::GetIO().KeyShift ? down : up);
    audit_last_item(label);
}

// The live strip: what the teacher can change without leaving presenter mode, each with its
// key; T opens a box for the sentence (Enter runs it, Escape closes it).
void draw_live_strip(AppState& st) {
    const Config& c = st.config;
    if (st.live.typing) {
        ImGui::SetNextItemWidth(-1);
        ImGui::SetKeyboardFocusHere();
        if (ImGui::InputTextWithHint("##live_sentence", "the sentence (Enter: run it, Escape: close)", st.live.text,
                                     sizeof st.live.text, ImGuiInputTextFlags_EnterReturnsTrue))
            live_sentence(st, st.live.text);
        else if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
            st.live.typing = false;
        return;
    }
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("live:");
    strip_button(st, "H heads " + std::to_string(c.heads), LiveChange::HeadsUp, LiveChange::HeadsDown);
    strip_button(st, "D D_out " + std::to_string(c.d_out), LiveChange::DOutUp, LiveChange::DOutDown);
    strip_button(st, "K KV heads " + std::to_string(c.kv_head_count()), LiveChange::KvHeadsUp, LiveChange::KvHeadsDown);
    strip_button(st, std::string("M ") + mode_name(c.mode), LiveChange::NextMode, LiveChange::NextMode);
    strip_button(st, std::string("C mask ") + (c.causal ? "on" : "off"), LiveChange::Causal, LiveChange::Causal);
    const std::string text = "T sentence";
    same_line_if_fits(button_width(text.c_str()));
    if (ImGui::SmallButton(text.c_str())) open_sentence_box(st);
    audit_last_item(text);
    // How to go down, where it fits on the strip's line (the README lists the keys too).
    const std::string hint = st.show_keys || st.step == 0 ? "Shift: down" : "Shift: down   F1: keys";
    const float hint_w = ImGui::CalcTextSize(hint.c_str()).x + ImGui::GetStyle().ItemSpacing.x;
    if (ImGui::GetItemRectMax().x + hint_w <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", hint.c_str());
        audit_last_item(hint);
    }
}

}  // namespace

void DrawCaption(AppState& st) {
    audit_panel("caption");
    const Step* s = st.current();
    if (!s) {
        ImGui::TextUnformatted("computing ...");
        return;
    }
    const TensorRecord& out = s->lead();  // the tensor the code line names
    const TensorRecord* in = out.from.empty() ? nullptr : st.trace->source(out.from.front());
    // A checkpoint run names its layer: the same steps run on every layer's weights.
    const Config& c = st.trace->config;
    // The result's axes named; the input's too where the line still fits the width.
    const auto line = [&](bool named_in) {
        return (c.weights_dir.empty() ? std::string()
                                      : "Layer " + std::to_string(c.layer) + " (0-" + std::to_string(c.layers - 1) + "), ") +
               "Step " + std::to_string(s->index) + " of " + std::to_string(st.trace->steps.size() - 1) + ": " +
               op_name(s->op) + (s->part().empty() ? "" : " (" + s->part() + ")") + "   " +
               (in ? (named_in ? named_shape(*in) : shape_str(in->shape)) + " -> " : "") +
               (quiz_hides(st, s->index) ? std::string("?") : named_shape(out));
    };
    std::string caption = line(true);
    if (ImGui::CalcTextSize(caption.c_str()).x > ImGui::GetContentRegionAvail().x) caption = line(false);
    if (st.quiz.on) caption += "   (score " + std::to_string(st.quiz.right) + " / " + std::to_string(st.quiz.asked) + ")";
    // The step line 1.5 times as large where it fits the width, as large as fits down to the
    // text size, else wrapped; the code line wrapped at its spaces; the keys each whole.
    const float width = ImGui::GetContentRegionAvail().x;
    const float caption_w = ImGui::CalcTextSize(caption.c_str()).x;
    ImGui::SetWindowFontScale(std::clamp(width / std::max(caption_w, 1.0f), 1.0f, 1.5f));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(caption.c_str());
    audit_last_item(caption);
    ImGui::SetWindowFontScale(1.0f);
    ImGui::PopTextWrapPos();  // the code breaks where text_at_spaces says, not again inside a name
    ImGui::PushFont(code_font());
    ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
    text_at_spaces(s->code);  // never inside "self.W_value(x)"
    ImGui::PopStyleColor();
    ImGui::PopFont();
    // Two axes of one size, the first step that shows them: which is which, said once.
    if (!quiz_hides(st, s->index)) {
        const std::string same = size_collision(*st.trace, s->index);
        if (!same.empty()) {
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextUnformatted(same.c_str());
            ImGui::PopTextWrapPos();
            audit_last_item(same);
        }
    }
    // The keys on the first step, a question or F1; else the stage has their lines.
    const bool keys_shown = quiz_waiting(st) || st.show_keys || st.step == 0;
    const std::vector<std::string> keys =
        quiz_waiting(st) ? std::vector<std::string>{"1-4: answer", "Q: end the quiz", "F5 or Escape: leave presenter mode"}
        : keys_shown     ? std::vector<std::string>{"Left / Right or Page Up / Down: step", "Space: play", "Q: predict the shape",
                                                    "[ ]: head", "W: weight split", "Y: why split", "I: inspector", "B: blank",
                                                    "F1: keys", "F5 or Escape: leave presenter mode"}
                         : std::vector<std::string>{};
    const float gap = ImGui::CalcTextSize("   ").x, right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i && ImGui::GetItemRectMax().x + gap + ImGui::CalcTextSize(keys[i].c_str()).x <= right) ImGui::SameLine(0, gap);
        ImGui::TextDisabled("%s", keys[i].c_str());
        audit_last_item(keys[i]);
    }
    if (quiz_waiting(st)) return;  // the question first
    draw_live_strip(st);
    if (!st.live.caption.empty()) {
        ImGui::TextColored({0.55f, 0.85f, 1.0f, 1}, "%s", st.live.caption.c_str());
        audit_last_item(st.live.caption);
    }
}

}  // namespace headsplit::gui
