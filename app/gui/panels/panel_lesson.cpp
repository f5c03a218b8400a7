// The live lesson over the panels: the join card (how to join: the student address, the code
// large enough for the back row, the address as a QR code) until the teacher hides it, then
// a line about the class in the corner (who is here, who answered, paused, locked; the
// lesson's buttons under the mouse), and after a reveal the histogram of the answers with
// the right one marked: above that line, or in presenter mode in the caption (the stage's
// content stays uncovered). Everything here reads st.lesson; the window loop posts to the
// server.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront

#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

// A QR code's quiet zone, in modules, on each side (ISO/IEC 18004 asks for 4).
constexpr int kQuietZone = 4;
// The join code's height as a share of the window's: read from the back of a room.
constexpr float kCodeShare = 0.12f;

// The student address a little larger than the text: it is typed from the screen.
constexpr float kUrlScale = 1.25f;

const ImVec4 kRight{0.35f, 0.85f, 0.45f, 1};

constexpr ImGuiWindowFlags kOverlay = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                      ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing;

// The QR code at `p`, `side` px square with its quiet zone, white and black in every theme
// (a phone's reader expects dark modules on light). Modules are whole pixels.
void draw_qr(ImDrawList* dl, ImVec2 p, float side, const LessonView& v) {
    const int n = v.qr_size + 2 * kQuietZone;
    const float m = std::max(1.0f, std::floor(side / static_cast<float>(n)));
    const float total = m * static_cast<float>(n);
    dl->AddRectFilled(p, {p.x + total, p.y + total}, IM_COL32(255, 255, 255, 255));
    for (int y = 0; y < v.qr_size; ++y)
        for (int x = 0; x < v.qr_size; ++x)
            if (v.qr[static_cast<std::size_t>(y * v.qr_size + x)]) {
                const ImVec2 a{p.x + m * static_cast<float>(x + kQuietZone), p.y + m * static_cast<float>(y + kQuietZone)};
                dl->AddRectFilled(a, {a.x + m, a.y + m}, IM_COL32(0, 0, 0, 255));
            }
}

bool question_open(const LessonView& v) { return v.asked != 0 && !v.revealed; }

std::string answered_line(const LessonView& v) {
    return "answered " + std::to_string(v.cls.answered) + " of " + std::to_string(v.cls.connected);
}

// Who is here (and, with `answers`, who answered the open question), paused, locked.
std::string class_line(const LessonView& v, bool answers) {
    std::string line = std::to_string(v.cls.connected) + (v.cls.connected == 1 ? " student" : " students") + " here";
    if (answers && question_open(v)) line += "   " + answered_line(v);
    if (v.paused) line += "   PAUSED";
    if (v.locked) line += "   exploring locked";
    return line;
}

// The lesson's buttons, each with its key.
void lesson_buttons(LessonView& v) {
    auto button = [](const char* label) {
        same_line_if_fits(button_width(label));
        return ImGui::Button(label);
    };
    if (ImGui::Button(v.card ? "hide the join card (J)" : "join card (J)")) v.card = !v.card;
    if (button(v.paused ? "resume (P)" : "pause (P)")) v.paused = !v.paused;
    if (button(v.locked ? "unlock exploring (L)" : "lock exploring (L)")) v.locked = !v.locked;
    if (button("end the lesson")) v.stop_requested = true;
}

