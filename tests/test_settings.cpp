// The settings file's folder and sections (gui/root/settings.hpp), with ImGui but no window:
// the folder made with its parents where the user has none yet, never under the working folder
// when an XDG variable or HOME is relative; only the window's own sections handed to ImGui.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <imgui.h>

#include "gui/root/settings.hpp"

using namespace headsplit::gui;
namespace fs = std::filesystem;

namespace {

struct TempFolder {
    fs::path path;
    TempFolder() {
        char tmpl[] = "/tmp/headsplit-settings-XXXXXX";
        REQUIRE(::mkdtemp(tmpl));
        path = tmpl;
    }
    ~TempFolder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

// An environment variable set (or unset, with no value) for a scope, then put back.
class ScopedEnv {
public:
    ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* was = ::getenv(name)) was_ = was;
        if (value) ::setenv(name, value->c_str(), 1);
        else ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (was_) ::setenv(name_, was_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> was_;
};

// The working folder moved for a scope, then put back.
class ScopedCwd {
public:
    explicit ScopedCwd(const fs::path& to) : was_(fs::current_path()) { fs::current_path(to); }
    ~ScopedCwd() { fs::current_path(was_); }

private:
    fs::path was_;
};

bool empty_folder(const fs::path& p) { return fs::is_directory(p) && fs::directory_iterator(p) == fs::directory_iterator(); }

// A fresh ImGui context that reads the layout section into `splits`.
struct Context {
    AppState st;
    Context() {
        ImGui::CreateContext();
        ImGui::GetIO().IniFilename = nullptr;
    }
    ~Context() { ImGui::DestroyContext(); }
};

}  // namespace

TEST_CASE("the settings folder is made with its parents, under an absolute home only", "[settings]") {
    TempFolder tmp;
    const fs::path cwd = tmp.path / "cwd";
    fs::create_directories(cwd);
    ScopedCwd in(cwd);
    SECTION("XDG_CONFIG_HOME names a folder that does not exist yet, nor its parent") {
        ScopedEnv xdg("XDG_CONFIG_HOME", (tmp.path / "new" / "config").string());
        CHECK(settings_path() == (tmp.path / "new" / "config" / "headsplit" / "imgui.ini").string());
        CHECK(fs::is_directory(tmp.path / "new" / "config" / "headsplit"));
    }
    SECTION("a new account: HOME without .config") {
        ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
        ScopedEnv home("HOME", (tmp.path / "home").string());
        CHECK(settings_path() == (tmp.path / "home" / ".config" / "headsplit" / "imgui.ini").string());
        CHECK(fs::is_directory(tmp.path / "home" / ".config" / "headsplit"));
    }
    SECTION("a relative XDG_CONFIG_HOME is ignored, as the XDG spec says") {
        ScopedEnv xdg("XDG_CONFIG_HOME", std::string("relative"));
        ScopedEnv home("HOME", (tmp.path / "home").string());
        CHECK(settings_path() == (tmp.path / "home" / ".config" / "headsplit" / "imgui.ini").string());
        CHECK(empty_folder(cwd));
    }
    SECTION("a relative HOME keeps no layout, and says so") {
        ScopedEnv xdg("XDG_CONFIG_HOME", std::string("relative"));
        ScopedEnv home("HOME", std::string("home"));
        CHECK(settings_path().empty());
        CHECK(empty_folder(cwd));
    }
}

TEST_CASE("only the window's own settings sections reach ImGui", "[settings]") {
    TempFolder tmp;
    const fs::path ini = tmp.path / "imgui.ini";
    Context ctx;
    const auto use = [&](const std::string& text) {
        std::ofstream(ini, std::ios::binary) << text;
        return use_settings_file(ctx.st, ini.string());
    };
    const float default_left = AppState::Splits{}.left;
    SECTION("the window's own sections are read") {
        CHECK(use("[Window][Stage]\nPos=0,0\nSize=100,100\n\n[HeadSplit][Layout]\nleft=0.300\n"));
        CHECK(ctx.st.splits.left == Approx(0.3f));
    }
    // ImGui 1.86 allocates the column count a [Table] header gives: 200 million crashed,
    // 100 million took 1.3 GB. Every other section is refused before ImGui reads a byte, the
    // layout section beside it included.
    for (const char* foreign : {"[Table][0x00000001,200000000]", "[Table][0x00000001,100000000]", "[Table][0x00000001,4]",
                                "[Table][0x00000001,-5]", "[Docking][Data]", "[window][Stage]", "[Table]x[y]"}) {
        DYNAMIC_SECTION("refused: " << foreign) {
            CHECK_FALSE(use(std::string("[HeadSplit][Layout]\nleft=0.300\n[Window][Stage]\nPos=1,1\n\r") + foreign +
                            "\nColumn 0 Width=10\n"));
            CHECK(ctx.st.splits.left == default_left);
        }
    }
    SECTION("a NUL byte, which could hide a line from a reader that stops there") {
        CHECK_FALSE(use(std::string("[HeadSplit][Layout]\nleft=0.300\n\0\n", 33)));
        CHECK(ctx.st.splits.left == default_left);
    }
    SECTION("a header ImGui does not take for one is a line, not a section") {
        CHECK(use("[HeadSplit][Layout]\nleft=0.300\n [Table][0x00000001,200000000]\n[Table]\n"));
        CHECK(ctx.st.splits.left == Approx(0.3f));
    }
}
