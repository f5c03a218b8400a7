// Presenter mode's caption: one large line with the step (a checkpoint run's layer first) and
// its shape change, read from the trace's links (what the step's result was made from -> the
// result, its sizes named by their axes: "[1, 2 heads, 3 tokens, 3 keys]", so that equal
// sizes are told apart), and the step's PyTorch line under it; then the live strip (heads,
// D_out, KV heads, mode, mask, sentence: each a button with its key; in a live lesson, after a
// reveal, the class's answers in its place) and the line on the last change.
// Keys: Left/Right, Space, F5 or Escape to leave, and the strip's.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
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

// The live strip's buttons, in order, with what a click (and a Shift+click) changes; the
// last, "T sentence", opens the sentence box.
struct StripButton {
    std::string label;
    LiveChange up, down;
};
std::vector<StripButton> strip_buttons(const Config& c) {
    return {{"H heads " + std::to_string(c.heads), LiveChange::HeadsUp, LiveChange::HeadsDown},
            {"D D_out " + std::to_string(c.d_out), LiveChange::DOutUp, LiveChange::DOutDown},
            {"K KV heads " + std::to_string(c.kv_head_count()), LiveChange::KvHeadsUp, LiveChange::KvHeadsDown},
            {std::string("M ") + mode_name(c.mode), LiveChange::NextMode, LiveChange::NextMode},
            {std::string("C mask ") + (c.causal ? "on" : "off"), LiveChange::Causal, LiveChange::Causal},
            {"T sentence", LiveChange::NextMode, LiveChange::NextMode}};
}

// How to go down, where it fits on the strip's line (the README lists the keys too).
std::string strip_hint(const AppState& st) { return st.panels.f1_listed ? "Shift: down" : "Shift: down   F1: keys"; }

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
    const std::vector<StripButton> buttons = strip_buttons(c);
    for (std::size_t i = 0; i + 1 < buttons.size(); ++i) strip_button(st, buttons[i].label, buttons[i].up, buttons[i].down);
    const std::string& text = buttons.back().label;
    same_line_if_fits(button_width(text.c_str()));
    if (ImGui::SmallButton(text.c_str())) open_sentence_box(st);
    audit_last_item(text);
    const std::string hint = strip_hint(st);
    const float hint_w = ImGui::CalcTextSize(hint.c_str()).x + ImGui::GetStyle().ItemSpacing.x;
    if (ImGui::GetItemRectMax().x + hint_w <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", hint.c_str());
        audit_last_item(hint);
    }
}

// One step's part of the caption: its line (as large as fits, up to 1.5 times the text), its
// PyTorch line broken at spaces, and the note on two axes of one size.
struct StepLines {
    std::string line;
    float scale = 1;
    std::vector<std::string> code;
    float code_scale = 1;  // down to 0.8 of the code's size where that keeps it on one line
    std::string same;
};

// (`asked`: the step waits as a question: its result's shape is "?".)
StepLines step_lines(const AppState& st, const Step& s, float width, bool asked) {
    const TensorRecord& out = s.lead();  // the tensor the code line names
    const TensorRecord* in = out.from.empty() ? nullptr : st.trace->source(out.from.front());
    // A checkpoint run names its layer: the same steps run on every layer's weights.
    const Config& c = st.trace->config;
    // The result's axes named; the input's too where the line still fits the width.
    const auto line = [&](bool named_in) {
        return (c.weights_dir.empty() ? std::string()
                                      : "Layer " + std::to_string(c.layer) + " (0-" + std::to_string(c.layers - 1) + "), ") +
               "Step " + std::to_string(s.index) + " of " + std::to_string(st.trace->steps.size() - 1) + ": " +
               op_name(s.op) + (s.part().empty() ? "" : " (" + s.part() + ")") + "   " +
               (in ? (named_in ? named_shape(*in) : shape_str(in->shape)) + " -> " : "") +
               (asked ? std::string("?") : named_shape(out));
    };
    StepLines out_lines;
    out_lines.line = line(true);
    if (ImGui::CalcTextSize(out_lines.line.c_str()).x > width) out_lines.line = line(false);
    if (st.quiz.on) out_lines.line += "   (score " + std::to_string(st.quiz.right) + " / " + std::to_string(st.quiz.asked) + ")";
    // As large as fits the width up to 1.5 times the text, down to 0.85 of it before it wraps.
    const float line_fits = width / std::max(ImGui::CalcTextSize(out_lines.line.c_str()).x, 1.0f);
    out_lines.scale = line_fits >= 0.85f ? std::min(line_fits, 1.5f) : 1.0f;
    ImGui::PushFont(code_font());
    // The code on one line where it can: without its trailing comment (the stage's title says
    // "keys, values alike" too), then down to 0.8 of its size; else wrapped at its spaces.
    std::string code = s.code;
    const std::size_t comment = code.find("  # ");
    if (ImGui::CalcTextSize(code.c_str()).x > width && comment != std::string::npos) code.resize(comment);
    const float fits = width / std::max(ImGui::CalcTextSize(code.c_str()).x, 1.0f);
    if (fits < 0.8f) code = s.code;
    out_lines.code_scale = fits >= 0.8f ? std::min(fits, 1.0f) : 1.0f;
    out_lines.code = lines_at_spaces(code, width / out_lines.code_scale,
                                     [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; });
    ImGui::PopFont();
    if (!asked) out_lines.same = size_collision(*st.trace, s.index);
    return out_lines;
}

