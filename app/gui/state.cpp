#include "state.hpp"

#include <algorithm>

namespace headsplit::gui {

void go_to_step(AppState& st, int s, double now) {
    if (!st.trace) return;
    s = std::clamp(s, 0, static_cast<int>(st.trace->steps.size()) - 1);
    if (s == st.step) return;
    st.from_trace = st.trace;
    st.from_step = st.step;
    st.anim_start = now;
    st.step = s;
}

void apply_result(AppState& st, ComputeResult r, double now) {
    st.last_compute_ms = r.ms;
    if (!r.trace) {
        st.error = r.error;
        return;
    }
    st.error.clear();
    st.notice = r.notice;
    // Keep the step: the same op (and head) in the new trace, else the same index.
    int step = st.step;
    if (const Step* cur = st.current()) {
        step = std::min(step, static_cast<int>(r.trace->steps.size()) - 1);
        for (const Step& s : r.trace->steps)
            if (s.op == cur->op && s.head == cur->head) {
                step = s.index;
                break;
            }
    }
    st.from_trace = st.trace;
    st.from_step = st.step;
    st.anim_start = st.trace ? now : -1e9;
    st.trace = std::move(r.trace);
    st.other_mask = std::move(r.other_mask);
    st.shapes_only = r.shapes_only;
    st.step = std::max(0, step);
}

void recompute(AppState& st) { st.computer->request(st.config, st.compare_masks); }

std::string set_d_out(Config& c, std::int64_t d_out) {
    c.d_out = d_out;
    if (c.heads >= 1 && d_out % c.heads == 0) return "";
    std::int64_t best = 1;
    for (std::int64_t d : divisors(d_out))
        if (d <= c.heads) best = d;
    const std::string why = std::to_string(c.heads) + " heads do not divide D_out = " + std::to_string(d_out) + " (" +
                            std::to_string(d_out) + " / " + std::to_string(c.heads) + " is not whole); now " +
                            std::to_string(best) + " heads";
    c.heads = best;
    return why;
}

}  // namespace headsplit::gui
