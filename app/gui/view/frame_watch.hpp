#pragma once
// What the panels tell about the frame they draw: each panel's rectangle, and every label and
// cell with its place in window pixels. Panels tell it through frame_watch(), which is this
// no-op base unless a run watches the frame: the layout report (--layout-report) and the
// layout audit install their recorder (gui/runs/layout_record.hpp).
#include <string>
#include <vector>

namespace headsplit::gui {

class FrameWatch {
public:
    virtual ~FrameWatch() = default;

    // Whether anything is kept: a panel may skip work whose only reader is the watch.
    virtual bool watching() const { return false; }
    // The panel's rectangle, and the part of it its content is drawn in (visible area).
    virtual void begin_panel(const std::string& /*name*/, float /*x*/, float /*y*/, float /*w*/, float /*h*/,
                             float /*clip_x0*/, float /*clip_y0*/, float /*clip_x1*/, float /*clip_y1*/, bool /*scroll_x*/,
                             bool /*scroll_y*/) {}
    // A label drawn; `token`: the whole token it names, when it names one.
    virtual void label(const std::string& /*text*/, float /*x*/, float /*y*/, float /*w*/, float /*h*/,
                       const std::string& /*token*/ = "") {}
    // A cell of a grid: the number it stands for, whether it is drawn (`value_w` px wide,
    // `value_h` px tall digits), of a heatmap, its tensor, head and position along every axis;
    // `values_of`: whose element it is ("attn_scores at step 4", empty where it is no step's
    // tensor of the trace on screen), so that two panels showing one element are known as such.
    virtual void cell(const std::string& /*text*/, float /*x*/, float /*y*/, float /*w*/, float /*h*/, bool /*value_shown*/,
                      float /*value_w*/, bool /*heatmap*/ = false, const std::string& /*tensor*/ = "", int /*head*/ = -1,
                      float /*value_h*/ = 0, std::vector<long long> /*index*/ = {}, const std::string& /*values_of*/ = "") {}
    // A cell of a memory strip: the element at one address of tensor `tensor`'s buffer, its
    // index in the tensor (empty: an address the tensor does not use), coloured as head `head`.
    virtual void memory(float /*x*/, float /*y*/, float /*w*/, float /*h*/, const std::string& /*tensor*/, int /*head*/,
                        std::vector<long long> /*index*/) {}
    // Labels of tokens the current panel leaves out for want of room: every k-th drawn, or
    // one left out where it would overlap another.
    virtual void thinned(const std::string& /*what*/) {}
    // Text that the current panel cut short to fit: `whole` drawn as `shown`.
    virtual void cut(const std::string& /*whole*/, const std::string& /*shown*/) {}
    // The current panel drew `what` `drawn` px tall where the layout's measure, before the
    // panel was placed, said `told`.
    virtual void mismeasured(const std::string& /*what*/, float /*told*/, float /*drawn*/) {}
    // The current panel shows these heads, each of which must be on screen (as a map or a
    // labelled thumbnail).
    virtual void expect_heads(std::vector<int> /*heads*/) {}
    // The current panel scrolls after all (the reader zoomed in): it need not fit, both ways.
    virtual void allow_scroll() {}
};

// What watches the frame being drawn (the no-op base when nothing does).
FrameWatch& frame_watch();
// Installs `watch` as what the panels tell (nullptr: nothing).
void watch_frames(FrameWatch* watch);

}  // namespace headsplit::gui