void draw_join_card(AppState& st) {
    LessonView& v = st.lesson;
    const ImVec2 ds = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowPos({0, 0}, ImGuiCond_Always);  // the whole window: the class reads nothing else
    ImGui::SetNextWindowSize(ds, ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(1.0f);
    if (ImGui::Begin("Join the lesson", nullptr, kOverlay)) {
        ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
        ImGui::SetWindowFontScale(1.25f);
        ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
        ImGui::TextUnformatted("Join the live lesson");
        ImGui::PopStyleColor();
        ImGui::SetWindowFontScale(1.0f);
        ImGui::Separator();

        const ImVec2 avail = ImGui::GetContentRegionAvail();
        const float line = ImGui::GetTextLineHeightWithSpacing();
        // The QR code takes the left of a wide card, the top of a narrow one; the words the rest,
        // the address on one line where a third of the width is left to the code.
        const bool side_by_side = avail.x >= avail.y;
        const float gap = 2 * ImGui::GetFontSize();
        const float url_w = kUrlScale * ImGui::CalcTextSize(v.student_url.c_str()).x;
        const float qr_side = side_by_side ? std::min(avail.y - 2 * line, std::max(avail.x * 0.3f, std::min(avail.x * 0.45f, avail.x - url_w - 1.5f * gap)))
                                           : std::min(avail.x, avail.y * 0.45f);
        const ImVec2 qr_at = ImGui::GetCursorScreenPos();
        if (v.qr_size > 0) draw_qr(ImGui::GetWindowDrawList(), qr_at, qr_side, v);
        if (side_by_side) {
            ImGui::SetCursorScreenPos({qr_at.x + qr_side + gap, qr_at.y});
            ImGui::BeginGroup();
        } else {
            ImGui::Dummy({qr_side, qr_side});
        }
        const float text_w = side_by_side ? avail.x - qr_side - gap : avail.x;
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + text_w);
        ImGui::TextUnformatted("Open this address (or scan the code) on a laptop or phone on this network:");
        ImGui::SetWindowFontScale(url_w <= text_w ? kUrlScale : 1.0f);
        ImGui::TextUnformatted(v.student_url.c_str());
        audit_last_item(v.student_url);
        ImGui::SetWindowFontScale(1.0f);
        if (!v.other_addresses.empty()) {
            std::string also = "this machine is also at";
            for (const std::string& a : v.other_addresses) also += " " + a;
            ImGui::TextDisabled("%s", also.c_str());
        }
        ImGui::Spacing();
        ImGui::TextUnformatted("the lesson's code");
        // The code in the large sans font, as tall as kCodeShare of the window, no wider than the column.
        ImFont* big = cell_font();
        const float unit_w = big->CalcTextSizeA(1.0f, FLT_MAX, 0, v.join_code.c_str()).x;
        const float fit = unit_w > 0 ? 0.95f * text_w / unit_w : FLT_MAX;
        const float size = std::min(std::max(kCodeShare * ds.y, 2.5f * ImGui::GetFontSize()), fit);
        const ImVec2 at = ImGui::GetCursorScreenPos();
        const ImVec2 code_size = big->CalcTextSizeA(size, FLT_MAX, 0, v.join_code.c_str());
        ImGui::GetWindowDrawList()->AddText(big, size, at, ImGui::GetColorU32(accent_color()), v.join_code.c_str());
        ImGui::Dummy(code_size);
        audit_last_item(v.join_code);
        ImGui::Spacing();
        ImGui::TextUnformatted(class_line(v, true).c_str());
        ImGui::PopTextWrapPos();
        lesson_buttons(v);
        if (side_by_side) ImGui::EndGroup();
    }
    ImGui::End();
}

// The histogram shows after the reveal, at the step asked, once the counts are in.
bool histogram_shown(const AppState& st) {
    const LessonView& v = st.lesson;
    return v.on && !v.card && v.revealed && st.step == v.asked_step && !v.cls.counts.empty();
}

