#pragma once
// What the visualizer shows and what the controls have set. Panels read it and change
// it; they never compute attention (the trace holds every number they draw).
#include <algorithm>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "gui/model/compute.hpp"
#include "gui/model/lesson.hpp"
#include "gui/model/live.hpp"
#include "gui/model/training.hpp"
#include "gui/model/why.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/config_edit.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/teaching/quiz.hpp"
#include "headsplit/engine/trace.hpp"
#include "gui/view/layout.hpp"
#include "gui/view/trace_cache.hpp"

namespace headsplit::gui {

// The cell under the mouse, set by the stage or a heatmap during the frame.
struct Hover {
    bool valid = false;
    int step = 0;
    int tensor = 0;
    std::int64_t index = 0;  // row-major element of that tensor
};

// Predict the shape (Q, --quiz): a step reached going forward is asked before it is drawn.
// Until it is answered, what would give the answer away stays hidden: the stage's cells, the
// heatmaps, the inspector, the step's explanation and the shapes of the steps not yet shown
// (timeline, presenter caption).
struct QuizState {
    bool on = false;
    int asked = 0, right = 0;             // this session's score, kept across traces
    std::optional<QuizQuestion> pending;  // asked, not answered
    int shown_upto = -1;                  // steps up to this one show their shapes
    // The last answer, shown above its step: right or not, what was said, and why.
    int answered_step = -1;
    bool answered_right = false;
    std::string verdict;
    std::string verdict_short;  // the same without the mistake's name: where the line is narrow
    std::uint64_t questions = 0;  // how many were made: orders each question's options anew
    char typed[64] = {};          // the answer box
};

// The largest of a measure over a trace's steps, kept for the picture `key` stands for (the
// trace, the width, the text size, ...): worked out again only when the key changes, not
// every frame.
struct StepsMost {
    std::string key;
    float value = 0;
    template <class Measure>
    float of(const std::string& now, const Trace& tr, Measure measure) {
        if (now != key) {
            value = 0;
            for (const Step& s : tr.steps) value = std::max(value, measure(s));
            key = now;
        }
        return value;
    }
};

// What the panels keep from one frame to the next for themselves, apart from the lesson:
// named here, not hidden in function statics, so that every AppState starts clean.
struct PanelState {
    // A sentence box (Controls' words_box): the text as typed, and the words it last showed.
    struct WordsBox {
        char text[2048] = {};
        std::string shown = "\x01";
    };
    std::map<std::string, WordsBox> words_boxes;  // by the box's id
    float pending_font_scale = -1;  // the text size slider's value until it is released; -1 before the first frame
    int dragging_splitter = -1;     // the splitter a drag holds (window.cpp), -1 when none
    bool presenter_split_set = false;  // the reader dragged presenter mode's splitter: its fraction stands
    std::string fallback_said;      // the last CPU fall-back notice written to stderr
    bool fonts_built = false;       // the renderer's font texture exists: a new font rebuilds only it
    int timeline_step = -1;         // the step the timeline last brought into view
    float caption_h = 0;            // presenter mode: the caption's height as drawn with a lesson's answers in it
    // The most any step of the trace needs, so that a panel keeps its place from step to step:
    // presenter mode's caption (its step line, code and note), the flash tiles' line, the
    // stage's heading, the heatmaps' "what" line (its width).
    // And the least cell that shows the numbers of every step's maps (heat_numbers), of some
    // step's (heat_numbers_some), of every step's with two decimals (heat_number_cell), the
    // stage's tallest explanation (presenter mode's measure).
    mutable StepsMost caption_tallest, tiles_line_h, heading_tallest, heat_what_w, heat_numbers, heat_numbers_some,
        heat_number_cell, explain_tallest;  // caches
    bool f1_listed = false;         // presenter mode: the caption's keys said "F1: keys" this frame
    bool controls_fold = false;     // the normal layout: the window too narrow for the controls column at this text size
    bool heads_fit = true;          // the heatmaps: every head fitted at a legible size last frame
    bool heads_scroll = true;       // the normal layout: the heads panel's tab needs more than its room (it scrolls)
    bool heatmaps_tab = true;       // the heads panel showed the heatmaps' tab last frame
    bool why_tab = false;           // ... or the why tab
    bool weights_tab = false;       // ... or the weight split tab
    // Whether the layout gave the stage's explanation the room (the stage's need is measured
    // without it).
    bool stage_explains = true;
    // The stage's layouts per (trace, step, window) and its cell matches between two steps:
    // worked out once, not every frame (a cache, so drawing from a const state may fill it).
    mutable TraceCache<StepLayout> stage_layouts;
    mutable TraceCache<std::vector<int>> stage_matches;
    // The heatmaps: each map's value range per (trace, grid step), one per rows x keys block of
    // its tensor: the colour range and the number format come from these, not from reading
    // the whole grid every frame (12 x T x T values).
    mutable TraceCache<std::vector<ValueRange>> heat_ranges;
    // The most decimals the stage's tensors show on a run of reshaping steps, and what they
    // were measured for (trace, step, room): measuring the run's other steps takes their layouts.
    struct RunDecimals {
        std::string key;
        std::vector<int> most;
    };
    RunDecimals stage_decimals;
    // The decimals the stage (0) and the heatmaps (1) would draw a step's tensor at, by
    // "attn_scores at step 4", and the frame each said so: one value drawn by both reads alike
    // (shared_decimals).
    struct DecimalsWanted {
        int frame[2] = {-9, -9};
        int decimals[2] = {2, 2};
    };
    mutable std::map<std::string, DecimalsWanted> decimals_wanted;
};

struct AppState {
    Config config;                          // what the controls show
    std::shared_ptr<const Trace> trace;     // the last good trace, on screen
    bool shapes_only = false;               // trace from plan(): shapes, no values
    std::string error;                      // why the last change was refused (inline)
    std::string notice;                     // e.g. GL fell back to the CPU
    std::vector<ModeCount> mode_counts;     // matmul calls per mode for the trace's shape
    double last_compute_ms = 0;

