// Code: the PyTorch module for the current mode, its forward pass built from the trace's
// own code lines, the current step's line highlighted and every line's output shape beside it.
#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdint>

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

// A line's pieces in their colours, each legible on `paper` (the panel, or the current line's
// highlight).
std::vector<Piece> colour_line(const std::string& line, bool dark, ImVec4 paper) {
    const ImVec4 plain = ink(ImGui::GetStyleColorVec4(ImGuiCol_Text), paper);
    const ImVec4 keyword = ink(dark ? ImVec4(0.80f, 0.55f, 1.00f, 1) : ImVec4(0.50f, 0.10f, 0.70f, 1), paper);
    const ImVec4 self = ink(dark ? ImVec4(0.95f, 0.55f, 0.45f, 1) : ImVec4(0.70f, 0.20f, 0.10f, 1), paper);
    const ImVec4 number = ink(dark ? ImVec4(0.60f, 0.85f, 0.55f, 1) : ImVec4(0.10f, 0.50f, 0.10f, 1), paper);
    const ImVec4 comment = ink(ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled), paper);
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

// A line broken into rows of at most `cols` characters where a formatter would break it:
// after an opening parenthesis, a comma or a space, the rows after the first indented four
// more than the line. The code font is monospace, so characters measure the width.
struct Row {
    std::size_t line;          // the listing's line
    std::size_t from, to;      // its characters [from, to)
    int indent = 0;            // spaces drawn before them
    std::string shape;         // the line's output shape, on its last row (or a row of its own)
    bool shape_row = false;    // a row holding only the shape, right-aligned
};

std::vector<Row> wrap_listing(const std::vector<Line>& lines, int cols) {
    std::vector<Row> rows;
    cols = std::max(cols, 8);
    std::size_t widest = 0, widest_shape = 0;
    for (const Line& l : lines) widest = std::max(widest, l.text.size()), widest_shape = std::max(widest_shape, l.shape.size());
    // Everything on one row each: the shapes stand in a column after the longest line.
    const bool column = static_cast<int>(widest + 2 + widest_shape) <= cols;
    for (std::size_t li = 0; li < lines.size(); ++li) {
        const std::string& t = lines[li].text;
        const std::size_t lead = std::min(t.find_first_not_of(' '), t.size());
        const int more = static_cast<int>(std::min<std::size_t>(lead + 4, static_cast<std::size_t>(cols / 2)));
        std::size_t at = 0;
        int indent = 0;
        do {
            const std::size_t room = static_cast<std::size_t>(cols - indent);
            std::size_t end = t.size();
            if (end - at > room) {
                end = at + room;
                for (std::size_t p = at + room; p > at + room / 3; --p)
                    if (t[p - 1] == '(' || t[p - 1] == ',' || t[p - 1] == ' ') {
                        end = p;
                        break;
                    }
            }
            rows.push_back({li, at, end, indent, "", false});
            at = end;
            while (at < t.size() && t[at] == ' ') ++at;
            indent = more;
        } while (at < t.size());
        const std::string& shape = lines[li].shape;
        if (shape.empty()) continue;
        Row& last = rows.back();
        const std::size_t used = static_cast<std::size_t>(last.indent) + (last.to - last.from);
        if (column || used + 2 + shape.size() <= static_cast<std::size_t>(cols))
            last.shape = shape;
        else
            rows.push_back({li, t.size(), t.size(), 0, shape, true});
    }
    return rows;
}


// The code fonts from the largest, not below 0.6 of the text's size where a smaller font is
// baked: beyond that, a window of the listing at that size reads better than all of it too
// small for the back row.
std::vector<ImFont*> listing_fonts() {
    std::vector<ImFont*> fonts = code_fonts();
    while (fonts.size() > 1 && fonts.back()->FontSize < 0.6f * ImGui::GetFontSize() - 0.5f) fonts.pop_back();
    return fonts;
}

float row_height(const ImFont* f) { return std::floor(f->FontSize * 1.15f); }
float char_width(ImFont* f) { return f->CalcTextSizeA(f->FontSize, FLT_MAX, 0.0f, "M").x; }

}  // namespace

CodeNeed MeasureCode(const AppState& st, float panel_w, bool window_titled) {
    CodeNeed n;
    if (!st.trace) return n;
    const std::vector<Line> lines = listing(st, *st.trace, st.step);
    const std::vector<ImFont*> fonts = listing_fonts();
    const ImGuiStyle& style = ImGui::GetStyle();
    // As wide as the longest line (and its shape) at a mid size. (A shape the quiz hides counts
    // whole: the column keeps its width when it shows.)
    std::size_t widest = 0;
    for (const Line& l : lines) {
        const std::size_t shape = l.step >= 0 ? shape_str(st.trace->steps[static_cast<std::size_t>(l.step)].result().shape).size()
                                              : l.shape.size();
        widest = std::max(widest, l.text.size() + (l.shape.empty() ? 0 : std::max(shape, l.shape.size()) + 2));
    }
    n.w = widest * char_width(fonts[std::min<std::size_t>(2, fonts.size() - 1)]) + 2 * style.WindowPadding.x + 2;
    if (panel_w <= 0) return n;  // the width alone
    // As tall as the whole listing at the largest font, wrapped to the panel's width.
    const float width = std::max(panel_w - 2 * style.WindowPadding.x, 1.0f);
    const std::vector<Row> rows = wrap_listing(lines, static_cast<int>(width / std::max(char_width(fonts.front()), 1.0f)));
    n.h = (window_titled ? ImGui::GetFrameHeight() : 0.0f) + 2 * style.WindowPadding.y +
          static_cast<float>(rows.size()) * row_height(fonts.front()) + 2;
    return n;
}

