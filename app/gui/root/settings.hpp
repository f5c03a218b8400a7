#pragma once
// The settings file: the splitters' fractions, kept by ImGui's ini file in the user's
// settings folder (never in the working folder).
#include <string>

#include "gui/model/state.hpp"

namespace headsplit::gui {

// ~/.config/headsplit/imgui.ini (XDG_CONFIG_HOME when set); "" when there is no home.
std::string settings_path();

// Reads and writes st.splits as a section of the current ImGui context's settings file at
// `path`, loaded now ("": no file, nothing read or written). `path` must outlive the context.
void use_settings_file(AppState& st, const std::string& path);

}  // namespace headsplit::gui
