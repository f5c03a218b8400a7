#pragma once
// One panel, one file, one draw function. Each draws into the window the caller opened.
#include <imgui.h>

#include "gui/model/state.hpp"

namespace headsplit::gui {

void DrawPanels(AppState& st, double now);        // panel_layout.cpp: every panel in its place
void DrawControls(AppState& st);                  // panel_controls.cpp
// panel_controls.cpp: the controls column's least width at the current font: its widest row
// that cannot wrap (a toggle's or a button's label), its padding and scroll bar.
float ControlsRowsWidth();
void DrawTimeline(AppState& st, double now);      // panel_timeline.cpp
void DrawStage(AppState& st, double now);         // panel_stage.cpp
void DrawHeatmaps(AppState& st);                  // panel_heatmaps.cpp (flash mode: DrawFlashTiles)
// panel_heatmaps.cpp: why the heatmaps show nothing at the step on screen ("" where they show
// the weights): they are computed after it (the maps would give them away), or every context
// that used them came before it. The stage takes their room.
std::string heatmaps_off(const AppState& st);
void DrawFlashTiles(AppState& st);                // panel_tiles.cpp
void SentenceSlider(AppState& st);                // panel_heatmaps.cpp: which sentence the maps show
void DrawCode(AppState& st);                      // panel_code.cpp
// panel_code.cpp: the code panel's width (its longest line and shape at a mid size) and its
// height in a panel `panel_w` wide (the whole listing at its largest font; -1 for a width of
// 0), measured before it is placed.
struct CodeNeed {
    float w = -1, h = -1;
};
CodeNeed MeasureCode(const AppState& st, float panel_w, bool window_titled);
void DrawInspector(const AppState& st);           // panel_inspector.cpp
void DrawWeightSplit(AppState& st);               // panel_weights.cpp
void DrawWhy(AppState& st);                       // panel_why.cpp
void DrawTrain(AppState& st);                     // panel_train.cpp: the Train view (N), the whole window
void DrawCaption(AppState& st);                   // panel_caption.cpp (presenter mode)
// panel_caption.cpp: the caption's height in a window `width` px wide inside its padding, as
// DrawCaption lays it out, measured before it is placed (a live lesson's answers after a
// reveal, which stand in the live strip's place, not counted).
float MeasureCaption(const AppState& st, float width);
void DrawQuizCard(AppState& st, double now);      // panel_quiz.cpp: the question, in the stage
// panel_quiz.cpp: the verdict above the step it answered, right or not and why, as drawn
// `width` px wide: the longest of its forms that fits one line (with the score, without it,
// the answer alone), else the shortest wrapped; "" when none is shown.
std::string QuizVerdictLine(const AppState& st, float width);
void DrawQuizVerdict(const AppState& st, const std::string& line);  // in the verdict's colour, wrapped
float QuizVerdictHeight(const AppState& st, float width);           // its height, 0 when none

// What a panel asks of the normal layout's column, measured before the panels are placed:
// its height that is not cells, the height that shows its cells legibly, and with 4 px cells
// (-1: nothing to ask; the splitter shares the column); the explanation it would add; whether
// the step's lesson is in it (the stage, where memory is the lesson: its memory strip).
struct PanelNeed {
    float text_h = -1, need_h = -1, min_h = -1, explain_h = 0;
    bool lesson = false;
    // The side of its cells, px, when the panel is given the whole of `panel`, and the side it
    // calls legible (-1 where it draws no cells); whether it shows every part then (every
    // head's map, not one large for want of room; the whole tensor, not a window of it).
    float cell = -1, legible = -1;
    bool every = true;
    // The least side whose cells show their numbers (-1: none does, or not measured): at
    // every step of the panel's picture, and (numbers_some) at some step of it; the share of
    // its cells it shows (a window of a large tensor, less than 1).
    float numbers = -1, numbers_some = -1, shown = 1;
    // Whether every token it labels is named then (no label thinned for want of room).
    bool named = true;
    // The least width whose lines are whole (the heads panel's: its header's toggle, its
    // legend's parts, flash mode's memory lines).
    float min_w = 0;
    // The least height whose cells are within 3% of those the whole column gives (the
    // heatmaps at the maps' own steps in the normal layout; -1 where not measured).
    float full_h = -1;
};
// panel_stage.cpp: the stage as `panel` (its width, the column's height) would show it;
// `window_titled`: the panel has a title bar.
PanelNeed MeasureStage(const AppState& st, ImVec2 panel, bool window_titled);
// panel_heatmaps.cpp: the heatmaps' tab as the heads panel (its width, the column's height)
// would show it; -1s in flash mode.
PanelNeed MeasureHeatmaps(const AppState& st, ImVec2 panel, bool window_titled);
// panel_weights.cpp, panel_why.cpp: the weight split's and the why tab's view as the heads
// panel would show it (their text, and with a picture that reads).
PanelNeed MeasureWeightSplit(const AppState& st, ImVec2 panel, bool window_titled);
PanelNeed MeasureWhy(const AppState& st, ImVec2 panel, bool window_titled);
// panel_tiles.cpp: flash mode's tiles as the heads panel would show them; -1s in other modes.
PanelNeed MeasureFlashTiles(const AppState& st, ImVec2 panel, bool window_titled);
// heatmaps_fit.cpp: where the heads panel's content starts under its title bar and (but in
// presenter mode, which shows one view) its tabs.
float heads_content_top(const AppState& st, bool window_titled);
// heatmaps_fit.cpp: the heads panel showing line `when` alone (no weights yet, or no more;
// flash's tiles likewise), the stage the rest.
PanelNeed heads_line_need(const AppState& st, const std::string& when, ImVec2 panel, bool window_titled);
// The heads panel's tabs in the normal layout, left to right.
inline constexpr const char* kHeadsTabs[3] = {"Heatmaps", "Weight split", "Why split"};
// heatmaps_fit.cpp: `when` (heatmaps_off), or its shorter form, that fits beside the normal
// layout's tabs in a heads panel `panel_w` px wide; "" where none does (it goes under them),
// and in presenter mode (no tabs).
std::string when_beside_tabs(const AppState& st, const std::string& when, float panel_w);
// panel_lesson.cpp: the live lesson over the panels: the join card (the student address, the
// code, its QR code) or the class's line, and after a reveal the answers' histogram.
void DrawLesson(AppState& st);
// panel_lesson.cpp: the height of the live lesson's corner line (0 when none shows): presenter
// mode keeps it free under the stage and the heads.
float LessonStripHeight(const AppState& st);
// panel_lesson.cpp: in presenter mode's caption, the class's answers after a reveal; false
// (nothing drawn) at other times.
bool DrawLessonAnswers(const AppState& st);
// panel_lesson.cpp: whether the class's answers show in the caption now.
bool LessonAnswersShown(const AppState& st);

// style.cpp: one rounding rule for a value two panels draw (the stage's cell and the
// heatmap's). Panel `panel` (0 the stage, 1 the heatmaps), drawing `key`'s numbers
// ("attn_scores at step 4") that would show at `own` decimals, draws them at the fewer of
// those and the other panel's of this frame or the one before: where the stage has room for
// -.9 alone, the heatmap's -.86 reads -.9 too.
int shared_decimals(const AppState& st, int panel, const std::string& key, int own);

}  // namespace headsplit::gui