// Whether the note on sizes fits beside the code's last line.
bool same_beside(const StepLines& l, float width) {
    if (l.code.empty() || l.same.empty()) return false;
    ImGui::PushFont(code_font());
    const float code_w = l.code_scale * ImGui::CalcTextSize(l.code.back().c_str()).x;
    ImGui::PopFont();
    return code_w + ImGui::CalcTextSize("   ").x + ImGui::CalcTextSize(l.same.c_str()).x <= width;
}

// Their height at this width, px, as drawn below (each item's advance is whole pixels).
float step_lines_h(const StepLines& l, float width) {
    const float gap = ImGui::GetStyle().ItemSpacing.y;
    float h = std::floor(l.scale * ImGui::CalcTextSize(l.line.c_str(), nullptr, false, width / l.scale).y + gap);
    ImGui::PushFont(code_font());
    h += static_cast<float>(l.code.size()) * std::floor(l.code_scale * ImGui::GetTextLineHeight() + gap);
    ImGui::PopFont();
    if (!l.same.empty() && !same_beside(l, width)) h += std::floor(ImGui::CalcTextSize(l.same.c_str(), nullptr, false, width).y + gap);
    return h;
}

// The keys on a question or F1, and on the first step as many lines of them as its room left
// holds (with "F1: keys", unless it stands beside the step's line); else the stage has their
// lines.
std::vector<std::string> caption_keys(const AppState& st, bool f1_beside) {
    std::vector<std::string> keys =
        quiz_waiting(st) ? std::vector<std::string>{"1-4: answer", "Q: end the quiz", "F5 or Escape: leave presenter mode"}
        : st.show_keys || st.step == 0
            ? std::vector<std::string>{"Left / Right or Page Up / Down: step", "F1: keys", "Space: play",
                                       "Q: predict the shape", "[ ]: head", "W: weight split", "Y: why split",
                                       "I: inspector", "B: blank", "F5 or Escape: leave presenter mode"}
            : std::vector<std::string>{};
    if (f1_beside) keys.erase(std::remove(keys.begin(), keys.end(), std::string("F1: keys")), keys.end());
    return keys;
}

// Whether "F1: keys" stands beside the first step's line: where it fits the width.
bool f1_beside_line(const AppState& st, const StepLines& here, float width) {
    if (st.step != 0 || quiz_waiting(st)) return false;
    const float line_w = here.scale * ImGui::CalcTextSize(here.line.c_str(), nullptr, false, width / here.scale).x;
    return line_w + ImGui::CalcTextSize("   ").x + ImGui::CalcTextSize("F1: keys").x <= width;
}

// How many lines `items` take in `width` px, each beside the one before where it fits with
// `gap` px between (as same_line_if_fits places them).
int lines_of(const std::vector<float>& items, float width, float gap) {
    int lines = 0;
    float x = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i && x + gap + items[i] <= width) x += gap + items[i];
        else ++lines, x = items[i];
    }
    return lines;
}

