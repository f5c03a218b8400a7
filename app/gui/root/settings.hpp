#pragma once
// The settings file: the splitters' fractions, kept in ImGui's ini format in the user's
// settings folder (never in the working folder). The file is the user's, so it is read as
// untrusted: only a regular file, at most kMaxSettingsBytes, every number finite and within
// its splitter's range; what cannot be read leaves the defaults and says so in one line.
#include <cstdint>
#include <string>

#include "gui/model/state.hpp"

namespace headsplit::gui {

inline constexpr std::uint64_t kMaxSettingsBytes = 64 * 1024;

// ~/.config/headsplit/imgui.ini (XDG_CONFIG_HOME when it is an absolute path), its folder made
// with its parents; "" when there is no absolute home, said in one line on stderr.
std::string settings_path();

// Registers `splits` as a section of the current ImGui context's settings ([HeadSplit][Layout]
// left=0.2 right=0.25 stage=0.55 code=0.3): a number is taken when it is finite, clamped to its
// splitter's range; anything else is passed over. ImGui's ini reader hands it the lines.
void register_layout_settings(AppState::Splits& splits);

// Hands `text`, a settings file's bytes, to ImGui's ini reader when every section in it is one
// the window uses: its own [HeadSplit][Layout] and ImGui's [Window][NAME]. ImGui's other
// sections are not checked by ImGui ([Table][0x00000001,200000000] allocates the 200 million
// columns it reads, and crashes); any other section, or a NUL byte, throws
// std::runtime_error naming it, and ImGui is given nothing.
void load_settings_text(const std::string& text);

// Registers st.splits as a section of the current ImGui context's settings and reads them
// from `path` ("": no file). ImGui itself never opens the file (IniFilename stays null).
// false when the file is there but was not read (it is then not written either: a file the
// window could not read is not the window's to replace).
bool use_settings_file(AppState& st, const std::string& path);

// Writes the settings to `path` when ImGui asks (`now`: whether or not it asks, at the end):
// atomically, and only where the path is a regular file (a link to one: the file it names) or
// absent, never into a pipe or a device. A failure is said on stderr once (`said` keeps the
// last line said); the window goes on.
void save_settings_file(const std::string& path, bool now, std::string& said);

}  // namespace headsplit::gui
