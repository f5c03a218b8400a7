// Code: the PyTorch module for the current mode, its forward pass built from the trace's
// own code lines, the current step's line highlighted and every line's output shape beside it.
#include <algorithm>
#include <cctype>

#include <imgui.h>

#include "headsplit/teaching/narration.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

struct Line {
    std::string text;
    int step = -1;           // the step it stands for (-1: a line without one)
    std::string shape;       // its output shape
};

// The module's listing: its header and return from the narration module, and between them
// each step's own line (loop mode's body once, inside the for loop, for the head shown).
std::vector<Line> listing(const AppState& st, const Trace& tr, int current) {
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
        const TensorRecord& t = tr.steps[step].result();
        out.push_back({std::string(in_loop ? "      " : "    ") + s.code, step,
                       quiz_hides(st, step) ? std::string("[?]") : shape_str(t.shape)});  // the quiz's answer
    }
    out.push_back({"    " + module_return(c), -1, ""});
    return out;
}

// Python's colours: keywords, `self`, numbers, strings and comments; the rest plain.
struct Piece {
    std::string text;
    ImVec4 colour;
};

std::vector<Piece> colour_line(const std::string& line, bool dark) {
    const ImVec4 plain = ImGui::GetStyleColorVec4(ImGuiCol_Text);
    const ImVec4 keyword = dark ? ImVec4(0.80f, 0.55f, 1.00f, 1) : ImVec4(0.50f, 0.10f, 0.70f, 1);
    const ImVec4 self = dark ? ImVec4(0.95f, 0.55f, 0.45f, 1) : ImVec4(0.70f, 0.20f, 0.10f, 1);
    const ImVec4 number = dark ? ImVec4(0.60f, 0.85f, 0.55f, 1) : ImVec4(0.10f, 0.50f, 0.10f, 1);
    const ImVec4 comment = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    static const char* const keywords[] = {"class", "def", "for", "in", "return", "True", "False", "None", "import", "from"};
    std::vector<Piece> out;
    auto add = [&](std::string t, ImVec4 c) {
        if (!out.empty() && out.back().colour.x == c.x && out.back().colour.y == c.y && out.back().colour.z == c.z)
            out.back().text += t;
        else
            out.push_back({std::move(t), c});
    };
    std::size_t i = 0;
    while (i < line.size()) {
        const char ch = line[i];
        if (ch == '#') {
            add(line.substr(i), comment);
            break;
        }
        if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
            std::size_t k = i;
            while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_')) ++k;
            const std::string word = line.substr(i, k - i);
            ImVec4 c = plain;
            for (const char* kw : keywords)
                if (word == kw) c = keyword;
            if (word == "self") c = self;
            add(word, c);
            i = k;
        } else if (std::isdigit(static_cast<unsigned char>(ch))) {
            std::size_t k = i;
            while (k < line.size() && (std::isdigit(static_cast<unsigned char>(line[k])) || line[k] == '.')) ++k;
            add(line.substr(i, k - i), number);
            i = k;
        } else {
            add(std::string(1, ch), plain);
            ++i;
        }
    }
    return out;
}

}  // namespace

// Never wrapped: each statement on its line as PyTorch has it; the panel scrolls sideways
// when a line is wider than it. The shapes stand in a column after the longest line.
void DrawCode(AppState& st) {
    if (!st.trace) return;
    const std::vector<Line> lines = listing(st, *st.trace, st.step);
    ImGui::PushFont(code_font());
    const ImVec4 dim = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    float code_w = 0;
    for (const Line& l : lines) code_w = std::max(code_w, ImGui::CalcTextSize(l.text.c_str()).x);
    const float shape_x = ImGui::GetCursorPosX() + code_w + 2 * ImGui::CalcTextSize("  ").x;
    int& scrolled_to = st.panels.code_scrolled_to;
    for (const Line& l : lines) {
        const bool here = l.step == st.step;
        const ImVec2 start = ImGui::GetCursorScreenPos();
        if (here) {
            const float w = std::max(ImGui::GetContentRegionAvail().x, shape_x + 20 * ImGui::GetFontSize());
            ImGui::GetWindowDrawList()->AddRectFilled(start, {start.x + w, start.y + ImGui::GetTextLineHeightWithSpacing()},
                                                      ImGui::GetColorU32(ImGuiCol_TextSelectedBg));
            if (scrolled_to != st.step) {
                ImGui::SetScrollHereY(0.4f);
                scrolled_to = st.step;
            }
        }
        const std::vector<Piece> pieces = colour_line(l.text, st.dark);
        if (pieces.empty()) ImGui::TextUnformatted(" ");
        for (std::size_t k = 0; k < pieces.size(); ++k) {
            if (k) ImGui::SameLine(0, 0);
            ImGui::TextColored(pieces[k].colour, "%s", pieces[k].text.c_str());
        }
        layout_audit().label(l.text, start.x, start.y, ImGui::CalcTextSize(l.text.c_str()).x, ImGui::GetTextLineHeight());
        if (!l.shape.empty()) {
            ImGui::SameLine(shape_x);
            ImGui::TextColored(here ? ImVec4(1.0f, 0.85f, 0.3f, 1) : dim, "%s", l.shape.c_str());
            audit_last_item(l.shape);
        }
    }
    ImGui::PopFont();
}

}  // namespace headsplit::gui