// The live strip's height in `width` px: the sentence box where it is open, else "live:" at a
// frame's height, then the buttons (a line of text tall each further line).
float strip_h(const AppState& st, float width) {
    const ImGuiStyle& style = ImGui::GetStyle();
    if (st.live.typing) return ImGui::GetFrameHeightWithSpacing();
    std::vector<float> widths{ImGui::CalcTextSize("live:").x};
    for (const StripButton& b : strip_buttons(st.config)) widths.push_back(button_width(b.label.c_str()));
    const int lines = lines_of(widths, width, style.ItemSpacing.x);
    return ImGui::GetFrameHeight() + style.ItemSpacing.y + static_cast<float>(lines - 1) * (ImGui::GetTextLineHeight() + style.ItemSpacing.y);
}

// The line on the last change, broken at its spaces, in `free_h` px the caption keeps free
// under this step's lines (the tallest step's leave it) or, where `strip_room` > 0, in those
// and the strip's place; true when it took the strip's place. The line takes no room of its
// own, so the stage keeps what a fresh start at the new configuration gives it: the whole
// line where it fits the free room, else without the step's result (the step line above
// shows it); else in the strip's place (its keys still work, a click on the line brings the
// strip back), the last line cut where even the short one does not fit.
bool draw_change_line(AppState& st, float free_h, float strip_room) {
    const float line = ImGui::GetTextLineHeightWithSpacing(), width = ImGui::GetContentRegionAvail().x;
    const auto measure = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
    const auto lines_in = [&](float h) { return static_cast<std::size_t>(std::max((h + 0.5f) / line, 0.0f)); };
    std::vector<std::string> lines;
    bool in_strip = false;
    for (const float room : {free_h, free_h + strip_room}) {
        for (const std::string* text : {&st.live.caption, &st.live.caption_short}) {
            if (text->empty() || !lines.empty()) continue;
            std::vector<std::string> wrapped = lines_at_spaces(*text, width, measure);
            if (wrapped.size() <= lines_in(room)) lines = std::move(wrapped), in_strip = room > free_h;
        }
        if (strip_room <= 0) break;
    }
    if (lines.empty() && strip_room > 0) {  // cut to the room there is
        const std::string& text = st.live.caption_short.empty() ? st.live.caption : st.live.caption_short;
        lines = lines_at_spaces(text, width, measure);
        lines.resize(std::max<std::size_t>(lines_in(free_h + strip_room), 1));
        lines.back() = fit_text(lines.back() + " ...", width);
        in_strip = true;
    }
    for (const std::string& l : lines) {
        ImGui::TextColored(live_ink(), "%s", l.c_str());
        audit_last_item(l);
        if (in_strip && ImGui::IsItemClicked()) st.live.caption.clear(), st.live.caption_short.clear();
    }
    return in_strip;
}

}  // namespace

float MeasureCaption(const AppState& st, float width) {
    const float pad = 2 * ImGui::GetStyle().WindowPadding.y, line = ImGui::GetTextLineHeightWithSpacing();
    const Step* s = st.current();
    if (!s) return pad + line;
    const StepLines here = step_lines(st, *s, width, quiz_hides(st, s->index));
    const float here_h = step_lines_h(here, width);
    const std::string quiz = std::to_string(st.quiz.on) + " " + std::to_string(st.quiz.right) + "/" + std::to_string(st.quiz.asked);
    const float tallest = st.panels.caption_tallest.of(steps_key(st.trace.get(), width, quiz), *st.trace, [&](const Step& other) {
        return step_lines_h(step_lines(st, other, width, false), width);
    });
    const float spare = std::max(tallest - here_h, 0.0f);
    float keys_h = 0;
    if (quiz_waiting(st) || st.show_keys) {
        std::vector<float> widths;
        for (const std::string& k : caption_keys(st, f1_beside_line(st, here, width))) widths.push_back(ImGui::CalcTextSize(k.c_str()).x);
        keys_h = static_cast<float>(lines_of(widths, width, ImGui::CalcTextSize("   ").x)) * line;
    }
    float h = pad + here_h + std::max(spare, keys_h);
    if (quiz_waiting(st)) return h;
    // (The line on the last change takes no room of its own: draw_change_line.)
    return h + strip_h(st, width);
}