    int step = 0;
    // Animation: cells glide from where they stood in (from_trace, from_step) to the
    // current step over anim_seconds.
    std::shared_ptr<const Trace> from_trace;
    int from_step = 0;
    double anim_start = -1e9;
    float anim_seconds = 0.7f;

    bool playing = false;
    bool blank = false;      // B: the screen blanked, as a presentation does
    // Presenter mode's panel beside the stage: the heatmaps, or what W (weight split), Y (why
    // split) and I (inspector) bring up; the same key again goes back to the heatmaps.
    enum class PresenterSide { Heads, Weights, Why, Inspector } presenter_side = PresenterSide::Heads;
    bool show_keys = false;  // F1: presenter mode's caption lists the keys (step 0 always does)
    bool controls_shown = false;  // a narrow window: the folded controls column brought back ("controls")
    float seconds_per_step = 2.0f;
    double last_advance = 0;

    float font_scale = 1.0f;
    bool font_dirty = true;
    bool dark = true;
    bool fullscreen = false;
    // A handout page: the panels draw no widgets and no hints, each tensor as whole as the page
    // allows, and nothing before the step that computes it.
    bool document = false;
    bool presenting = false;  // presenter mode (F5, --present): stage + heatmaps, a caption, keys only
    TrainView training;       // N: a tiny model learning, in the panels' place

    // The panel layout, as fractions of the window: the controls column, the code column,
    // the stage's share of the middle, the code's share of the right. Dragged with the
    // splitters, kept in the settings file, put back by "reset layout".
    struct Splits {
        float left = 0.2f, right = 0.25f, stage = 0.55f, code = 0.3f;
    };
    Splits splits;
    bool screenshot_requested = false;
    bool handout_requested = false;  // "save handout": drawn after this frame, offscreen
    bool scripts_requested = false;  // "save take-home scripts": PyTorch and NumPy
    std::string screenshot_dir = ".";
    std::string last_screenshot;

