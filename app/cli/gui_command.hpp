#pragma once
// No subcommand: the visualizer. Its options are the configuration's (the GL backend unless
// told otherwise) and the window's own: screenshot, step, text size, presenter mode, quiz,
// heatmap, zoom and pan, tab, window size, and the unattended runs (drive, layout audit).
#include <string>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "gui/root/window.hpp"

namespace headsplit::app {

// The visualizer's own options, as typed.
struct GuiFlags {
    std::string train_steps;    // --train-steps
    std::string train_compare;  // --train-compare
    ConfigOptions config;
    std::string screenshot, step, font_scale;
    bool light = false, present = false, quiz = false, compare_masks = false;
    std::string heatmap_head, zoom, pan;
    std::string drive, drive_report = "headsplit-drive.json", window_size, tab = "heatmaps";
    std::string keys;  // --keys: pressed before the screenshot's frame
    std::string layout_report, layout_audit, audit_windows = "1024x768,1280x800,1366x768,1920x1080,2560x1440,3840x2160",
                audit_fonts = "1,1.25,1.5,1.75,2", audit_cases;
};

struct GuiCommand {
    GuiFlags flags;

    void add_to(CLI::App& cli);  // on the top level, beside the subcommands
    // The window's options from what was typed; ConfigError naming the option otherwise.
    // Where the unattended runs write is refused here, before a window opens.
    gui::GuiOptions options();
};

}  // namespace headsplit::app