void DrawCaption(AppState& st) {
    audit_panel("caption");
    const Step* s = st.current();
    if (!s) {
        ImGui::TextUnformatted("computing ...");
        return;
    }
    // The step line 1.5 times as large where it fits the width, as large as fits down to the
    // text size, else wrapped; the code line wrapped at its spaces; the keys each whole.
    const float width = ImGui::GetContentRegionAvail().x;
    const StepLines here = step_lines(st, *s, width, quiz_hides(st, s->index));
    ImGui::SetWindowFontScale(here.scale);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(here.line.c_str());
    audit_last_item(here.line);
    ImGui::SetWindowFontScale(1.0f);
    // The first step says where the keys are beside its line, where it fits (its room below
    // may hold none of them).
    const char* f1 = "F1: keys";
    const bool f1_beside = f1_beside_line(st, here, width);
    if (f1_beside) {
        ImGui::SameLine(0, ImGui::CalcTextSize("   ").x);
        ImGui::TextDisabled("%s", f1);
        audit_last_item(f1);
    }
    ImGui::PopTextWrapPos();  // the code breaks where lines_at_spaces said, not again inside a name
    ImGui::PushFont(code_font());
    ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
    ImGui::SetWindowFontScale(here.code_scale);
    for (const std::string& l : here.code) {  // never inside "self.W_value(x)"
        ImGui::TextUnformatted(l.c_str());
        audit_last_item(l);
    }
    ImGui::SetWindowFontScale(1.0f);
    ImGui::PopStyleColor();
    ImGui::PopFont();
    // Two axes of one size, the first step that shows them: which is which, said once (beside
    // the code where it fits).
    if (!here.same.empty()) {
        if (same_beside(here, width)) ImGui::SameLine(0, ImGui::CalcTextSize("   ").x);
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextUnformatted(here.same.c_str());
        ImGui::PopTextWrapPos();
        audit_last_item(here.same);
    }
    // Every step's caption as tall as the tallest, so that the stage stands still from step to
    // step: the room this step's lines leave is kept (the first step's keys take it).
    const std::string quiz = std::to_string(st.quiz.on) + " " + std::to_string(st.quiz.right) + "/" + std::to_string(st.quiz.asked);
    const float tallest = st.panels.caption_tallest.of(steps_key(st.trace.get(), width, quiz), *st.trace, [&](const Step& other) {
        return step_lines_h(step_lines(st, other, width, false), width);
    });
    const float spare = std::max(tallest - step_lines_h(here, width), 0.0f);
    const float keys_top = ImGui::GetCursorPosY();
    const bool asked = quiz_waiting(st) || st.show_keys;
    const std::vector<std::string> listed = caption_keys(st, f1_beside);
    const int lines_free = asked ? INT_MAX : static_cast<int>((spare + 0.5f) / ImGui::GetTextLineHeightWithSpacing());
    const float gap = ImGui::CalcTextSize("   ").x, right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    int lines = 0;
    std::size_t shown = 0;
    for (; shown < listed.size(); ++shown) {
        const bool beside = shown && ImGui::GetItemRectMax().x + gap + ImGui::CalcTextSize(listed[shown].c_str()).x <= right;
        if (!beside && lines == lines_free) break;
        if (beside) ImGui::SameLine(0, gap);
        else ++lines;
        ImGui::TextDisabled("%s", listed[shown].c_str());
        audit_last_item(listed[shown]);
    }
    st.panels.f1_listed = f1_beside || (!quiz_waiting(st) && shown >= 2);  // "F1: keys" is the second
    if (quiz_waiting(st)) {  // the question first
        if (ImGui::GetCursorPosY() < keys_top + spare) ImGui::SetCursorPosY(keys_top + spare);
        return;
    }
    // A live lesson's answers after a reveal take the strip's line while they show (its keys
    // still work); the sentence box, when open, keeps it; the line on the last change takes
    // the room left above it, or the strip's place.
    const bool answers = !st.live.typing && LessonAnswersShown(st);
    const bool in_strip = !st.live.caption.empty() &&
                          draw_change_line(st, keys_top + spare - ImGui::GetCursorPosY(),
                                           st.live.typing || answers ? 0.0f : strip_h(st, width));
    if (ImGui::GetCursorPosY() < keys_top + spare) ImGui::SetCursorPosY(keys_top + spare);
    if (answers) DrawLessonAnswers(st);
    else if (!in_strip) draw_live_strip(st);
}

}  // namespace headsplit::gui