    // Heatmaps: the colour scale of the weights (0..1, each row to its max, log) and the head
    // shown large (-1: all heads side by side).
    enum class HeatScale { Unit, PerRow, Log };
    HeatScale heat_scale = HeatScale::Unit;
    int focus_head = -1;
    int heat_sentence = 0;  // the sentence of a batch the maps show
    // Causal vs bidirectional: one head's maps side by side, the other one from other_mask, a
    // trace of the same configuration with the mask flipped (computed with the trace).
    bool compare_masks = false;
    std::shared_ptr<const Trace> other_mask;

    // The stage's view: zoom (wheel; 1 = fit the panel) and the window's start when a tensor
    // has more rows, columns or heads than are drawn (drag). Double-click puts it back.
    struct StageView {
        float zoom = 1.0f;
        std::int64_t token0 = 0, col0 = 0, head0 = 0;
        float drag_x = 0, drag_y = 0;  // a drag's fraction of a cell not yet used
        bool dragging = false;
    };
    StageView stage_view;

    QuizState quiz;
    LiveState live;  // presenter mode's live changes and the caption about the last
    LessonView lesson;  // the live lesson: its join card, the class, what was posted

    Hover hover;
    std::unique_ptr<TraceComputer> computer;
    std::shared_ptr<WhyJob> why;  // the "Why weight splits" measurement
    bool open_why = false;        // select that tab once (--tab why, why-sweep, why-kv)
    // The why tab's view, one at a time (a projector has room for one chart): the modes
    // measured, T doubling, the KV cache.
    enum class WhyView { Modes, Sweep, KvCache } why_view = WhyView::Modes;
    bool open_weights = false;    // select the weight split tab once (--tab weights, weights-matmuls, weights-kv)
    // The weight split tab's view, one at a time: W_query's columns by head, the matmuls each
    // mode runs, the weights and cache that shared keys and values save.
    enum class WeightsView { Query, Matmuls, KvHeads } weights_view = WeightsView::Query;
    bool open_heatmaps = false;   // select the heatmaps tab once
    std::string gl_renderer;
    PanelState panels;

    const Step* current() const {
        return trace && step >= 0 && step < static_cast<int>(trace->steps.size()) ? &trace->steps[step] : nullptr;
    }
};

// Moves to step `s` (clamped), animating from what is on screen.
void go_to_step(AppState& st, int s, double now);
// The picture is ready to be taken (a screenshot, the page's settled mark): a trace is in and
// nothing is being computed or measured for it.
bool picture_ready(const AppState& st);
// The heatmaps' next (+1) or previous (-1) head shown large, in a cycle over the heads and,
// where every head fits (panels.heads_fit), "all heads" (-1) between the last and the first.
void step_focus_head(AppState& st, int delta);
// Applies a finished computation: a good trace replaces the one on screen, keeping the
// current step where it still exists (same op and head); a refused one leaves it and
// shows why.
void apply_result(AppState& st, ComputeResult r, double now);
// The quiz: on, the current step stays shown and the next one reached is asked; off, nothing
// is hidden. The score stays until quiz_reset_score.
void set_quiz(AppState& st, bool on);
// Whether step `s`'s shapes are hidden from the class now.
bool quiz_hides(const AppState& st, int s);
// Whether the current step waits for an answer (the stage shows the question, not the step).
bool quiz_waiting(const AppState& st);
// Answers the pending question with `given` (a choice or a typed shape): scores it, writes
// the verdict, and draws the step, animating into it as any step does.
void quiz_answer(AppState& st, Shape given, double now);  // by value: callers pass an option of the question it ends
void quiz_reset_score(AppState& st);
// Asks for the trace of st.config.
void recompute(AppState& st);
// Takes a finished computation, if there is one, onto the screen (apply_result), and the why
// tab's finished measurement into its result. A GL problem
// that sent the work to the CPU is shown in the Controls panel and, once per message, written
// to stderr for whoever launched the app from a terminal.
void take_result(AppState& st, double now);

}  // namespace headsplit::gui
