#include "gui/panels/style.hpp"

#include "gui/panels/panels.hpp"

#include "gui/view/layout.hpp"

#include <algorithm>
#include <cmath>
#include <cfloat>
#include <cstdio>
#include <sys/stat.h>

namespace headsplit::gui {

ImU32 head_color(int head, float alpha) {
    // Tableau 10: distinct under projection and for most colour-blind viewers.
    static const ImVec4 palette[] = {
        {0.12f, 0.47f, 0.71f, 1}, {1.00f, 0.50f, 0.05f, 1}, {0.17f, 0.63f, 0.17f, 1}, {0.84f, 0.15f, 0.16f, 1},
        {0.58f, 0.40f, 0.74f, 1}, {0.55f, 0.34f, 0.29f, 1}, {0.89f, 0.47f, 0.76f, 1}, {0.50f, 0.50f, 0.50f, 1},
        {0.74f, 0.74f, 0.13f, 1}, {0.09f, 0.75f, 0.81f, 1},
    };
    ImVec4 c = palette[((head % 10) + 10) % 10];
    c.w = alpha;
    return ImGui::ColorConvertFloat4ToU32(c);
}

ImU32 neutral_color(bool dark, float alpha) {
    return dark ? ImGui::ColorConvertFloat4ToU32({0.42f, 0.45f, 0.50f, alpha})
                : ImGui::ColorConvertFloat4ToU32({0.70f, 0.72f, 0.76f, alpha});
}

ImVec4 panel_background(bool dark) {
    return dark ? ImVec4(0.06f, 0.06f, 0.07f, 1) : ImVec4(0.94f, 0.94f, 0.94f, 1);
}

float toggle_width(const char* label) {
    return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

float button_width(const char* label) {
    return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}

void same_line_if_fits(float next_w) {
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + next_w <= right) ImGui::SameLine();
}

ImU32 diverging_color(float v) {
    v = std::clamp(v, -1.0f, 1.0f);
    const ImVec4 white{0.97f, 0.97f, 0.97f, 1}, red{0.80f, 0.12f, 0.15f, 1}, blue{0.13f, 0.40f, 0.75f, 1};
    const ImVec4 end = v >= 0 ? red : blue;
    const float t = std::fabs(v);
    return ImGui::ColorConvertFloat4ToU32(
        {white.x + (end.x - white.x) * t, white.y + (end.y - white.y) * t, white.z + (end.z - white.z) * t, 1});
}

bool is_gradient(const Step& s, const TensorRecord& t) {
    return is_backward(s.op) && (t.name.rfind("d_", 0) == 0 || t.name.rfind("dW_", 0) == 0 || t.name.rfind("db_", 0) == 0);
}

int gradient_exponent(const Step& s, const TensorRecord& t) {
    if (!is_gradient(s, t) || !t.has_values()) return 0;
    const std::vector<float>& v = t.values();
    float most = 0;
    for (float x : v) most = std::max(most, std::fabs(x));
    int k = 0;
    while (most > 0 && most * std::pow(10.0f, static_cast<float>(k)) < 0.1f && k < 30) ++k;
    return k;
}

std::string shown_name(const Step& s, const TensorRecord& t) {
    const int k = gradient_exponent(s, t);
    if (k == 0) return t.name;
    return t.name + (k <= 4 ? " x" + std::string("1") + std::string(static_cast<std::size_t>(k), '0') : " x1e" + std::to_string(k));
}

ValueRange shown_range(const Step& s, const TensorRecord& t) {
    ValueRange r = value_range(t.values().data(), t.values().size());
    const float f = std::pow(10.0f, static_cast<float>(gradient_exponent(s, t)));
    r.lo *= f, r.hi *= f;
    return r;
}

ImU32 gradient_fill(float v, float most) { return diverging_color(most > 0 ? v / most : 0); }

ImU32 sequential_color(float v) {
    v = std::clamp(v, 0.0f, 1.0f);
    // light yellow -> orange -> dark purple
    const ImVec4 a{1.00f, 0.96f, 0.80f, 1}, b{0.96f, 0.45f, 0.20f, 1}, c{0.35f, 0.05f, 0.40f, 1};
    const ImVec4 lo = v < 0.5f ? a : b, hi = v < 0.5f ? b : c;
    const float t = v < 0.5f ? v * 2 : (v - 0.5f) * 2;
    return ImGui::ColorConvertFloat4ToU32({lo.x + (hi.x - lo.x) * t, lo.y + (hi.y - lo.y) * t, lo.z + (hi.z - lo.z) * t, 1});
}

ImU32 text_on(ImU32 background) {
    const ImVec4 c = ImGui::ColorConvertU32ToFloat4(background);
    const float luma = 0.299f * c.x + 0.587f * c.y + 0.114f * c.z;
    return luma > 0.55f ? IM_COL32(20, 20, 20, 255) : IM_COL32(250, 250, 250, 255);
}

namespace {
// The theme apply_theme set: the light one darkens the text colours below, so that on its light
// grey they keep WCAG AA's 4.5:1 (5.2 to 5.7; the dark theme's green was 1.6:1 there).
bool g_dark_theme = true;

float relative_luminance(ImVec4 c) {
    const auto linear = [](float v) { return v <= 0.04045f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f); };
    return 0.2126f * linear(c.x) + 0.7152f * linear(c.y) + 0.0722f * linear(c.z);
}
}  // namespace

