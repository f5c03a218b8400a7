#pragma once
// `--layout-audit REPORT.json`: one process renders the real window at several window
// sizes x font scales x configurations x every step, in the normal layout and in presenter
// mode (and the bottom panel's other tabs once per configuration), collects each frame's layout report and checks it with audit_problems().
// Writes every problem found, one line each, as JSON; exits 1 when there is any.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gui/runs/audit.hpp"
#include "gui/model/state.hpp"
#include "gui/model/why.hpp"
#include "gui/runs/unattended.hpp"

namespace headsplit::gui {

struct AuditCase {
    std::string name;  // "default", "journey", ...
    Config config;
    AppState::StageView view;    // zoomed and panned, or as it opens
    bool compare_masks = false;  // heatmaps: causal vs bidirectional
    bool quiz = false;           // predict the shape: each step is the question before it
    bool answered = false;       // ... and answered wrong (the longer verdict above the picture)
    bool every_value = false;    // the default example's sizes: every number of the stage shows
};

// The configurations: the default, journey, a 9-word sentence with 3 heads, T = 32
// with 4 heads, gpt2-small T = 16, loop and fused modes; then gpt2-small T = 32 zoomed 1.5x
// and panned (its window starting at token 10, column 20, head 5) and the 9-word sentence
// with causal vs bidirectional heatmaps.
std::vector<AuditCase> audit_cases();

// Which (window, font, case) runs the sweep renders: every case at every size and font when
// there are up to 8 of those; more, case i at the (window w, font f) where
// (w * fonts + f + i) is a multiple of (sizes x fonts) / 8 rounded down, so that every case
// meets about 8 of them, small and large, and every size and font meets every case's share.
struct AuditRun {
    std::size_t window, font, c;
};
std::vector<AuditRun> audit_runs(std::size_t windows, std::size_t fonts, std::size_t cases);

class AuditSweep : public UnattendedRun {
public:
    AuditSweep(std::vector<std::pair<int, int>> windows, std::vector<float> fonts, std::vector<AuditCase> cases,
               std::string report_path);

    // Before a frame: sets up the next window size, font, configuration, tab and step.
    // Returns false when every frame has been checked.
    bool before_frame(AppState& st, GLFWwindow* win, double now) override;
    // After the frame was shown: checks its layout report when it is one to check.
    void after_frame(AppState& st, const FrameInfo& f) override;
    // The layout report is all it reads: the frames are not rasterized.
    bool draws_pixels() const override { return false; }
    // Writes the report; 1 (the reason on stderr) when it cannot or when problems were found.
    int finish() override;

private:
    bool settled(const AppState& st, int fb_w, int fb_h) const;
    // The rules this frame is held to: by window, text size, case, step and layout.
    AuditRules rules_here(const AppState& st, int fb_w, int fb_h) const;
    std::string describe(const AppState& st) const;

    std::vector<std::pair<int, int>> windows_;
    std::vector<float> fonts_;
    std::vector<AuditCase> cases_;
    std::string report_;
    std::vector<AuditRun> runs_;
    std::size_t run_ = 0;
    // -6, -5, -4: the why tab's views (modes, T sweep, KV cache), -3, -2, -1: the weight split
    // tab's (W_query, matmuls, KV heads), at the step the trace opened on; then steps 0 ..
    // (presenter mode: steps only).
    int step_ = kFirstTab;
    static constexpr int kFirstTab = -6, kFirstWeightsTab = -3;
    // The why tab's measurement of each case, made once (a tenth of a second each: the layout
    // does not depend on the numbers) and shown at every size and font.
    std::map<std::size_t, std::shared_ptr<WhyJob>> why_jobs_;
    int frames_here_ = 0;    // frames drawn since this (case, step) was set up
    LayoutSettle settle_;    // whether this (case, step)'s panels have come to rest
    LayoutReport before_;    // the frame checked at step before_step_ of this case and pass
    int before_step_ = -1;
    std::string before_phase_;  // what its step was about (see after_frame)
    bool present_ = false;   // the second pass over the steps, in presenter mode
    bool set_up_ = false;    // the current case's size, font and config are applied
    std::int64_t frames_checked_ = 0;
    std::vector<std::string> problems_;
    std::size_t problem_count_ = 0;
};

}  // namespace headsplit::gui
