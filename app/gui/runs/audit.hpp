#pragma once
// The layout audit: the rules a readable frame keeps, judged on the record of what the panels
// placed (gui/runs/layout_record.hpp), and the rules between frames (a layout at rest, the
// same layout from step to step). Free of any window code, so the rules are unit-tested.
#include <string>
#include <vector>

#include "gui/runs/layout_record.hpp"

namespace headsplit::gui {

// Whether the window's layout has come to rest: its panels stand where they stood the frame
// before. Some boundaries are placed from what the panels needed the frame before (the stage
// and the heads share the column's height so, the code column its width), so a change can
// take a few frames to settle; a screenshot, a report or an audit of an earlier frame would
// describe a layout the reader sees for an instant. Fed every frame's report, in order.
// How many frames a layout may take to settle; one still moving then is a fault.
constexpr int kMaxSettleFrames = 30;

// Which frame of a picture the screenshot, the page's settled mark and the audit take (one
// rule for the three): from the third frame that is ready to show (`ready_frames`, counted
// from 1: the trace in, nothing computing), the first whose panels stood still (`still`,
// from LayoutSettle); at kMaxSettleFrames a layout still moving is taken as it is, and said.
enum class Take { Wait, Settled, StillMoving };
Take take_frame(int ready_frames, bool still);

class LayoutSettle {
public:
    // Records this frame's panels: true when they are the previous frame's (to half a pixel).
    bool still(const LayoutReport& r);
    void reset();
    // The last panel seen to move, as "stage 226 x 512 at (204, 143) -> 187 x 512 at (204, 143)"
    // (height x width); empty when none has.
    const std::string& moved() const { return moved_; }

private:
    std::vector<AuditPanel> last_;
    bool seen_ = false;
    std::string moved_;
};


struct AuditRules {
    bool heatmap_cells_32 = false;   // T <= 12 at 1920x1080: heatmap cells at least 32 px
    bool every_value_shown = false;  // the default example: the stage draws cells, each visible one numbered
    float number_min_h = 0;          // presenter mode: every number drawn has digits this tall, px
    bool memory_strip = false;       // a step whose lesson is memory: the stage draws its strip
    bool no_weights = false;         // before the weights are computed or after their use: no heatmap cell
    bool whole_labels = false;       // up to 16 tokens: every token labelled, none cut short
    std::string labels_panel;        // whole_labels in this panel alone ("": every panel)
    bool whole_text = false;         // no text cut short to fit (token labels: whole_labels)
    bool room_used = false;          // no panel a third empty while its cells are too small for numbers
    // ... or, for pictures that stand side by side (two masks compared, flash's tiles), that
    // span the panel's width or height: their cells are as large as that side lets them be.
    bool room_by_span = false;
};

// What is wrong with the frame, one line each (empty: readable). The rules: two visible
// labels of one panel overlap by more than 1 px; a visible item sticks out of its panel
// (along an edge the panel does not scroll); a cell wide enough for its tensor's widest
// number (w >= value_w + 4) does not show it; some visible cells of one tensor show their
// numbers and others do not; and the two optional rules above.
std::vector<std::string> audit_problems(const LayoutReport& r, const AuditRules& rules);

// How the layout chosen for one frame differs from the frame of the step before, one line
// each (empty: the same choice): a panel shown in one frame only, a panel's edge moved by more
// than `tolerance` px (lines of text said on one step only), a head's heatmap drawn at a cell
// size a fifth larger or smaller. The stage's own arrangement is the step's picture and is not
// compared.
std::vector<std::string> layout_shifts(const LayoutReport& before, const LayoutReport& after, float tolerance);

// For two frames of steps that show the same numbers (a view and the transpose after it):
// each stage tensor numbered in both whose numbers show other decimals here than there, one
// line each ("queries: 2 decimals on the step before, 1 here"), so that no number seems to
// change where none moved. Cells whose numbers have no decimal point (-inf) do not count.
std::vector<std::string> decimals_changed(const LayoutReport& before, const LayoutReport& after);

}  // namespace headsplit::gui
