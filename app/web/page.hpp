#pragma once
// The page's side of the window (emscripten only): the canvas follows the tab and the device
// pixel ratio; the address holds the configuration and the step, with the command line's long
// option names; files the window saves (a screenshot, the handout, the take-home scripts)
// become downloads; `?json=1` and `?layout-report=1` write the trace and the layout report
// into the page, for tests and for students who want the numbers.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gui/runs/unattended.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/io/address.hpp"
#include "gui/model/gui_options.hpp"

namespace headsplit::gui {

// The address's parameters that are not options: set by the page's main before the window.
struct PageRequests {
    bool json = false;           // ?json=1: the trace as `headsplit trace --json` writes it, in <pre id="trace-json">
    bool layout_report = false;  // ?layout-report=1: the settled frame's layout report, in <pre id="layout-report">
    // The options the address gave (name, value), kept for the address when the configuration
    // cannot be spelled from its values (a preset's own embeddings).
    std::vector<std::pair<std::string, std::string>> config_query;
    // A live lesson (docs/guide.md): ?lesson=CODE joins as a student, &teacher=SECRET drives.
    std::string lesson, teacher;
    bool own_view = false;  // the address named a configuration, a step or a view (not just the lesson)
    bool slices_every = false;  // ?slices=every: the computation pauses at every slice point (tests)
};
PageRequests& page_requests();

// The window's options from an address's parameters (the page's own, or a lesson state's
// query), with the parameters that are not options recorded in `requests`. Throws
// ConfigError, one line naming the parameter, when a value is refused.
GuiOptions page_options(const QueryPairs& query, PageRequests& requests);

// The page's run: the window's loop calls it at the same points as an unattended run's.
std::unique_ptr<UnattendedRun> make_page_run(const GuiOptions& o);

// The page's address now: location.search's parameters, in order ("" for a bare flag).
// Throws ConfigError naming the parameter when the address cannot be read (parse_query).
std::vector<std::pair<std::string, std::string>> page_query();

// Seconds since the user last acted on the page (a key, the mouse, a touch, a paste, a
// resize), measured by the browser's own clock; a day before the first act.
double page_seconds_since_input();

// Starts computing `first` once at a shorter length, on a thread of its own, while the window
// starts (the WebGL context and the fonts take about half a second), and drops the result;
// nothing when `first` is computed in the frame anyway (teaching sizes), reads a checkpoint,
// or would take more than a moment. Why: V8 runs wasm code in a quick first tier until a
// function has run for a while, then optimizes it in the background for its next call (a
// call already running stays in the first tier), so a page's first trace ran 2-3x slower
// than the same trace later. Warmed with the same widths, heads and mode (the same kernels),
// the first trace runs the optimized code. The trace itself does not wait for this.
void warm_up_engine(const Config& first);

// Starts following the lesson the address names (page_requests().lesson), if any: the
// browser's WebSocket (web/page_library.js) brings the teacher's states to PageLesson.
void start_lesson();

// Shows `line` as the page's refusal (a bad address value), in place of the window.
void show_refusal(const std::string& line);

}  // namespace headsplit::gui