float contrast_ratio(ImVec4 a, ImVec4 b) {
    const float la = relative_luminance(a), lb = relative_luminance(b);
    return (std::max(la, lb) + 0.05f) / (std::min(la, lb) + 0.05f);
}

ImVec4 ink(ImVec4 c) { return ink(c, panel_background(g_dark_theme)); }

ImVec4 current_line_background() {
    const ImVec4 hi = ImGui::GetStyleColorVec4(ImGuiCol_TextSelectedBg), bg = panel_background(g_dark_theme);
    return {bg.x + (hi.x - bg.x) * hi.w, bg.y + (hi.y - bg.y) * hi.w, bg.z + (hi.z - bg.z) * hi.w, 1};
}

ImVec4 ink(ImVec4 c, ImVec4 paper) {
    if (g_dark_theme) return c;
    // A little over 4.5, so that rounding to 8 bits a channel keeps it.
    for (int i = 0; i < 200 && contrast_ratio(c, paper) < 4.6f; ++i) c = {c.x * 0.98f, c.y * 0.98f, c.z * 0.98f, c.w};
    return c;
}

ImU32 head_ink(int head) { return ImGui::ColorConvertFloat4ToU32(ink(ImGui::ColorConvertU32ToFloat4(head_color(head)))); }

ImVec4 warning_ink() { return ink({0.95f, 0.75f, 0.25f, 1}); }
ImVec4 error_ink() { return ink({1.0f, 0.40f, 0.38f, 1}); }
ImVec4 right_ink() { return ink({0.35f, 0.85f, 0.45f, 1}); }
ImVec4 live_ink() { return ink({0.55f, 0.85f, 1.0f, 1}); }

ImVec4 storage_color(Storage s) {
    const bool d = g_dark_theme;
    switch (s) {
        case Storage::View: return d ? ImVec4{0.40f, 0.85f, 0.50f, 1} : ImVec4{0.08f, 0.45f, 0.20f, 1};
        case Storage::InPlace: return d ? ImVec4{0.95f, 0.75f, 0.25f, 1} : ImVec4{0.55f, 0.35f, 0.0f, 1};
        case Storage::Copy: return d ? ImVec4{1.00f, 0.50f, 0.45f, 1} : ImVec4{0.72f, 0.14f, 0.12f, 1};
        case Storage::New: break;
    }
    return d ? ImVec4{0.45f, 0.62f, 1.00f, 1} : ImVec4{0.12f, 0.35f, 0.75f, 1};
}


void section_title(const char* text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ink(ImGui::GetStyleColorVec4(ImGuiCol_PlotHistogram)));
    text_at_spaces(text, false);  // a narrow column wraps it ("Beyond multi-head" / "attention")
    ImGui::PopStyleColor();
}

}  // namespace headsplit::gui