// After the reveal, at the step asked: one bar per option, its count, the right one marked.
void draw_histogram(const LessonView& v, float width) {
    const std::size_t n = std::min(v.options.size(), v.cls.counts.size());
    int most = 1, total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        most = std::max(most, v.cls.counts[i]);
        total += v.cls.counts[i];
    }
    const std::string title = "the class's answers: " + std::to_string(total);
    ImGui::TextUnformatted(title.c_str());
    float label_w = 0;
    for (std::size_t i = 0; i < n; ++i) label_w = std::max(label_w, ImGui::CalcTextSize(v.options[i].c_str()).x);
    const float count_w = ImGui::CalcTextSize("000  right").x;
    const float bar_max = std::max(width - label_w - count_w - 3 * ImGui::GetStyle().ItemSpacing.x, 2 * ImGui::GetFontSize());
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float h = ImGui::GetTextLineHeight();
    for (std::size_t i = 0; i < n; ++i) {
        const bool right = static_cast<int>(i) == v.cls.answer;
        const ImVec4 colour = right ? right_ink() : ImGui::GetStyleColorVec4(ImGuiCol_Text);
        ImGui::TextColored(colour, "%s", v.options[i].c_str());
        ImGui::SameLine(label_w + 2 * ImGui::GetStyle().ItemSpacing.x);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float w = bar_max * static_cast<float>(v.cls.counts[i]) / static_cast<float>(most);
        dl->AddRectFilled(p, {p.x + bar_max, p.y + h}, ImGui::GetColorU32(ImGuiCol_FrameBg));
        if (w > 0) dl->AddRectFilled(p, {p.x + w, p.y + h}, ImGui::GetColorU32(right ? kRight : ImVec4(0.55f, 0.6f, 0.75f, 1)));
        ImGui::Dummy({bar_max, h});
        ImGui::SameLine();
        ImGui::TextColored(colour, "%d%s", v.cls.counts[i], right ? "  right" : "");
    }
    ImGui::Separator();
}

std::string strip_head(const LessonView& v) { return "live lesson " + v.join_code + "   " + class_line(v, false); }

// The corner line's width: its line (and the large "answered" line) whole, wider for the
// histogram or the buttons, at most 60% of the window.
float strip_width(const AppState& st, bool histogram) {
    const LessonView& v = st.lesson;
    const ImVec2 ds = ImGui::GetIO().DisplaySize;
    const float pad = 2 * ImGui::GetStyle().WindowPadding.x;
    float width = std::max(ImGui::CalcTextSize(strip_head(v).c_str()).x, 1.5f * ImGui::CalcTextSize(answered_line(v).c_str()).x) + pad;
    if (histogram || v.strip_hovered) width = std::max(width, std::min(ds.x * 0.5f, 32 * ImGui::GetFontSize()));
    return std::min(width, ds.x * 0.6f);
}

// The corner line: the code and the class in one line at the bottom right, the lesson's
// buttons while the mouse is over it (the keys do the same), the histogram above them.
void draw_class_strip(AppState& st) {
    LessonView& v = st.lesson;
    const ImVec2 ds = ImGui::GetIO().DisplaySize;
    const bool histogram = histogram_shown(st) && !st.presenting;  // presenter mode: in the caption
    const std::string head = strip_head(v);
    const float width = strip_width(st, histogram);
    ImGui::SetNextWindowPos(ds, ImGuiCond_Always, {1, 1});
    ImGui::SetNextWindowSize({width, 0}, ImGuiCond_Always);
    ImGui::SetNextWindowBgAlpha(0.95f);
    if (ImGui::Begin("Live lesson", nullptr, kOverlay)) {
        ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
        if (histogram) draw_histogram(v, ImGui::GetContentRegionAvail().x);
        if (question_open(v)) {  // for the room: large
            ImGui::SetWindowFontScale(1.5f);
            ImGui::TextUnformatted(answered_line(v).c_str());
            ImGui::SetWindowFontScale(1.0f);
        }
        if (v.strip_hovered) lesson_buttons(v);
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(accent_color(), "%s", head.c_str());
        ImGui::PopTextWrapPos();
        v.strip_hovered = ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
    }
    ImGui::End();
}

}  // namespace

