// The light theme's text colours against WCAG 2's contrast ratio for normal text (AA: 4.5:1),
// on the panels' background and on the code panel's current line: the handout's pictures and
// a room with the lights on use that theme. The ratio is computed here from WCAG's definition,
// not with the app's own function, and checked against known pairs first.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cmath>

#include <imgui.h>

#include "gui/panels/style.hpp"

using namespace headsplit;
using namespace headsplit::gui;

namespace {

// As drawn: each channel rounded to 8 bits, then WCAG's relative luminance.
double channel(float v8) {
    const double c = std::round(std::clamp(v8, 0.0f, 1.0f) * 255.0) / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}
double luminance(ImVec4 c) { return 0.2126 * channel(c.x) + 0.7152 * channel(c.y) + 0.0722 * channel(c.z); }
double ratio(ImVec4 a, ImVec4 b) {
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}
ImVec4 of(ImU32 c) { return ImGui::ColorConvertU32ToFloat4(c); }

struct Context {
    Context() { ImGui::CreateContext(); }
    ~Context() {
        apply_theme(true);
        ImGui::DestroyContext();
    }
};

}  // namespace

TEST_CASE("the contrast ratio here is WCAG's", "[style]") {
    CHECK(ratio({0, 0, 0, 1}, {1, 1, 1, 1}) == Approx(21.0));
    CHECK(ratio({1, 1, 1, 1}, {1, 1, 1, 1}) == Approx(1.0));
    // #777777 on white: 4.48 (the grey WebAIM's checker calls just short of AA).
    CHECK(ratio({0x77 / 255.0f, 0x77 / 255.0f, 0x77 / 255.0f, 1}, {1, 1, 1, 1}) == Approx(4.48).epsilon(0.01));
}

TEST_CASE("the light theme's text colours hold 4.5:1 on their background", "[style]") {
    Context ctx;
    apply_theme(false);
    const ImVec4 paper = panel_background(false);
    const ImGuiStyle& style = ImGui::GetStyle();
    CHECK(ratio(style.Colors[ImGuiCol_Text], paper) >= 4.5);
    CHECK(ratio(style.Colors[ImGuiCol_TextDisabled], paper) >= 4.5);  // shapes, strides, the strip's ticks
    CHECK(ratio(accent_color(), paper) >= 4.5);
    for (Storage s : {Storage::View, Storage::InPlace, Storage::Copy, Storage::New}) CHECK(ratio(storage_color(s), paper) >= 4.5);
    for (ImVec4 c : {warning_ink(), error_ink(), right_ink(), live_ink()}) CHECK(ratio(c, paper) >= 4.5);
    // Section titles take the theme's histogram colour through ink().
    CHECK(ratio(ink(style.Colors[ImGuiCol_PlotHistogram]), paper) >= 4.5);
    for (int h = 0; h < 10; ++h) {
        INFO("head " << h);
        CHECK(ratio(of(head_ink(h)), paper) >= 4.5);
    }
    // The code panel's current line: its text on the highlight.
    const ImVec4 line = current_line_background();
    CHECK(ratio(line, paper) > 1.05);  // a highlight that shows
    for (ImVec4 c : {style.Colors[ImGuiCol_Text], style.Colors[ImGuiCol_TextDisabled], ImVec4{0.10f, 0.50f, 0.10f, 1},
                     ImVec4{0.70f, 0.20f, 0.10f, 1}, ImVec4{1.0f, 0.85f, 0.30f, 1}})
        CHECK(ratio(ink(c, line), line) >= 4.5);
}

TEST_CASE("ink darkens only where it must, and keeps the hue", "[style]") {
    Context ctx;
    apply_theme(false);
    const ImVec4 paper = panel_background(false);
    // The heads' palette is bright: orange, green and others fall short as text on light grey.
    const ImVec4 orange = of(head_color(1));
    REQUIRE(ratio(orange, paper) < 3.0);
    const ImVec4 dark_orange = of(head_ink(1));
    CHECK(ratio(dark_orange, paper) >= 4.5);
    CHECK(dark_orange.y / dark_orange.x == Approx(orange.y / orange.x).epsilon(0.03));  // the same hue, darker
    // Already dark enough: unchanged.
    const ImVec4 black{0.05f, 0.05f, 0.05f, 1};
    CHECK(ink(black).x == black.x);
    // The dark theme keeps its bright colours.
    apply_theme(true);
    CHECK(of(head_ink(1)).x == Approx(orange.x).margin(1.0 / 255));
    CHECK(warning_ink().y == Approx(0.75f));
}