namespace headsplit::gui {

namespace {
// The code's smaller sizes, as fractions of the text's, and the smallest size baked (px).
constexpr float kCodeSizes[] = {0.85f, 0.72f, 0.62f, 0.54f};
constexpr float kSmallestCode = 11.0f;
}  // namespace

namespace {
// The cell numbers' usual size, px; their font is baked kCellBake times larger, so that numbers
// grown with their cells stay sharp.
float g_cell_size = 15.2f;
constexpr float kCellBake = 2.5f;
}  // namespace

void add_fonts(float scale) {
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    const float size = 19.0f * scale;
    g_cell_size = size * 0.8f;
    const char* sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
    const char* mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
    struct stat sb;
    ImFontConfig cfg;
    if (stat(sans, &sb) == 0 && stat(mono, &sb) == 0) {
        io.Fonts->AddFontFromFileTTF(sans, size);
        io.Fonts->AddFontFromFileTTF(mono, size);          // index 1: code
        io.Fonts->AddFontFromFileTTF(sans, size * 0.8f * kCellBake);  // index 2: numbers inside cells
        // 3 on: the code smaller, each baked at its own size (scaling a baked font blurs
        // it and loses thin strokes such as underscores), none under kSmallestCode px.
        for (float k : kCodeSizes)
            if (size * k >= kSmallestCode) io.Fonts->AddFontFromFileTTF(mono, size * k);
    } else {
        cfg.SizePixels = 13.0f * scale;  // ImGui's own font, scaled
        g_cell_size = cfg.SizePixels;
        io.Fonts->AddFontDefault(&cfg);
        io.Fonts->AddFontDefault(&cfg);
        io.Fonts->AddFontDefault(&cfg);
    }
}

void apply_theme(bool dark) {
    g_dark_theme = dark;
    if (dark) ImGui::StyleColorsDark();
    else ImGui::StyleColorsLight();
    ImGuiStyle& style = ImGui::GetStyle();
    style.WindowRounding = 0;
    style.FrameRounding = 3;
    style.WindowBorderSize = 1;
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0, 0, 0, 0);  // drawn as the clear colour: panel_background
    // The dim text (shapes, strides, the memory strip's ticks) reads on the light theme's grey too.
    style.Colors[ImGuiCol_TextDisabled] = ink(style.Colors[ImGuiCol_TextDisabled]);
}

ImFont* code_font() {
    ImFontAtlas* a = ImGui::GetIO().Fonts;
    return a->Fonts.Size > 1 ? a->Fonts[1] : ImGui::GetFont();
}

std::vector<ImFont*> code_fonts() {
    ImFontAtlas* a = ImGui::GetIO().Fonts;
    std::vector<ImFont*> out{code_font()};
    for (int i = 3; i < a->Fonts.Size; ++i) out.push_back(a->Fonts[i]);
    return out;
}

float cell_font_size() { return g_cell_size; }

ImFont* cell_font() {
    ImFontAtlas* a = ImGui::GetIO().Fonts;
    return a->Fonts.Size > 2 ? a->Fonts[2] : ImGui::GetFont();
}


void audit_panel(const char* name, float above) {
    FrameWatch& a = frame_watch();
    if (!a.watching()) return;
    const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    // Right after Begin the draw list clips to the window's inner area: what can be seen. A
    // panel drawn in a tab starts under the tab bar (the cursor, less the padding above it).
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 c0 = dl->GetClipRectMin(), c1 = dl->GetClipRectMax();
    const float top = std::max(c0.y, ImGui::GetCursorScreenPos().y - ImGui::GetStyle().WindowPadding.y - above);
    a.begin_panel(name, pos.x, pos.y, size.x, size.y, c0.x, top, c1.x, c1.y,
                  ImGui::GetScrollMaxX() > 0, ImGui::GetScrollMaxY() > 0);
}

ImVec4 accent_color() { return g_dark_theme ? ImVec4{1.0f, 0.85f, 0.3f, 1.0f} : ImVec4{0.55f, 0.35f, 0.0f, 1.0f}; }

