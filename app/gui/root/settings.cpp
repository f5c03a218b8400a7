#include "gui/root/settings.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sys/stat.h>

#include <imgui.h>
#include <imgui_internal.h>

#include "headsplit/base/utf8.hpp"
#include "headsplit/formats/files.hpp"
#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"

namespace headsplit::gui {

namespace {

// One fraction from a line "name=value": kept when the number is finite, clamped to [lo, hi].
void read_fraction(const char* line, const char* name, float& to, float lo, float hi) {
    const std::size_t n = std::strlen(name);
    if (std::strncmp(line, name, n) != 0 || line[n] != '=') return;
    char* end = nullptr;
    const float v = std::strtof(line + n + 1, &end);
    if (end == line + n + 1 || !std::isfinite(v)) return;
    to = std::clamp(v, lo, hi);
}

// A line of the file as a message shows it: at most `max` bytes, never cut inside a
// character, control characters escaped.
std::string shown_line(const std::string& line, std::size_t max) {
    std::size_t end = 0;
    while (end < line.size()) {
        std::size_t next = end;
        if (next_code_point(line, next) == kNotUtf8) next = end + 1;
        if (next > max) break;
        end = next;
    }
    return terminal_text(line.substr(0, end)) + (end < line.size() ? "..." : "");
}

// The first section header of `text` that is not one of the window's, as ImGui's ini reader
// splits the text (lines end at \n or \r; a header starts with '[', ends with ']' and has a
// type, up to the first ']', then a '['); "" when every section is the window's.
std::string foreign_section(const std::string& text) {
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find_first_of("\r\n", at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        if (line.size() < 2 || line.front() != '[' || line.back() != ']') continue;
        const std::size_t type_end = line.find(']', 1);
        if (type_end == line.size() - 1 || line.find('[', type_end + 1) == std::string::npos) continue;  // no name: skipped
        const std::string type = line.substr(1, type_end - 1);
        if (type != "HeadSplit" && type != "Window") return line;
    }
    return "";
}

}  // namespace

void load_settings_text(const std::string& text) {
    if (text.find('\0') != std::string::npos)
        throw std::runtime_error("it holds a NUL byte at byte " + std::to_string(text.find('\0')) +
                                 ", which no settings file the window writes has");
    const std::string foreign = foreign_section(text);
    if (!foreign.empty())
        throw std::runtime_error("it holds the section " + shown_line(foreign, 60) +
                                 ", which the window does not use (it reads [HeadSplit][Layout] and [Window][NAME])");
    if (!text.empty()) ImGui::LoadIniSettingsFromMemory(text.data(), text.size());  // 0 would mean "to the NUL"
}

void register_layout_settings(AppState::Splits& splits) {
    ImGuiSettingsHandler h;
    h.TypeName = "HeadSplit";
    h.TypeHash = ImHashStr("HeadSplit");
    h.UserData = &splits;
    h.ReadOpenFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, const char* name) -> void* {
        return std::string(name) == "Layout" ? handler->UserData : nullptr;
    };
    h.ReadLineFn = [](ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
        AppState::Splits& sp = *static_cast<AppState::Splits*>(entry);
        read_fraction(line, "left", sp.left, 0.1f, 0.4f);
        read_fraction(line, "right", sp.right, 0.1f, 0.45f);
        read_fraction(line, "stage", sp.stage, 0.2f, 0.85f);
        read_fraction(line, "code", sp.code, 0.15f, 0.85f);
    };
    h.WriteAllFn = [](ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* buf) {
        const AppState::Splits& sp = *static_cast<const AppState::Splits*>(handler->UserData);
        buf->appendf("[HeadSplit][Layout]\nleft=%.3f\nright=%.3f\nstage=%.3f\ncode=%.3f\n\n", sp.left, sp.right, sp.stage,
                     sp.code);
    };
    ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

std::string settings_path() {
    std::string why;
    const std::string dir = user_folder("XDG_CONFIG_HOME", ".config", &why);
    if (dir.empty()) {
        std::fprintf(stderr, "headsplit: the layout is not kept: %s\n", terminal_text(why).c_str());
        return "";
    }
    // With its parents (a new account has no ~/.config); a folder that cannot be made is said
    // when the file is written.
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return dir + "/imgui.ini";
}

bool use_settings_file(AppState& st, const std::string& path) {
    ImGui::GetIO().IniFilename = nullptr;  // read and written here, never by ImGui
    register_layout_settings(st.splits);
    struct stat info {};
    if (path.empty() || (::lstat(path.c_str(), &info) != 0 && errno == ENOENT)) return true;  // nothing kept yet
    try {
        check_readable_file(path, kMaxSettingsBytes, "remove it, and the window keeps its layout there anew");
        std::ifstream in(path, std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) throw std::runtime_error(path + ": cannot be read");
        try {
            load_settings_text(text);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(path + ": " + e.what() + "; remove it, and the window keeps its layout there anew");
        }
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "headsplit: the layout starts from its defaults and is not kept: %s\n", e.what());
        return false;
    }
}

void save_settings_file(const std::string& path, bool now, std::string& said) {
    ImGuiIO& io = ImGui::GetIO();
    if (path.empty() || !(io.WantSaveIniSettings || now)) return;
    io.WantSaveIniSettings = false;
    const auto say = [&said](const std::string& line) {
        if (line != said) std::fprintf(stderr, "headsplit: the layout is not kept: %s\n", line.c_str());
        said = line;
    };
    std::string target = path;
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
        if (!S_ISREG(info.st_mode)) return say(path + " is not a regular file");
        if (char* real = ::realpath(path.c_str(), nullptr)) {
            target = real;  // a link's file is replaced, not the link
            std::free(real);
        }
    }
    try {
        write_file_atomically(target, std::string(ImGui::SaveIniSettingsToMemory()));
    } catch (const std::exception& e) {
        say(e.what());
    }
}

}  // namespace headsplit::gui
