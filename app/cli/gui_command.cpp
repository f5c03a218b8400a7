#include "cli/gui_command.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>
#include <utility>
#include <vector>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "gui/runs/audit_sweep.hpp"
#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"
#include "headsplit/training/trainer.hpp"

namespace headsplit::app {

namespace {

// The largest window: an 8K screen's. Every frame is drawn in full, in software where there is
// no GPU (Mesa's llvmpipe), so a larger one only takes longer to show the same picture.
constexpr int kMaxWindowWidth = 7680, kMaxWindowHeight = 4320;

// "1920x1080" -> {1920, 1080}; ConfigError naming `name` otherwise.
std::pair<int, int> parse_size(const char* name, const std::string& text) {
    refuse_blanks(name, text);
    const auto x = text.find('x');
    if (x == std::string::npos)
        throw ConfigError(std::string(name) + " " + shown_value(text) + " is not a size; use WxH, e.g. 1920x1080");
    const std::string w = std::string(name) + " width", h = std::string(name) + " height";
    return {static_cast<int>(parse_count(w.c_str(), text.substr(0, x), 320, kMaxWindowWidth)),
            static_cast<int>(parse_count(h.c_str(), text.substr(x + 1), 240, kMaxWindowHeight))};
}

float parse_font_scale(const char* name, const std::string& text) {
    refuse_blanks(name, text);
    char* end = nullptr;
    const double f = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(f >= 0.75 && f <= 2.5))
        throw ConfigError(std::string(name) + " " + shown_value(text) + " is not a scale from 0.75 to 2.5");
    return static_cast<float>(f);
}

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : text) {
        if (ch == ',') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    out.push_back(cur);
    return out;
}

// --keys: "H,shift+H,right,T,type:the cat sat" -> the presses, each named as a key's label
// reads (letters, digits, [ ] ., right, left, up, down, home, end, pageup, pagedown, space,
// enter, escape, f1 to f12), "shift+" before it for Shift held; "type:TEXT" types TEXT into
// the text box T opens and presses Enter.
std::vector<gui::KeyPress> parse_keys(const std::string& text) {
    static const std::vector<std::pair<std::string, int>> named{
        {"right", GLFW_KEY_RIGHT}, {"left", GLFW_KEY_LEFT},       {"up", GLFW_KEY_UP},         {"down", GLFW_KEY_DOWN},
        {"home", GLFW_KEY_HOME},   {"end", GLFW_KEY_END},         {"pageup", GLFW_KEY_PAGE_UP}, {"pagedown", GLFW_KEY_PAGE_DOWN},
        {"space", GLFW_KEY_SPACE}, {"enter", GLFW_KEY_ENTER},     {"escape", GLFW_KEY_ESCAPE}, {"[", GLFW_KEY_LEFT_BRACKET},
        {"]", GLFW_KEY_RIGHT_BRACKET}, {".", GLFW_KEY_PERIOD}};
    std::vector<gui::KeyPress> out;
    for (const std::string& item : split_list(text)) {
        gui::KeyPress k;
        if (item.rfind("type:", 0) == 0 && item.size() > 5) {
            k.typed = item.substr(5);
            out.push_back(k);
            continue;
        }
        std::string name;
        for (char ch : item) name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (name.rfind("shift+", 0) == 0) k.shift = true, name = name.substr(6);
        if (name.size() == 1 && name[0] >= 'a' && name[0] <= 'z') k.key = GLFW_KEY_A + (name[0] - 'a');
        else if (name.size() == 1 && name[0] >= '0' && name[0] <= '9') k.key = GLFW_KEY_0 + (name[0] - '0');
        else if (name.size() >= 2 && name.size() <= 3 && name[0] == 'f' && name.find_first_not_of("0123456789", 1) == std::string::npos &&
                 std::stoi(name.substr(1)) >= 1 && std::stoi(name.substr(1)) <= 12)
            k.key = GLFW_KEY_F1 + std::stoi(name.substr(1)) - 1;
        for (const auto& [n, key] : named)
            if (n == name) k.key = key;
        if (k.key == 0)
            throw ConfigError("--keys: " + shown_value(item) + " is not a key; use a letter, a digit, [ ] ., right, left, up, "
                              "down, home, end, pageup, pagedown, space, enter, escape, f1 to f12, shift+ before one, "
                              "or type:TEXT, comma-separated, e.g. H,shift+H");
        out.push_back(k);
    }
    return out;
}

// --tab's values: the bottom panel's tabs, and the views of the two that have several.
const std::vector<std::string> kTabs{"heatmaps", "weights", "weights-matmuls", "weights-kv", "why", "why-sweep", "why-kv", "train"};

}  // namespace

