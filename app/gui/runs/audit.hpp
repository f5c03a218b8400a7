#pragma once
// The layout audit: what the custom-drawn panels (stage, heatmaps, weights, timeline, code)
// placed in one frame, every panel, label and cell with its rectangle in window pixels, and
// the rules a readable frame keeps. Free of any window code, so the rules are unit-tested;
// the window fills a LayoutAudit while it draws (`--layout-report`, `--layout-audit`).
#include <string>
#include <vector>

namespace headsplit::gui {

struct AuditPanel {
    std::string name;
    float x = 0, y = 0, w = 0, h = 0;
    bool scroll_x = false, scroll_y = false;  // the panel scrolls: items may continue past that edge
    float clip_x0 = 0, clip_y0 = 0, clip_x1 = 0, clip_y1 = 0;  // the part of it that shows content
    // It must show all it draws without scrolling (must_fit_panel): every item inside the clip.
    bool must_fit = false;
    std::vector<int> heads;  // heads each of which must show (a map, a thumbnail or its name)
};

struct AuditItem {
    std::string panel;
    bool cell = false;  // a cell of a grid; otherwise a label
    std::string text;   // the label, or the number the cell stands for
    float x = 0, y = 0, w = 0, h = 0;
    bool visible = true;        // false when scrolled out of the panel
    bool value_shown = false;   // cells: its number is drawn
    float value_w = 0;          // cells: width its number needs at this font
    bool heatmap = false;       // cells: of an attention heatmap
    std::string tensor;         // cells: the tensor (or map) it belongs to, within its panel
    int head = -1;              // cells: the head its value belongs to (-1: none or mixed)
    float value_h = 0;          // cells: the drawn height of its number's digits, px (0: not drawn)
    std::vector<long long> index;  // cells: its position along every axis of its tensor
    bool memory = false;        // a cell of a memory strip (kind "memory"): one element's address
    std::string token;          // labels: the whole token it names, when it names one
};

struct LayoutReport {
    int window_w = 0, window_h = 0;
    float font_scale = 1;
    std::string what;  // the configuration and step, for messages
    std::vector<AuditPanel> panels;
    std::vector<AuditItem> items;
    // Token labels left out or cut short for want of room ("key labels every 2nd"), by panel.
    std::vector<std::pair<std::string, std::string>> thinned;
};

// Collects one frame. Panels call begin_panel() once, then label() and cell() for what they
// draw; nothing is kept while `enabled` is false.
class LayoutAudit {
public:
    bool enabled = false;

    void begin_frame(int window_w, int window_h, float font_scale, std::string what);
    // The panel's rectangle, and the part of it its content is drawn in (visible area).
    void begin_panel(const std::string& name, float x, float y, float w, float h, float clip_x0, float clip_y0,
                     float clip_x1, float clip_y1, bool scroll_x, bool scroll_y);
    void label(const std::string& text, float x, float y, float w, float h, const std::string& token = "");
    void cell(const std::string& text, float x, float y, float w, float h, bool value_shown, float value_w,
              bool heatmap = false, const std::string& tensor = "", int head = -1, float value_h = 0,
              std::vector<long long> index = {});
    // A cell of a memory strip: the element at one address of tensor `tensor`'s buffer, its
    // index in the tensor (empty: an address the tensor does not use), coloured as head `head`.
    void memory(float x, float y, float w, float h, const std::string& tensor, int head, std::vector<long long> index);
    // Labels of tokens the current panel leaves out for want of room: every k-th drawn, or
    // one left out where it would overlap another.
    void thinned(const std::string& what);
    // The current panel shows these heads, each of which must be on screen (as a map or a
    // labelled thumbnail: a visible label "hK" or "head K ...", or a cell of map "head K").
    void expect_heads(std::vector<int> heads);
    // The current panel scrolls after all (the reader zoomed in): must_fit off, both ways.
    void allow_scroll();

    const LayoutReport& report() const { return report_; }

private:
    bool visible(float x, float y, float w, float h) const;
    AuditItem placed(float x, float y, float w, float h) const;  // in the current panel, its visibility found
    LayoutReport report_;
    std::string panel_;
    float clip_[4] = {0, 0, 0, 0};
};

// The panels that never scroll: the stage, the heatmaps, the why tab, the code and presenter
// mode's caption.
bool must_fit_panel(const std::string& name);

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

// {"format": "headsplit-layout", "version": 2, ...} (README: the layout report).
std::string layout_report_json(const LayoutReport& r);

struct AuditRules {
    bool heatmap_cells_32 = false;   // T <= 12 at 1920x1080: heatmap cells at least 32 px
    bool every_value_shown = false;  // the default example: every visible cell shows its number
    float number_min_h = 0;          // presenter mode: every number drawn has digits this tall, px
    bool memory_strip = false;       // a step whose lesson is memory: the stage draws its strip
    bool no_weights = false;         // before the weights are computed: no heatmap cell
    bool whole_labels = false;       // up to 16 tokens: every token labelled, none cut short
    std::string labels_panel;        // whole_labels in this panel alone ("": every panel)
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

}  // namespace headsplit::gui