void next_on_line(float w) {
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <= right) ImGui::SameLine();
}

namespace {
float radio_width(const char* label) {
    return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}
}  // namespace

int radio_row(const std::vector<const char*>& labels, int current) {
    int i = 0;
    for (const char* label : labels) {
        if (i > 0) next_on_line(radio_width(label));
        ImGui::RadioButton(label, &current, i++);
    }
    return current;
}

float radio_row_width(const std::vector<const char*>& labels) {
    float w = 0;
    for (const char* label : labels) w += (w > 0 ? ImGui::GetStyle().ItemSpacing.x : 0.0f) + radio_width(label);
    return w;
}

float radio_row_height(const std::vector<const char*>& labels, float width) {
    int lines = 1;
    float x = -1;  // where the last button ends (-1: none yet)
    for (const char* label : labels) {
        const float w = radio_width(label);
        if (x >= 0 && x + ImGui::GetStyle().ItemSpacing.x + w > width) ++lines, x = -1;
        x = (x >= 0 ? x + ImGui::GetStyle().ItemSpacing.x : 0.0f) + w;
    }
    return static_cast<float>(lines) * std::floor(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.y);
}

void scroll_below_projector_size(float font_scale) {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    if (display.x < 680 * font_scale || display.y < 512 * font_scale) frame_watch().allow_scroll();
}

ImVec2 room_left() {
    // ImGui's content region grows with what was drawn last frame (it includes scrolling), so
    // a panel that overflowed once would go on overflowing: measure the window itself.
    const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize(), at = ImGui::GetCursorScreenPos();
    const ImVec2 pad = ImGui::GetStyle().WindowPadding;
    return {std::max(0.0f, pos.x + size.x - pad.x - at.x), std::max(0.0f, pos.y + size.y - pad.y - at.y)};
}

namespace {
float text_width(const std::string& text, float size) {
    return ImGui::GetFont()->CalcTextSizeA(size > 0 ? size : ImGui::GetFontSize(), FLT_MAX, 0, text.c_str()).x;
}
}  // namespace

ImVec2 draw_label(ImDrawList* dl, ImVec2 pos, ImU32 color, const std::string& text, const std::string& token, float size) {
    if (!(size > 0)) size = ImGui::GetFontSize();
    const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, text.c_str());
    dl->AddText(ImGui::GetFont(), size, pos, color, text.c_str());
    frame_watch().label(text, pos.x, pos.y, ts.x, ts.y, token);
    return ts;
}

ImVec2 draw_label_on_end(ImDrawList* dl, ImVec2 pos, ImU32 color, const std::string& text, const std::string& token,
                         float size) {
    if (!(size > 0)) size = ImGui::GetFontSize();
    ImFont* font = ImGui::GetFont();
    const ImVec2 ts = font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str());
    // Drawn across at pos, then each vertex turned a quarter anticlockwise about the box: a
    // point (dx, dy) from pos goes to (dy, w - dx), so the text's left end is at the bottom.
    // The text is laid out under a clip that covers both boxes, so no glyph is dropped before
    // it is turned; its command then clips to the turned box within the window's clip.
    const ImVec2 outer0 = dl->GetClipRectMin(), outer1 = dl->GetClipRectMax();
    dl->PushClipRect(pos, {pos.x + std::max(ts.x, ts.y), pos.y + std::max(ts.x, ts.y)}, false);
    const int first = dl->VtxBuffer.Size;
    dl->AddText(font, size, pos, color, text.c_str());
    for (int i = first; i < dl->VtxBuffer.Size; ++i) {
        ImVec2& p = dl->VtxBuffer[i].pos;
        const float dx = p.x - pos.x, dy = p.y - pos.y;
        p = {pos.x + dy, pos.y + ts.x - dx};
    }
    if (!dl->CmdBuffer.empty())
        dl->CmdBuffer.back().ClipRect = {std::max(outer0.x, pos.x), std::max(outer0.y, pos.y),
                                         std::min(outer1.x, pos.x + ts.y), std::min(outer1.y, pos.y + ts.x)};
    dl->PopClipRect();
    frame_watch().label(text, pos.x, pos.y, ts.y, ts.x, token);
    return {ts.y, ts.x};
}

