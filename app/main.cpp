// headsplit: the one executable. The visualizer by default; subcommands `trace`,
// `kernels`, `bench` and `export` run headless.
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <cstdlib>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "headsplit/engine/config.hpp"
#include "headsplit/backends/gl_backend.hpp"
#include "headsplit/io/trace_json.hpp"
#include "cli/bench_command.hpp"
#include "cli/export_command.hpp"
#include "cli/handout_command.hpp"
#include "gui/platform/window.hpp"
#include "cli/options.hpp"
#include "cli/kernels_command.hpp"
#include "cli/trace_command.hpp"

namespace {

// CLI11's messages may span lines; the user gets one.
std::string one_line(std::string s) {
    for (auto& ch : s)
        if (ch == '\n') ch = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

// "1920x1080" -> {1920, 1080}; ConfigError naming `name` otherwise.
std::pair<int, int> parse_size(const char* name, const std::string& text) {
    using headsplit::ConfigError;
    const auto x = text.find('x');
    if (x == std::string::npos)
        throw ConfigError(std::string(name) + " " + text + " is not a size; use WxH, e.g. 1920x1080");
    const std::string w = std::string(name) + " width", h = std::string(name) + " height";
    return {static_cast<int>(headsplit::app::parse_count(w.c_str(), text.substr(0, x), 320, 16384)),
            static_cast<int>(headsplit::app::parse_count(h.c_str(), text.substr(x + 1), 240, 16384))};
}

float parse_font_scale(const char* name, const std::string& text) {
    char* end = nullptr;
    const double f = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(f >= 0.75 && f <= 2.5))
        throw headsplit::ConfigError(std::string(name) + " " + text + " is not a scale from 0.75 to 2.5");
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

int fail(int code, const std::string& message) {
    std::cerr << "headsplit: " << one_line(message) << "\n";
    return code;
}

// The visualizer's own options (no subcommand), as typed.
struct GuiFlags {
    headsplit::app::ConfigOptions config;
    std::string screenshot, step, font_scale;
    bool light = false, present = false, quiz = false, compare_masks = false;
    std::string heatmap_head, zoom, pan;
    std::string drive, drive_report = "headsplit-drive.json", window_size, tab = "heatmaps";
    std::string layout_report, layout_audit, audit_windows = "1280x720,1600x900,1920x1080,3840x2160", audit_fonts = "1,1.5,2";
};

void add_gui_options(CLI::App& cli, GuiFlags& f) {
    headsplit::app::add_config_options(cli, f.config);
    cli.add_option("--screenshot", f.screenshot, "render real frames of the window at --step N, save FILE (PNG), exit");
    cli.add_option("--step", f.step, "the step to show first (default 0)");
    cli.add_option("--font-scale", f.font_scale, "text size for a projector, 0.75 to 2.5 (default 1)");
    cli.add_flag("--light", f.light, "light theme (default dark)");
    cli.add_flag("--present", f.present, "presenter mode: stage and heatmaps fill the screen, a large caption, keys only (F5 / Escape leave)");
    cli.add_flag("--quiz", f.quiz, "predict the shape: each next step is asked before it is drawn (Q toggles)");
    cli.add_flag("--compare-masks", f.compare_masks, "heatmaps: one head causal and bidirectional side by side");
    cli.add_option("--heatmap", f.heatmap_head, "heatmaps: head N alone, large, with its numbers (a click on its map)");
    cli.add_option("--zoom", f.zoom, "the stage's zoom, 1 to 8 (the mouse wheel's; default 1: fit the panel)");
    cli.add_option("--pan", f.pan, "TOKEN,COLUMN,HEAD: where the stage's window starts in a tensor too large to draw whole (a drag's)");
    cli.add_option("--tab", f.tab, "bottom panel to show: heatmaps | weights | why (why measures the shape at once)");
    cli.add_option("--window", f.window_size, "window size WxH, e.g. 1920x1080 (default 1600x900)");
    cli.add_option("--drive", f.drive, "drive the app for N frames of random changes, keys and resizes (a soak)");
    cli.add_option("--drive-report", f.drive_report, "where --drive writes its JSON report (default headsplit-drive.json)");
    cli.add_option("--layout-report", f.layout_report,
                   "with --screenshot: also write every panel, label and cell of that frame as JSON (headsplit-layout)");
    cli.add_option("--layout-audit", f.layout_audit,
                   "render every step of the audit configurations at each --audit-windows size and --audit-fonts scale, "
                   "check each frame's layout, write the problems as JSON to FILE; exit 1 when there are any");
    cli.add_option("--audit-windows", f.audit_windows, "window sizes for --layout-audit (default 1280x720,1600x900,1920x1080,3840x2160)");
    cli.add_option("--audit-fonts", f.audit_fonts, "font scales for --layout-audit (default 1,1.5,2)");
}

// The stage's view: --zoom and --pan.
void set_view(headsplit::gui::GuiOptions& g, const GuiFlags& f) {
    using headsplit::ConfigError;
    if (!f.zoom.empty()) {
        char* end = nullptr;
        const double z = std::strtod(f.zoom.c_str(), &end);
        if (*end != '\0' || !(z >= 1 && z <= 8)) throw ConfigError("--zoom " + f.zoom + " is not a zoom from 1 to 8");
        g.zoom = static_cast<float>(z);
    }
    if (!f.pan.empty()) {
        const std::vector<std::string> parts = split_list(f.pan);
        if (parts.size() != 3)
            throw ConfigError("--pan " + f.pan + " is not TOKEN,COLUMN,HEAD; use three counts, e.g. 16,0,4");
        const char* names[] = {"--pan token", "--pan column", "--pan head"};
        for (int i = 0; i < 3; ++i) g.pan[i] = headsplit::app::parse_count(names[i], parts[static_cast<std::size_t>(i)], 0, 1 << 20);
    }
}

// The visualizer's options from what was typed; ConfigError naming the option otherwise.
// Where the unattended runs write is refused here, before a window opens.
headsplit::gui::GuiOptions gui_options(GuiFlags& f) {
    using namespace headsplit;
    gui::GuiOptions g;
    if (f.config.backend.empty()) f.config.backend = "gl";
    g.config = app::make_config(f.config).config;
    g.screenshot = f.screenshot;
    if (!f.step.empty()) g.step = static_cast<int>(app::parse_count("--step", f.step, 0, 1 << 20));
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
    if (f.tab != "heatmaps" && f.tab != "weights" && f.tab != "why")
        throw ConfigError("--tab " + f.tab + " is not a panel; use heatmaps, weights or why");
    g.tab = f.tab;
    g.layout_report = f.layout_report;
    g.layout_audit = f.layout_audit;
    if (!f.layout_report.empty() && f.screenshot.empty())
        throw ConfigError("--layout-report needs --screenshot: the report describes the saved frame");
    for (const std::string& size : split_list(f.audit_windows)) g.audit_windows.push_back(parse_size("--audit-windows", size));
    for (const std::string& a : split_list(f.audit_fonts)) g.audit_fonts.push_back(parse_font_scale("--audit-fonts", a));
    if (!f.window_size.empty()) std::tie(g.width, g.height) = parse_size("--window", f.window_size);
    if (!g.screenshot.empty()) check_writable(g.screenshot);
    if (g.drive_frames > 0) check_writable(g.drive_report);
    if (!g.layout_report.empty()) check_writable(g.layout_report);
    if (!g.layout_audit.empty()) check_writable(g.layout_audit);
    return g;
}

// Parses the command line: -1 when it parsed, else the exit code (help printed, or the
// problem said in one line).
int parse(CLI::App& cli, int argc, char** argv) {
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return cli.exit(e);
    } catch (const CLI::ArgumentMismatch& e) {
        // CLI11 says "--heads: 1 required TEXT missing"; say it plainly.
        std::string msg = e.what();
        const auto colon = msg.find(':');
        if (msg.rfind("--", 0) == 0 && colon != std::string::npos && msg.find("missing") != std::string::npos)
            msg = msg.substr(0, colon) + " needs a value";
        return fail(2, msg + " (see headsplit --help)");
    } catch (const CLI::ParseError& e) {
        return fail(2, std::string(e.what()) + " (see headsplit --help)");
    }
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace headsplit;
    // A trace's tensors are large blocks that the next run (the window recomputes on every
    // change, the bench repeats) allocates again: keep freed memory in the heap for them
    // instead of unmapping it and faulting fresh zeroed pages in each time.
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1024 << 20);
    CLI::App cli{"HeadSplit: multi-head attention with weight splits, run for real and traced step by step."};
    cli.require_subcommand(0, 1);
    app::TraceCommand trace;
    trace.add_to(cli);
    app::KernelsCommand kernels;
    kernels.add_to(cli);
    app::BenchCommand bench;
    bench.add_to(cli);
    app::ExportCommand export_script;
    export_script.add_to(cli);
    app::HandoutCommand handout;
    handout.add_to(cli);
    // No subcommand: the visualizer, on the same OPTIONS (GL backend unless told otherwise).
    GuiFlags gui_flags;
    add_gui_options(cli, gui_flags);
    if (const int code = parse(cli, argc, argv); code >= 0) return code;

    try {
        if (cli.got_subcommand("trace")) return trace.run();
        if (cli.got_subcommand("kernels")) return kernels.run();
        if (cli.got_subcommand("bench")) return bench.run();
        if (cli.got_subcommand("export")) return export_script.run();
        if (cli.got_subcommand("handout")) return handout.run();
        return gui::run_gui(gui_options(gui_flags));
    } catch (const ConfigError& e) {
        return fail(2, e.what());
    } catch (const GlError& e) {
        return fail(e.kind == GlError::Kind::NoContext ? 2 : 1, e.what());
    } catch (const std::bad_alloc&) {
        return fail(1, "out of memory; use fewer tokens or a smaller D_out, or lower --memory-budget");
    } catch (const std::exception& e) {
        return fail(1, e.what());
    }
}
