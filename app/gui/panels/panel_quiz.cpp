// Predict the shape: the question that stands in for a step until the class answers it, and
// the verdict shown above the step once it is drawn. The question, its options and the
// right answer come from core's make_question over the trace on screen.
#include <algorithm>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "headsplit/teaching/narration.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

std::string score_line(const QuizState& q) {
    return "score " + std::to_string(q.right) + " / " + std::to_string(q.asked);
}

}  // namespace

void DrawQuizCard(AppState& st, double now) {
    QuizState& q = st.quiz;
    const QuizQuestion& question = *q.pending;
    const Step& s = st.trace->steps[static_cast<std::size_t>(question.step)];
    const TensorRecord& out = s.lead();  // the tensor the code line names
    const TensorRecord* in = out.from.empty() ? nullptr : st.trace->source(out.from.front());

    // The title and the choices 1.25 times as large, read from the back row, where the panel
    // has the room (16 lines); else at the text size.
    const float big = room_left().y >= 16 * ImGui::GetTextLineHeightWithSpacing() ? 1.25f : 1.0f;
    ImGui::SetWindowFontScale(big);
    const std::string title = "Step " + std::to_string(s.index) + ": " + op_name(s.op) +
                              (s.head >= 0 ? " (head " + std::to_string(s.head) + ")" : "") + "  -  predict the shape   (" +
                              score_line(q) + ")";  // in the title: whole at every size
    ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
    ImGui::TextWrapped("%s", title.c_str());
    ImGui::PopStyleColor();
    audit_last_item(title);
    ImGui::SetWindowFontScale(1.0f);
    if (in) {
        const std::string from = "made from " + in->name + " " + named_shape(*in) + " by";
        ImGui::TextWrapped("%s", from.c_str());
        audit_last_item(from);
    }
    ImGui::PushFont(code_font());
    text_at_spaces(s.code);  // a long line breaks at its spaces: it is read whole
    ImGui::PopFont();
    const std::string ask = "What shape is " + question.tensor + " after this line?";
    ImGui::TextWrapped("%s", ask.c_str());
    audit_last_item(ask);
    ImGui::Spacing();

    // Four large buttons, keys 1 to 4; in two columns when the panel is wide enough.
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    const float avail = ImGui::GetContentRegionAvail().x;
    ImGui::SetWindowFontScale(big);
    float widest = 0;
    std::string labels[4];
    for (std::size_t i = 0; i < question.options.size() && i < 4; ++i) {
        labels[i] = std::to_string(i + 1) + "   " + shape_str(question.options[i].shape);
        widest = std::max(widest, button_width(labels[i].c_str()));
    }
    // Two columns where two fit (with a margin of a letter each, or none when short of room).
    const float margin = 2 * widest + 4 * ImGui::GetFontSize() + gap <= avail ? 2 * ImGui::GetFontSize() : 0.0f;
    const float w = std::min(avail, std::max(widest + margin, std::min(avail, 2 * widest + 2 * margin) / 2 - gap));
    const float h = ImGui::GetFrameHeight() * (big > 1.0f ? 1.5f : 1.0f);
    for (std::size_t i = 0; i < question.options.size() && i < 4; ++i) {
        if (i % 2 == 1) same_line_if_fits(w);
        ImGui::PushID(static_cast<int>(i));
        const bool chosen = ImGui::Button(labels[i].c_str(), ImVec2(w, h));
        audit_last_item(labels[i]);
        ImGui::PopID();
        if (chosen) {
            ImGui::SetWindowFontScale(1.0f);
            quiz_answer(st, question.options[i].shape, now);
            return;  // the question is gone: the step is drawn from the next frame on
        }
    }
    ImGui::SetWindowFontScale(1.0f);

    // The keys and the score, wrapped at the panel's edge.
    auto keys_line = [&] {  // where it has the room (the buttons say their keys)
        if (room_left().y < ImGui::GetTextLineHeightWithSpacing() * 2) return;
        ImGui::PushTextWrapPos(0.0f);
        const std::string keys = "keys 1-4 answer, Q ends the quiz";
        ImGui::TextDisabled("%s", keys.c_str());
        audit_last_item(keys);
        ImGui::PopTextWrapPos();
    };
    // Typing the answer: where the panel has the room for it and the keys line below.
    if (room_left().y < ImGui::GetFrameHeightWithSpacing() * 2 + ImGui::GetTextLineHeightWithSpacing() * 2) {
        keys_line();
        return;
    }
    ImGui::Spacing();
    ImGui::TextUnformatted("or type it:");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x, 12 * ImGui::GetFontSize()));
    const bool entered = ImGui::InputTextWithHint("##typed", "sizes, e.g. 2 x 5", q.typed, sizeof q.typed,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    same_line_if_fits(button_width("check"));
    const bool check = ImGui::Button("check") || entered;
    const std::optional<Shape> typed = parse_shape_answer(q.typed);
    if (check && typed) {
        quiz_answer(st, *typed, now);
        return;
    }
    if (q.typed[0] != '\0' && !typed) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(error_ink(), "write the sizes as whole numbers, e.g. [1, 3, 2, 3] or 1x3x2x3");
        ImGui::PopTextWrapPos();
    }
    keys_line();
}

std::string QuizVerdictLine(const AppState& st, float width) {
    const QuizState& q = st.quiz;
    if (!q.on || q.answered_step != st.step || q.verdict.empty()) return "";
    const std::string score = st.presenting ? "" : "   (" + score_line(q) + ")";  // presenter mode: in the caption
    for (const std::string& form : {q.verdict + score, q.verdict, q.verdict_short + score})
        if (ImGui::CalcTextSize(form.c_str()).x <= width) return form;
    return q.verdict_short;
}

void DrawQuizVerdict(const AppState& st, const std::string& line) {
    if (line.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, st.quiz.answered_right ? right_ink() : error_ink());
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(line.c_str());
    audit_last_item(line);
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
}

float QuizVerdictHeight(const AppState& st, float width) {
    const std::string line = QuizVerdictLine(st, width);
    return line.empty() ? 0.0f : ImGui::CalcTextSize(line.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y;
}

}  // namespace headsplit::gui