std::string word_label(const std::vector<std::string>& words, std::size_t i, std::int64_t at) {
    if (i >= words.size()) return "";
    const std::string& w = words[i];
    return !w.empty() && std::count(words.begin(), words.end(), w) > 1 ? std::to_string(at) + ":" + w : w;
}

namespace {

// `text` cut to fit `max_w` px, a trailing "." marking the cut ("" when not one letter fits).
std::string cut_to_fit(const std::string& text, float max_w, float size) {
    for (std::size_t n = text.size(); n-- > 1;) {
        if ((static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) continue;  // not inside a UTF-8 character
        std::string cut = text.substr(0, n) + ".";
        if (text_width(cut, size) <= max_w) return cut;
    }
    return "";
}

}  // namespace

std::string fit_text(const std::string& text, float max_w, float size) {
    if (text_width(text, size) <= max_w) return text;
    std::string cut = cut_to_fit(text, max_w, size);
    frame_watch().cut(text, cut);
    return cut;
}

std::string fit_token(const std::string& text, float max_w, float size) {
    return text_width(text, size) <= max_w ? text : cut_to_fit(text, max_w, size);
}

std::string first_fitting(const std::vector<std::string>& options, float max_w, float size) {
    for (const std::string& o : options)
        if (text_width(o, size) <= max_w) return o;
    return options.empty() ? std::string() : fit_text(options.back(), max_w, size);
}

void audit_last_item(const std::string& text) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    frame_watch().label(text, a.x, a.y, b.x - a.x, b.y - a.y);
}

std::string steps_key(const Trace* trace, float width, const std::string& more) {
    char b[96];
    std::snprintf(b, sizeof b, "%p %.1f %.2f ", static_cast<const void*>(trace), static_cast<double>(width),
                  static_cast<double>(ImGui::GetFontSize()));
    return b + more;
}

void text_at_spaces(const std::string& text, bool audited) {
    const float width = ImGui::GetContentRegionAvail().x;
    const auto measure = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
    for (const std::string& line : lines_at_spaces(text, width, measure)) {
        ImGui::TextUnformatted(line.c_str());
        if (audited) audit_last_item(line);
    }
}

CellText cell_text(const std::vector<float>& values, float cell_w, float cell_h, std::string tensor, float grow_to,
                   float at_least, int most_decimals) {
    return cell_text(value_range(values.data(), values.size()), cell_w, cell_h, std::move(tensor), grow_to, at_least,
                     most_decimals);
}

CellText cell_text(const ValueRange& range, float cell_w, float cell_h, std::string tensor, float grow_to,
                   float at_least, int most_decimals) {
    CellText t;
    t.tensor = std::move(tensor);
    ImFont* f = cell_font();
    const float base = cell_font_size();
    const float least = std::max(base, at_least);
    for (int decimals : {2, 1}) {
        if (decimals > most_decimals) continue;
        t.decimals = decimals;
        t.widest = 0;
        for (const std::string& s : widest_cell_texts(range, decimals))
            t.widest = std::max(t.widest, f->CalcTextSizeA(base, FLT_MAX, 0.0f, s.c_str()).x);
        // As large as the cell's width (the widest number and 4 px) and height allow, up to
        // grow_to; widths scale with the size. The tolerance: float rounding of the cell size.
        // A grown number keeps a margin of a twentieth of its width on either side.
        const float by_width = t.widest > 0 ? std::min(base * (cell_w - 4) / t.widest, base * cell_w / (1.1f * t.widest)) : base;
        t.size = std::min({std::max(grow_to, least), std::max(by_width, base), std::max(0.8f * cell_h, least)});
        const float need_w = std::max(t.widest * least / base + 4, least > base ? 1.1f * t.widest * least / base : 0.0f);
        t.need_w = need_w - 4;
        t.shown = !range.empty() && t.size + 0.01f >= least && cell_w + 0.01f >= need_w && cell_h >= least * 0.8f;
        if (t.shown) break;
    }
    if (!t.shown) t.size = base;
    return t;
}

