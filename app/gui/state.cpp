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
    st.shapes_only = r.shapes_only;
    st.step = std::max(0, step);
}

void recompute(AppState& st) { st.computer->request(st.config); }

}  // namespace headsplit::gui
