// The heatmaps panel's maps, chosen from the trace (heatmaps_maps.hpp).
#include "gui/panels/heatmaps_maps.hpp"

#include <algorithm>

#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui::heat {

std::vector<const Step*> grids_for(const Trace& tr, int step) {
    const Step& s = tr.steps[step];
    if (is_grid_op(s.op)) return {&s};
    const int round = tr.config.decoding() ? std::max(s.round, 0) : -1;
    // The weights each context step actually used (dropout's when there is one): its links.
    std::vector<const Step*> out;
    for (const Step& g : tr.steps) {
        if (g.op != Op::Context || g.round != round || g.tensors.empty() || g.tensors.back().from.empty()) continue;
        if (const Step* w = tr.source_step(g.tensors.back().from.front())) out.push_back(w);
    }
    return out;
}

std::vector<Map> maps_of(const std::vector<const Step*>& grids, bool mine, std::int64_t sentence) {
    std::vector<Map> maps;
    for (const Step* g : grids) {
        const TensorRecord* t = &g->result();  // dropout records its mask first
        const std::int64_t b = std::min(sentence, t->shape[0] - 1);
        if (t->shape.size() == 4)
            for (std::int64_t h = 0; h < t->shape[1]; ++h)
                maps.push_back({g, t, static_cast<int>(h), b * t->shape[1] + h, mine, ""});
        else
            maps.push_back({g, t, g->head, b, mine, ""});
    }
    for (Map& m : maps) m.title = "head " + std::to_string(m.head);
    return maps;
}

std::vector<const Step*> matching_grids(const Trace& tr, int step, const Trace& other) {
    const Step& s = tr.steps[step];  // a grid step: the masks are compared at those alone
    const Step* best = nullptr;
    for (const Step& o : other.steps) {
        if (o.head != s.head || !is_grid_op(o.op)) continue;
        if (o.op == s.op) return {&o};
        if (o.index < s.index) best = &o;
    }
    if (best) return {best};
    return {};
}

const std::vector<ValueRange>& block_ranges(const AppState& st, const Map& m) {
    const std::shared_ptr<const Trace>& tr = m.mine ? st.trace : st.other_mask;
    TraceCache<std::vector<ValueRange>>& cache = st.panels.heat_ranges;
    if (const std::vector<ValueRange>* hit = cache.find(tr, m.step->index, nullptr, 0)) return *hit;
    const std::vector<float>& values = m.t->values();
    const std::size_t block = static_cast<std::size_t>(m.t->shape[m.t->shape.size() - 2] * m.t->shape.back());
    std::vector<ValueRange> ranges;
    for (std::size_t at = 0; block > 0 && at < values.size(); at += block)
        ranges.push_back(value_range(values.data() + at, std::min(block, values.size() - at)));
    return cache.add(tr, m.step->index, nullptr, 0, std::move(ranges));
}

ValueRange range_of(const AppState& st, const Map& m) {
    const std::vector<ValueRange>& ranges = block_ranges(st, m);
    const std::size_t b = static_cast<std::size_t>(m.block);
    return b < ranges.size() ? ranges[b] : ValueRange{};
}

const char* scale_name(AppState::HeatScale s) {
    switch (s) {
        case AppState::HeatScale::Unit: return "0 .. 1";
        case AppState::HeatScale::PerRow: return "each row to its max";
        case AppState::HeatScale::Log: return "log (1e-4 .. 1)";
    }
    return "?";
}

std::vector<Map> choose_maps(const AppState& st, std::vector<Map> maps, std::int64_t sentence, bool comparing, int focus) {
    const Trace& tr = *st.trace;
    const Config& c = tr.config;
    if (!comparing) return maps;
    const std::vector<Map> theirs = maps_of(matching_grids(tr, st.step, *st.other_mask), false, sentence);
    const std::size_t f = static_cast<std::size_t>(std::max(focus, 0));
    if (f < theirs.size() && f < maps.size()) {
        Map a = maps[f], b = theirs[f];
        a.title += c.causal ? ": causal" : ": bidirectional";
        b.title += c.causal ? ": bidirectional" : ": causal";
        maps = {a, b};
    }
    return maps;
}

}  // namespace headsplit::gui::heat
