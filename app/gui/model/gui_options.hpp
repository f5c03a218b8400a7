#pragma once
// What the window is asked to do: the configuration it opens on, its size and text, and the
// unattended runs (a screenshot, the driver, the layout audit) it may carry out instead of
// waiting for a reader. Filled from the command line; read by the window and its runs.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gui/model/lesson.hpp"
#include "headsplit/engine/config.hpp"

namespace headsplit::gui {

// One of --keys's presses, as the live window takes it: `key` (a GLFW key code) pressed for
// a frame, with Shift held when `shift`; or, where `typed` is not empty, that text typed over
// what the open text box holds, then Enter.
struct KeyPress {
    int key = 0;
    bool shift = false;
    std::string typed;
};

struct GuiOptions {
    Config config;
    std::string screenshot;  // non-empty: save this PNG of step `step` and exit
    int step = 0;
    int width = 1600, height = 900;
    float font_scale = 1.0f;
    bool light = false;
    bool present = false;      // start in presenter mode (F5 toggles, Escape leaves)
    bool quiz = false;           // predict the shape (Q toggles)
    bool compare_masks = false;  // heatmaps: causal vs bidirectional side by side
    int focus_head = -1;         // heatmaps: this head alone (-1: all heads)
    float zoom = 1.0f;           // the stage's zoom (the wheel's), 1 to 8
    std::int64_t pan[3] = {0, 0, 0};  // the stage window's first token, column, head (a drag's)
    std::int64_t train_steps = 0;  // with tab "train": steps trained before the first frame
    std::string train_compare;     // with tab "train": an experiment's runs side by side
    std::string tab = "heatmaps";  // heatmaps | weights | why (why also starts measuring)
    int drive_frames = 0;      // > 0: drive the app for this many frames (see driver.hpp)
    std::string drive_report;  // where the driver writes its JSON report
    std::string layout_report;  // with `screenshot`: also write that frame's layout report here
    std::vector<KeyPress> keys;  // with `screenshot`: pressed at `step`, each once the one before took effect
    std::string layout_audit;   // non-empty: run the layout audit sweep, write its report here
    std::vector<std::pair<int, int>> audit_windows;  // the sweep's window sizes
    std::vector<float> audit_fonts;                  // the sweep's font scales
    std::vector<std::string> audit_cases;            // the sweep's configurations by name (empty: all)
    LessonStarter lesson_starter;  // set: the Controls panel can start a live lesson
    int lesson_port = kLessonPort;  // the Controls' lesson port field at first
    LessonStart lesson;            // a lesson already started (`headsplit lesson`): the window is its console
};

}  // namespace headsplit::gui