int shared_decimals(const AppState& st, int panel, const std::string& key, int own) {
    auto& wanted = st.panels.decimals_wanted;
    const int frame = ImGui::GetFrameCount();
    if (wanted.size() > 64 && !wanted.count(key)) wanted.clear();  // the steps left behind
    PanelState::DecimalsWanted& w = wanted[key];
    w.frame[panel] = frame;
    w.decimals[panel] = own;
    const int other = 1 - panel;
    return w.frame[other] >= frame - 1 ? std::min(own, w.decimals[other]) : own;
}

bool cell_value(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 color, float value, const CellText& t, bool heatmap,
                int head, std::vector<long long> index) {
    const float w = p1.x - p0.x, h = p1.y - p0.y;
    // Too small for any number of its tensor: nothing to draw. The audit judges it all the same
    // where a number could be read at all (8 px; a large grid's dots are not) and a heatmap's
    // cells always (their size is what a projector's back row sees).
    if (!t.shown && w + 0.01f < t.need_w + 4) {
        if (heatmap || w >= 8.0f)
            frame_watch().cell(format_cell(value, t.decimals), p0.x, p0.y, w, h, false, t.need_w, heatmap, t.tensor, head, 0,
                                std::move(index), t.values_of);
        return false;
    }
    const std::string text = format_cell(value, t.decimals);
    if (t.shown) {
        ImFont* f = cell_font();
        const ImVec2 ts = f->CalcTextSizeA(t.size, FLT_MAX, 0.0f, text.c_str());
        dl->AddText(f, t.size, {(p0.x + p1.x - ts.x) * 0.5f, (p0.y + p1.y - ts.y) * 0.5f}, color, text.c_str());
    }
    frame_watch().cell(text, p0.x, p0.y, w, h, t.shown, t.need_w, heatmap, t.tensor, head, digit_height(t.size),
                        std::move(index), t.values_of);
    return t.shown;
}

std::string grouped(std::int64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string parameter_line(const Config& c) {
    // Weights only (no biases), as the attention layer's size is usually told.
    const std::int64_t kv = c.kv_width(), Dk = c.key_dim();
    const std::int64_t per_layer = c.d_in * c.d_out + 2 * Dk * kv + (c.out_proj ? c.d_out * c.d_out : 0);
    std::string sizes = kv == c.d_out && Dk == c.d_in
                            ? "3 x " + std::to_string(c.d_in) + " x " + std::to_string(c.d_out)
                            : std::to_string(c.d_in) + " x " + std::to_string(c.d_out) + " + 2 x " + std::to_string(Dk) +
                                  " x " + std::to_string(kv);
    std::string s = "attention weights per layer: " + sizes + (c.out_proj ? " + " + std::to_string(c.d_out) + "^2" : "") +
                    " = " + grouped(per_layer);
    if (c.layers > 1) s += "; x " + std::to_string(c.layers) + " layers = " + grouped(c.layers * per_layer);
    if (c.preset == "gpt3" && c.d_out == 12288) s += " (about a third of 175B)";
    return s;
}

float value_cell() { return std::max({number_width("-0.00"), number_width("-inf"), number_width("-154")}) + 6; }

float number_width(const std::string& text) {
    return cell_font()->CalcTextSizeA(cell_font_size(), FLT_MAX, 0.0f, text.c_str()).x;
}

float number_size_max() { return 1.5f * ImGui::GetFontSize(); }

float number_size_min(bool presenting, bool document) {
    if (document) return 26.0f / digit_height(1.0f);
    return presenting ? 0.025f * std::min(ImGui::GetIO().DisplaySize.y, 1080.0f) / digit_height(1.0f) : 0.0f;
}

float digit_height(float size) {
    // The cell font's digits stand from the baseline to the cap height: DejaVu Sans's 0.729 em,
    // and ImGui sizes a font by its ascent + descent, 1.164 em.
    return size * 0.729f / 1.164f;
}

}  // namespace headsplit::gui
