// The settings file's folder and sections (gui/root/settings.hpp), with ImGui but no window:
// the folder made with its parents where the user has none yet, never under the working folder
// when an XDG variable or HOME is relative.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

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