void GuiCommand::add_to(CLI::App& cli) {
    GuiFlags& f = flags;
    add_config_options(cli, f.config);
    needs_a_path(cli.add_option("--screenshot", f.screenshot, "render real frames of the window at --step N, save FILE (PNG), exit"));
    cli.add_option("--step", f.step, "the step to show first (default 0)");
    cli.add_option("--font-scale", f.font_scale, "text size for a projector, 0.75 to 2.5 (default 1)");
    cli.add_flag("--light", f.light, "light theme (default dark)");
    cli.add_flag("--present", f.present, "presenter mode: stage and heatmaps fill the screen, a large caption, keys only (F5 / Escape leave)");
    cli.add_flag("--quiz", f.quiz, "predict the shape: each next step is asked before it is drawn (Q toggles)");
    cli.add_flag("--compare-masks", f.compare_masks, "heatmaps: one head causal and bidirectional side by side");
    cli.add_option("--heatmap", f.heatmap_head, "heatmaps: head N large, every head as a thumbnail beside it (a click on its map; [ and ] step through)");
    cli.add_option("--zoom", f.zoom, "the stage's zoom, 1 to 8 (the mouse wheel's; default 1: fit the panel)");
    cli.add_option("--pan", f.pan, "TOKEN,COLUMN,HEAD: where the stage's window starts in a tensor too large to draw whole (a drag's)");
    cli.add_option("--tab", f.tab, "bottom panel to show: heatmaps | weights | weights-matmuls | weights-kv | why | why-sweep | why-kv | train (the weight split tab's W_query, its matmul counts, its shared keys and values; the why tab's modes, its T sweep, its KV cache; the first two measure the shape at once; train: the Train view, N)");
    cli.add_option("--train-steps", f.train_steps, "with --tab train: train this many steps of the induction task before the first frame");
    cli.add_option("--train-compare", f.train_compare, "with --tab train: scale | init | heads | ablate, the experiment's runs side by side (the Train view's compare buttons)");
    cli.add_option("--window", f.window_size, "window size WxH, e.g. 1920x1080 (default 1600x900)");
    cli.add_option("--drive", f.drive, "drive the app for N frames of random changes, keys and resizes (a soak)");
    needs_a_path(cli.add_option("--drive-report", f.drive_report, "where --drive writes its JSON report (default headsplit-drive.json)"));
    needs_a_path(cli.add_option("--layout-report", f.layout_report,
                   "with --screenshot: also write every panel, label and cell of that frame as JSON (headsplit-layout)"));
    cli.add_option("--keys", f.keys, "with --screenshot: press these keys at --step as the window takes them, each once the "
                   "one before took effect, e.g. H,shift+H (a letter, a digit, [ ] ., right, left, home, end, pageup, pagedown, "
                   "space, enter, escape, f1 to f12, shift+KEY; type:TEXT types into the box T opens, then Enter)");
    needs_a_path(cli.add_option("--layout-audit", f.layout_audit,
                   "render every step of the audit configurations at each --audit-windows size and --audit-fonts scale, "
                   "check each frame's layout, write the problems as JSON to FILE; exit 1 when there are any"));
    cli.add_option("--audit-windows", f.audit_windows, "window sizes for --layout-audit (default 1024x768,1280x800,1366x768,1920x1080,2560x1440,3840x2160)");
    cli.add_option("--audit-fonts", f.audit_fonts, "font scales for --layout-audit (default 1,1.25,1.5,1.75,2)");
    cli.add_option("--audit-cases", f.audit_cases, "configurations for --layout-audit, e.g. default,journey (default: all)");
}

namespace {

// The stage's view: --zoom and --pan.
void set_view(gui::GuiOptions& g, const GuiFlags& f) {
    if (!f.zoom.empty()) {
        refuse_blanks("--zoom", f.zoom);
        char* end = nullptr;
        const double z = std::strtod(f.zoom.c_str(), &end);
        if (*end != '\0' || !(z >= 1 && z <= 8)) throw ConfigError("--zoom " + shown_value(f.zoom) + " is not a zoom from 1 to 8");
        g.zoom = static_cast<float>(z);
    }
    if (!f.pan.empty()) {
        const std::vector<std::string> parts = split_list(f.pan);
        if (parts.size() != 3)
            throw ConfigError("--pan " + shown_value(f.pan) + " is not TOKEN,COLUMN,HEAD; use three counts, e.g. 16,0,4");
        const char* names[] = {"--pan token", "--pan column", "--pan head"};
        for (int i = 0; i < 3; ++i) g.pan[i] = parse_count(names[i], parts[static_cast<std::size_t>(i)], 0, 1 << 20);
    }
}

}  // namespace

