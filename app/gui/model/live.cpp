#include "gui/model/live.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "gui/model/state.hpp"
#include "headsplit/engine/config_edit.hpp"
#include "headsplit/teaching/narration.hpp"

namespace headsplit::gui {

namespace {

// The settings and sizes a caption compares, by name, in the order it lists them.
std::vector<std::pair<std::string, std::string>> settings(const Config& c) {
    return {{"heads", std::to_string(c.heads)},
            {"D_out", std::to_string(c.d_out)},
            {"head_dim", std::to_string(c.head_dim())},
            {"KV heads", std::to_string(c.kv_head_count())},
            {"mode", mode_name(c.mode)},
            {"causal mask", c.causal ? "on" : "off"},
            {"backward pass", c.backward ? "on" : "off"},
            {"T", std::to_string(c.num_tokens())}};
}

std::string value_of(const Config& c, const std::string& name) {
    for (const auto& [n, v] : settings(c))
        if (n == name) return v;
    return "";
}

// The divisor of n next to `from` in direction `dir` (+1 up, -1 down), or 0 when none.
std::int64_t next_divisor(std::int64_t n, std::int64_t from, int dir) {
    const std::vector<std::int64_t> d = divisors(n);
    if (dir > 0) {
        for (std::int64_t v : d)
            if (v > from) return v;
        return 0;
    }
    for (auto it = d.rbegin(); it != d.rend(); ++it)
        if (*it < from) return *it;
    return 0;
}

// The name of the setting a change moves.
const char* setting_of(LiveChange change) {
    switch (change) {
        case LiveChange::HeadsUp:
        case LiveChange::HeadsDown: return "heads";
        case LiveChange::DOutUp:
        case LiveChange::DOutDown: return "D_out";
        case LiveChange::KvHeadsUp:
        case LiveChange::KvHeadsDown: return "KV heads";
        case LiveChange::NextMode: return "mode";
        case LiveChange::Causal: return "causal mask";
        case LiveChange::Backward: return "backward pass";
    }
    return "";
}

// Makes `change` on c; "" when done, else why it cannot be.
std::string apply(Config& c, LiveChange change) {
    const bool sizes = change != LiveChange::NextMode && change != LiveChange::Causal && change != LiveChange::Backward;
    if (sizes && !c.weights_dir.empty()) return "the checkpoint sets the sizes";
    const int dir = change == LiveChange::HeadsUp || change == LiveChange::DOutUp || change == LiveChange::KvHeadsUp ? 1 : -1;
    switch (change) {
        case LiveChange::HeadsUp:
        case LiveChange::HeadsDown: {
            const std::int64_t h = next_divisor(c.d_out, c.heads, dir);
            if (h == 0) return std::string("no ") + (dir > 0 ? "more" : "fewer") + " heads divide D_out = " + std::to_string(c.d_out);
            set_heads(c, h);
            return "";
        }
        case LiveChange::DOutUp:
        case LiveChange::DOutDown: {
            const std::int64_t d = c.d_out + dir * c.heads;  // one feature more or less per head
            if (d < c.heads || d > kMaxDim) return "D_out stays from " + std::to_string(c.heads) + " to " + std::to_string(kMaxDim);
            set_d_out(c, d);
            return "";
        }
        case LiveChange::KvHeadsUp:
        case LiveChange::KvHeadsDown: {
            const std::int64_t g = next_divisor(c.heads, c.kv_head_count(), dir);
            if (g == 0) return std::string("no ") + (dir > 0 ? "more" : "fewer") + " KV heads divide heads = " + std::to_string(c.heads);
            set_kv_heads(c, g);
            return "";
        }
        case LiveChange::NextMode: {
            const Mode order[] = {Mode::Loop, Mode::Split, Mode::Fused, Mode::Flash};
            const auto at = std::find(std::begin(order), std::end(order), c.mode) - std::begin(order);
            set_mode(c, order[(at + 1) % 4]);
            return "";
        }
        case LiveChange::Causal:
            c.causal = !c.causal;
            if (!c.causal && c.decoding()) set_decoding(c, false);  // decoding needs the mask
            return "";
        case LiveChange::Backward:
            if (!c.backward && c.decoding()) return "decoding with a KV cache is inference, where no gradient flows back";
            c.backward = !c.backward;
            return "";
    }
    return "";
}

void ask(AppState& st, const Config& before, std::string what) {
    st.live.before = before;
    st.live.what = std::move(what);
    st.live.waiting = true;
    st.live.caption = st.live.what + ": computing ...";
    st.live.caption_short.clear();
    fit_to_text(st.config);
    recompute(st);
}

}  // namespace

bool live_change(AppState& st, LiveChange change) {
    const Config before = st.config;
    const std::string why = apply(st.config, change);
    const std::string name = setting_of(change);
    if (!why.empty()) {
        st.live.caption = name + " stays " + value_of(before, name) + ": " + why;
        st.live.caption_short.clear();
        st.live.waiting = false;
        return false;
    }
    ask(st, before, name + " " + value_of(before, name) + " -> " + value_of(st.config, name));
    return true;
}

void open_sentence_box(AppState& st) {
    // A checkpoint run's tokens are BPE pieces: put back together; otherwise words.
    std::string now = checkpoint_text(st.config);
    if (st.config.weights_dir.empty()) {
        now.clear();
        for (const std::string& w : st.config.tokens) now += (now.empty() ? "" : " ") + w;
    }
    std::snprintf(st.live.text, sizeof st.live.text, "%s", now.c_str());
    st.live.typing = true;
}

void live_sentence(AppState& st, const std::string& text) {
    st.live.typing = false;
    const Config before = st.config;
    set_sentence(st.config, 0, text);
    ask(st, before, "sentence \"" + text + "\"");
}

std::string live_caption(const std::string& what, const Config& before, const Config& after, const Step* step) {
    std::vector<std::string> followed;
    for (const auto& [name, now] : settings(after)) {
        const std::string was = value_of(before, name);
        // Plain multi-head attention has a key/value head per head: they follow the heads unsaid.
        if (name == "KV heads" && !before.grouped() && !after.grouped()) continue;
        if (was != now && what.rfind(name + " ", 0) != 0) followed.push_back(name + " " + was + " -> " + now);
    }
    if (step) followed.push_back(step->lead().name + " " + named_shape(step->lead()));
    std::string out = what;
    for (std::size_t i = 0; i < followed.size(); ++i) out += (i == 0 ? ": " : ", ") + followed[i];
    return out;
}

}  // namespace headsplit::gui
