// libFuzzer target over the settings file's reader: any bytes as the file, through the
// window's check of its sections (load_settings_text), ImGui's ini reader and the window's
// layout section (register_layout_settings), as the window reads it. Whatever the bytes,
// nothing crashes, a refused file leaves the defaults, every fraction comes out finite and
// within its splitter's range, and what is written back reads back to the same fractions (to
// the three decimals written).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <imgui.h>

#include "gui/model/state.hpp"
#include "gui/root/settings.hpp"

using headsplit::gui::AppState;

namespace {

[[noreturn]] void bug(const char* what, const AppState::Splits& s) {
    std::fprintf(stderr, "fuzz_settings: %s: left=%g right=%g stage=%g code=%g\n", what, s.left, s.right, s.stage, s.code);
    std::abort();
}

bool within(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }

void check(const AppState::Splits& s) {
    if (!within(s.left, 0.1f, 0.4f) || !within(s.right, 0.1f, 0.45f) || !within(s.stage, 0.2f, 0.85f) ||
        !within(s.code, 0.15f, 0.85f))
        bug("a fraction out of its range", s);
}

// One ImGui context for the run, its layout section read into `splits`.
AppState::Splits& splits() {
    static AppState::Splits* s = [] {
        ImGui::CreateContext();
        ImGui::GetIO().IniFilename = nullptr;
        auto* made = new AppState::Splits;
        headsplit::gui::register_layout_settings(*made);
        return made;
    }();
    return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    AppState::Splits& s = splits();
    s = AppState::Splits{};
    const std::string file(reinterpret_cast<const char*>(data), size);
    try {
        headsplit::gui::load_settings_text(file);
    } catch (const std::runtime_error&) {
        const AppState::Splits defaults;
        if (s.left != defaults.left || s.right != defaults.right || s.stage != defaults.stage || s.code != defaults.code)
            bug("a refused file changed the layout", s);
    }
    check(s);
    const AppState::Splits read = s;
    const std::string written = ImGui::SaveIniSettingsToMemory();
    s = AppState::Splits{};
    ImGui::LoadIniSettingsFromMemory(written.data(), written.size());
    check(s);
    // Written with three decimals: back within half the last one (and float's rounding of it).
    const float half = 5.5e-4f;
    if (std::abs(s.left - read.left) > half || std::abs(s.right - read.right) > half ||
        std::abs(s.stage - read.stage) > half || std::abs(s.code - read.code) > half)
        bug("what was written reads back differently", s);
    return 0;
}
