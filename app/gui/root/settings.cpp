#include "gui/root/settings.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

#include <imgui.h>
#include <imgui_internal.h>

namespace headsplit::gui {

namespace {

// The splitters' fractions in the settings file, as a section of ImGui's ini file:
// [HeadSplit][Layout] left=0.2 right=0.25 stage=0.55 code=0.5
void register_layout_settings(AppState& st) {
    ImGuiSettingsHandler h;
    h.TypeName = "HeadSplit";
    h.TypeHash = ImHashStr("HeadSplit");
    h.UserData = &st;
    h.ReadOpenFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, const char* name) -> void* {
        return std::string(name) == "Layout" ? handler->UserData : nullptr;
    };
    h.ReadLineFn = [](ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
        AppState::Splits& sp = static_cast<AppState*>(entry)->splits;
        float v = 0;
        if (std::sscanf(line, "left=%f", &v) == 1) sp.left = std::clamp(v, 0.1f, 0.4f);
        else if (std::sscanf(line, "right=%f", &v) == 1) sp.right = std::clamp(v, 0.1f, 0.45f);
        else if (std::sscanf(line, "stage=%f", &v) == 1) sp.stage = std::clamp(v, 0.2f, 0.85f);
        else if (std::sscanf(line, "code=%f", &v) == 1) sp.code = std::clamp(v, 0.15f, 0.85f);
    };
    h.WriteAllFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* buf) {
        const AppState::Splits& sp = static_cast<AppState*>(handler->UserData)->splits;
        buf->appendf("[HeadSplit][Layout]\nleft=%.3f\nright=%.3f\nstage=%.3f\ncode=%.3f\n\n", sp.left, sp.right, sp.stage,
                     sp.code);
    };
    ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

}  // namespace

std::string settings_path() {
    std::string dir;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) dir = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home) dir = std::string(home) + "/.config";
    if (dir.empty()) return "";
    dir += "/headsplit";
    ::mkdir(dir.c_str(), 0755);  // best effort: without it the layout is simply not kept
    return dir + "/imgui.ini";
}

void use_settings_file(AppState& st, const std::string& path) {
    ImGui::GetIO().IniFilename = path.empty() ? nullptr : path.c_str();
    register_layout_settings(st);
    if (!path.empty()) ImGui::LoadIniSettingsFromDisk(path.c_str());
}

}  // namespace headsplit::gui