gui::GuiOptions GuiCommand::options() {
    GuiFlags& f = flags;
    gui::GuiOptions g;
    if (f.config.backend.empty()) f.config.backend = "gl";
    const CheckedConfig checked = app::make_config(f.config);

    g.config = checked.config;
    g.screenshot = f.screenshot;
    if (!f.step.empty()) {
        g.step = static_cast<int>(app::parse_count("--step", f.step, 0, 1 << 20));
        // The steps this configuration has, from its plan (shapes only, nothing computed).
        const std::size_t steps = plan(checked).steps.size();
        if (static_cast<std::size_t>(g.step) >= steps)
            throw ConfigError("--step " + f.step + " does not exist; this trace has steps 0 to " + std::to_string(steps - 1));
    }
    if (!f.font_scale.empty()) g.font_scale = parse_font_scale("--font-scale", f.font_scale);
    g.light = f.light;
    g.present = f.present;
    g.compare_masks = f.compare_masks;
    if (!f.heatmap_head.empty())
        g.focus_head = static_cast<int>(app::parse_count("--heatmap", f.heatmap_head, 0, g.config.heads - 1));
    g.quiz = f.quiz;
    set_view(g, f);
    if (!f.drive.empty()) g.drive_frames = static_cast<int>(app::parse_count("--drive", f.drive, 1, 10000000));
    g.drive_report = f.drive_report;
    if (std::find(kTabs.begin(), kTabs.end(), f.tab) == kTabs.end()) {
        std::string use;
        for (std::size_t i = 0; i < kTabs.size(); ++i) use += (i == 0 ? "" : i + 1 < kTabs.size() ? ", " : " or ") + kTabs[i];
        throw ConfigError("--tab " + shown_value(f.tab) + " is not a panel; use " + use);
    }
    g.tab = f.tab;
    if (!f.train_steps.empty()) {
        if (f.tab != "train") throw ConfigError("--train-steps needs --tab train: the steps are the Train view's");
        g.train_steps = app::parse_count("--train-steps", f.train_steps, 0, 1000000);
    }
    if (!f.train_compare.empty()) {
        if (f.tab != "train") throw ConfigError("--train-compare needs --tab train: the runs are the Train view's");
        const std::vector<std::string>& names = experiments();
        if (std::find(names.begin(), names.end(), f.train_compare) == names.end())
            throw ConfigError("--train-compare " + shown_value(f.train_compare) +
                              " is not an experiment; use scale, init, heads or ablate");
        g.train_compare = f.train_compare;
    }
    g.layout_report = f.layout_report;
    g.layout_audit = f.layout_audit;
    if (!f.layout_report.empty() && f.screenshot.empty())
        throw ConfigError("--layout-report needs --screenshot: the report describes the saved frame");
    if (!f.keys.empty()) {
        if (f.screenshot.empty()) throw ConfigError("--keys needs --screenshot: the keys are pressed before the saved frame");
        g.keys = parse_keys(f.keys);
    }
    for (const std::string& size : split_list(f.audit_windows)) g.audit_windows.push_back(parse_size("--audit-windows", size));
    for (const std::string& a : split_list(f.audit_fonts)) g.audit_fonts.push_back(parse_font_scale("--audit-fonts", a));
    // (Only when asked: building the cases reads the shipped checkpoint.)
    const std::vector<gui::AuditCase> cases = f.audit_cases.empty() ? std::vector<gui::AuditCase>{} : gui::audit_cases();
    for (const std::string& name : f.audit_cases.empty() ? std::vector<std::string>{} : split_list(f.audit_cases)) {
        if (std::none_of(cases.begin(), cases.end(), [&](const gui::AuditCase& a) { return a.name == name; })) {
            std::string use;
            for (const gui::AuditCase& a : cases) use += (use.empty() ? "" : ",") + a.name;
            throw ConfigError("--audit-cases: " + shown_value(name) + " is not an audit configuration; use some of " + use);
        }
        g.audit_cases.push_back(name);
    }
    if (!f.window_size.empty()) std::tie(g.width, g.height) = parse_size("--window", f.window_size);
    refuse_shared_outputs({{"--screenshot", g.screenshot},
                           {"--layout-report", g.layout_report},
                           {"--drive-report", g.drive_frames > 0 ? g.drive_report : std::string()},
                           {"--layout-audit", g.layout_audit}});
    if (!g.screenshot.empty()) check_writable(g.screenshot);
    if (g.drive_frames > 0) check_writable(g.drive_report);
    if (!g.layout_report.empty()) check_writable(g.layout_report);
    if (!g.layout_audit.empty()) check_writable(g.layout_audit);
    return g;
}

}  // namespace headsplit::app
