#pragma once
// The record of one frame: what the custom-drawn panels (stage, heatmaps, weights, timeline,
// code) placed, every panel, label and cell with its rectangle in window pixels. It watches
// the frame (gui/view/frame_watch.hpp) and keeps what the panels tell while it is enabled
// (`--layout-report`, the layout audit); it is written as the layout report's JSON. The rules
// a readable frame keeps are the audit's (gui/runs/audit.hpp).
#include <string>
#include <utility>
#include <vector>

#include "gui/view/frame_watch.hpp"

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
    std::string values_of;      // cells: the step's tensor whose element it is (FrameWatch::cell)
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
    // Text cut short to fit (fit_text), by panel: what was to be drawn, and what was.
    struct Cut {
        std::string panel, whole, shown;
    };
    std::vector<Cut> cut;
    // Heights the layout measured before a panel was placed that its drawing then found
    // otherwise: "heatmaps' header: measured 70 px, drawn 104 px".
    std::vector<std::string> mismeasured;
};

// Collects one frame. Panels tell begin_panel() once, then label() and cell() for what they
// draw; nothing is kept while `enabled` is false.
class LayoutAudit : public FrameWatch {
public:
    bool enabled = false;

    void begin_frame(int window_w, int window_h, float font_scale, std::string what);
    bool watching() const override { return enabled; }
    void begin_panel(const std::string& name, float x, float y, float w, float h, float clip_x0, float clip_y0,
                     float clip_x1, float clip_y1, bool scroll_x, bool scroll_y) override;
    void label(const std::string& text, float x, float y, float w, float h, const std::string& token = "") override;
    void cell(const std::string& text, float x, float y, float w, float h, bool value_shown, float value_w,
              bool heatmap = false, const std::string& tensor = "", int head = -1, float value_h = 0,
              std::vector<long long> index = {}, const std::string& values_of = "") override;
    void memory(float x, float y, float w, float h, const std::string& tensor, int head, std::vector<long long> index) override;
    void thinned(const std::string& what) override;
    void cut(const std::string& whole, const std::string& shown) override;
    void mismeasured(const std::string& what, float told, float drawn) override;
    // A panel's heads: each must be on screen as a map or a labelled thumbnail (a visible
    // label "hK" or "head K ...", or a cell of map "head K").
    void expect_heads(std::vector<int> heads) override;
    void allow_scroll() override;

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

// The recorder the panels tell while a run watches (installed as their frame_watch() on first
// use; `enabled` says whether it keeps anything).
LayoutAudit& layout_audit();

// {"format": "headsplit-layout", "version": 2, ...} (README: the layout report).
std::string layout_report_json(const LayoutReport& r);

}  // namespace headsplit::gui