// One line where it fits: the title, then each option's shape, a short bar and its count (the
// right one in green and marked), at the text size or smaller to stay on one line, never under
// kAnswersShare of the window's height; wrapped between options where even that is too wide.
bool DrawLessonAnswers(const AppState& st) {
    if (!histogram_shown(st)) return false;
    const LessonView& v = st.lesson;
    const std::size_t n = std::min(v.options.size(), v.cls.counts.size());
    int most = 1, total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        most = std::max(most, v.cls.counts[i]);
        total += v.cls.counts[i];
    }
    const std::string title = "answers (" + std::to_string(total) + "):";
    std::vector<std::string> counts;
    for (std::size_t i = 0; i < n; ++i)
        counts.push_back(std::to_string(v.cls.counts[i]) + (static_cast<int>(i) == v.cls.answer ? " right" : ""));
    // Each option's width at the text size: its shape, the bar (kBar em), its count, and the
    // spacing between the three, which does not grow with the text.
    constexpr float kBar = 2;
    const float spacing = ImGui::GetStyle().ItemSpacing.x, gap = ImGui::CalcTextSize("   ").x;
    auto option_w = [&](std::size_t i, float em) {
        return ImGui::CalcTextSize(v.options[i].c_str()).x + kBar * em + ImGui::CalcTextSize(counts[i].c_str()).x;
    };
    float grows = ImGui::CalcTextSize(title.c_str()).x, fixed = 0;
    for (std::size_t i = 0; i < n; ++i) {
        grows += gap + option_w(i, ImGui::GetFontSize());
        fixed += 2 * spacing;
    }
    constexpr float kAnswersShare = 0.025f;  // 19 px at 768 px: read from the back of a room
    const float least = kAnswersShare * ImGui::GetIO().DisplaySize.y / ImGui::GetFontSize();
    const float fits = 0.98f * (ImGui::GetContentRegionAvail().x - fixed) / std::max(grows, 1.0f);
    const float scale = std::max(least, std::min(1.0f, fits));
    ImGui::SetWindowFontScale(scale);
    const float em = ImGui::GetFontSize(), bar_h = 0.6f * ImGui::GetTextLineHeight();
    ImGui::AlignTextToFramePadding();  // as tall as the live strip's line it stands in for
    ImGui::TextDisabled("%s", title.c_str());
    audit_last_item(title);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float right_edge = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    for (std::size_t i = 0; i < n; ++i) {
        const bool right = static_cast<int>(i) == v.cls.answer;
        if (ImGui::GetItemRectMax().x + scale * gap + option_w(i, em) + 2 * spacing <= right_edge) ImGui::SameLine(0, scale * gap);
        const ImVec4 colour = right ? right_ink() : ImGui::GetStyleColorVec4(ImGuiCol_Text);
        ImGui::TextColored(colour, "%s", v.options[i].c_str());
        ImGui::SameLine();
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float top = p.y + 0.5f * (ImGui::GetTextLineHeight() - bar_h);
        const float filled = kBar * em * static_cast<float>(v.cls.counts[i]) / static_cast<float>(most);
        dl->AddRectFilled({p.x, top}, {p.x + kBar * em, top + bar_h}, ImGui::GetColorU32(ImGuiCol_FrameBg));
        if (filled > 0)
            dl->AddRectFilled({p.x, top}, {p.x + filled, top + bar_h}, ImGui::GetColorU32(right ? kRight : ImVec4(0.55f, 0.6f, 0.75f, 1)));
        ImGui::Dummy({kBar * em, ImGui::GetTextLineHeight()});
        ImGui::SameLine();
        ImGui::TextColored(colour, "%s", counts[i].c_str());
        audit_last_item(v.options[i] + " " + counts[i]);
    }
    ImGui::SetWindowFontScale(1.0f);
    return true;
}

bool LessonAnswersShown(const AppState& st) { return histogram_shown(st); }

float LessonStripHeight(const AppState& st) {
    const LessonView& v = st.lesson;
    if (!v.on || v.card || st.blank) return 0.0f;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float inner = strip_width(st, false) - 2 * style.WindowPadding.x;
    float h = 2 * style.WindowPadding.y + ImGui::CalcTextSize(strip_head(v).c_str(), nullptr, false, inner).y;
    if (question_open(v)) h += 1.5f * ImGui::GetTextLineHeight() + style.ItemSpacing.y;
    return std::ceil(h);
}

void DrawLesson(AppState& st) {
    if (st.lesson.card) draw_join_card(st);
    else draw_class_strip(st);
}

}  // namespace headsplit::gui