// Every line whole: the code takes the largest of its fonts with which the whole listing fits
// the panel, long lines broken (wrap_listing); when even the smallest does not fit, the rows
// around the current line are shown, with a line saying which. Nothing scrolls; each line's
// output shape stands beside it, the current line highlighted.
void DrawCode(AppState& st) {
    if (!st.trace) return;
    const std::vector<Line> lines = listing(st, *st.trace, st.step);
    const ImVec2 avail = room_left();
    const std::vector<ImFont*> fonts = listing_fonts();
    ImFont* font = fonts.back();
    std::vector<Row> rows;
    float row_h = 0, char_w = 0;
    for (ImFont* f : fonts) {
        char_w = char_width(f);
        row_h = row_height(f);
        rows = wrap_listing(lines, static_cast<int>(avail.x / std::max(char_w, 1.0f)));
        font = f;
        if (rows.size() * row_h <= avail.y) break;
    }
    // The rows shown: all, or a window about the current line.
    std::size_t first = 0, shown = rows.size();
    std::string note;
    if (rows.size() * row_h > avail.y) {
        shown = static_cast<std::size_t>(std::max(1.0f, std::floor(avail.y / row_h) - 1));
        std::size_t here = 0;
        for (std::size_t r = 0; r < rows.size(); ++r)
            if (lines[rows[r].line].step == st.step) {
                here = r;
                break;
            }
        first = here > shown * 2 / 5 ? here - shown * 2 / 5 : 0;
        first = std::min(first, rows.size() - shown);
        note = "lines " + std::to_string(rows[first].line + 1) + "-" + std::to_string(rows[first + shown - 1].line + 1) +
               " of " + std::to_string(lines.size());
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    float y = origin.y;
    if (!note.empty()) {
        ImGui::PushFont(font);
        draw_label(dl, {origin.x, y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), fit_text(note, avail.x));
        ImGui::PopFont();
        y += row_h;
    }
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    std::size_t widest = 0;
    for (const Line& l : lines) widest = std::max(widest, l.text.size());
    ImGui::PushFont(font);
    std::size_t coloured_line = SIZE_MAX;
    std::vector<Piece> pieces;
    for (std::size_t r = first; r < first + shown; ++r, y += row_h) {
        const Row& row = rows[r];
        const Line& l = lines[row.line];
        const bool here = l.step == st.step && l.step >= 0;
        if (here)
            dl->AddRectFilled({origin.x, y}, {origin.x + avail.x, y + row_h}, ImGui::GetColorU32(ImGuiCol_TextSelectedBg));
        if (coloured_line != row.line)
            pieces = colour_line(l.text, st.dark, here ? current_line_background() : panel_background(st.dark)), coloured_line = row.line;
        // The row's characters, each piece in its colour.
        float x = origin.x + row.indent * char_w;
        std::size_t at = 0;
        for (const Piece& p : pieces) {
            const std::size_t a = std::max(at, row.from), b = std::min(at + p.text.size(), row.to);
            if (a < b) {
                dl->AddText(font, font->FontSize, {x, y}, ImGui::ColorConvertFloat4ToU32(p.colour),
                            l.text.c_str() + a, l.text.c_str() + b);
                x += (b - a) * char_w;
            }
            at += p.text.size();
        }
        if (row.to > row.from)
            frame_watch().label(l.text.substr(row.from, row.to - row.from), origin.x + row.indent * char_w, y,
                                 (row.to - row.from) * char_w, font->FontSize);
        if (row.shape.empty()) continue;
        const float shape_w = row.shape.size() * char_w;
        const float sx = row.shape_row ? origin.x + avail.x - shape_w
                         : static_cast<int>(widest + 2 + row.shape.size()) * char_w <= avail.x
                             ? origin.x + (widest + 2) * char_w
                             : x + 2 * char_w;
        draw_label(dl, {sx, y}, here ? ImGui::ColorConvertFloat4ToU32(ink({1.0f, 0.85f, 0.30f, 1}, current_line_background())) : dim, row.shape);
    }
    ImGui::PopFont();
    ImGui::Dummy({avail.x, y - origin.y});
}

}  // namespace headsplit::gui
