#include "gui/runs/audit.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace headsplit::gui {

Take take_frame(int ready_frames, bool still) {
    if (ready_frames < 3) return Take::Wait;
    if (still) return Take::Settled;
    return ready_frames >= kMaxSettleFrames ? Take::StillMoving : Take::Wait;
}

bool LayoutSettle::still(const LayoutReport& r) {
    auto near = [](float a, float b) { return std::abs(a - b) <= 0.5f; };
    auto text = [](const AuditPanel& p) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.0f x %.0f at (%.0f, %.0f)", p.h, p.w, p.x, p.y);
        return std::string(buf);
    };
    bool same = seen_;
    if (seen_ && last_.size() != r.panels.size()) same = false, moved_ = "the panels shown changed";
    for (std::size_t i = 0; same && i < last_.size(); ++i) {
        const AuditPanel &a = last_[i], &b = r.panels[i];
        if (a.name == b.name && near(a.x, b.x) && near(a.y, b.y) && near(a.w, b.w) && near(a.h, b.h)) continue;
        same = false;
        moved_ = a.name == b.name ? a.name + " " + text(a) + " -> " + text(b) : "the panels shown changed";
    }
    last_ = r.panels;
    seen_ = true;
    return same;
}

void LayoutSettle::reset() {
    last_.clear();
    seen_ = false;
    moved_.clear();
}


namespace {

// A heatmap's cell this large reads from the back row without its number (up to 12 tokens).
constexpr float kLegibleMapCell = 32.0f;

// The elements whose numbers some panel shows, by tensor and index (the heatmaps show the
// scores the stage does).
using Numbered = std::set<std::pair<std::string, std::vector<long long>>>;
Numbered numbered_elements(const LayoutReport& r) {
    Numbered out;
    for (const AuditItem& it : r.items)
        if (it.cell && it.visible && it.value_shown && !it.values_of.empty()) out.insert({it.values_of, it.index});
    return out;
}

bool numbered_in(const Numbered& n, const AuditItem& it) { return !it.values_of.empty() && n.count({it.values_of, it.index}) > 0; }

std::string rect(const AuditItem& it) {
    char b[96];
    std::snprintf(b, sizeof b, "(%.0f, %.0f, %.0f x %.0f)", it.x, it.y, it.w, it.h);
    return b;
}

std::string quoted(const AuditItem& it) {
    return (it.cell ? "cell \"" : it.memory ? "memory cell of \"" + it.tensor : "label \"") + it.text + "\" " + rect(it);
}

// The rules on the frame as a whole: every token named whole (whole_labels), the memory
// strip (memory_strip), a tensor's numbers all or none; each problem after `where`.
void frame_problems(const LayoutReport& r, const AuditRules& rules, const Numbered& numbered, const std::string& where,
                    std::vector<std::string>& out) {
    // Up to 16 tokens each is named whole: a label that names a token holds all of it ("6:the"
    // holds "the"; "qu." cuts "quick"), and no panel leaves token labels out.
    if (rules.whole_labels) {
        const auto judged = [&](const std::string& panel) { return rules.labels_panel.empty() || panel == rules.labels_panel; };
        for (const AuditItem& it : r.items)
            if (!it.cell && !it.memory && it.visible && !it.token.empty() && it.text.find(it.token) == std::string::npos &&
                judged(it.panel))
                out.push_back(where + it.panel + ": " + quoted(it) + " cuts the token \"" + it.token + "\"");
        for (const auto& [panel, what] : r.thinned)
            if (judged(panel)) out.push_back(where + panel + ": " + what + " (up to 16 tokens, every one is named)");
    }
    // Words and numbers are drawn whole: wrapped or shortened by the panel, never cut.
    // (Not in a panel the reader zoomed into: it scrolls, its edges cut as a window's do.)
    auto scrolls = [&](const std::string& name) {
        return std::any_of(r.panels.begin(), r.panels.end(), [&](const AuditPanel& p) { return p.name == name && p.scroll_x; });
    };
    if (rules.whole_text)
        for (const LayoutReport::Cut& c : r.cut)
            if (!scrolls(c.panel)) out.push_back(where + c.panel + ": \"" + c.whole + "\" cut to \"" + c.shown + "\"");
    // A panel that never scrolls leaves no more than a third of itself empty (outside the box
    // around what it draws) while some of its cells are too small to show their numbers.
    for (const AuditPanel& p : r.panels) {
        if (!rules.room_used || !p.must_fit) continue;
        float x0 = 1e9f, y0 = 1e9f, x1 = -1e9f, y1 = -1e9f;
        const AuditItem* small = nullptr;
        for (const AuditItem& it : r.items) {
            if (it.panel != p.name || !it.visible) continue;
            x0 = std::min(x0, it.x), y0 = std::min(y0, it.y), x1 = std::max(x1, it.x + it.w), y1 = std::max(y1, it.y + it.h);
            // Below its legible size: a heatmap's cell under 32 px (above, it reads without its
            // number); another grid's cell that has its number's width and hides it, unless
            // another panel shows that number.
            const bool below = it.heatmap ? it.w < kLegibleMapCell : it.w + 0.01f >= it.value_w + 4;
            if (it.cell && !it.value_shown && below && !numbered_in(numbered, it) && !small) small = &it;
        }
        const float area = (p.clip_x1 - p.clip_x0) * (p.clip_y1 - p.clip_y0);
        if (!small || area <= 0) continue;
        const float span_w = std::max(0.0f, std::min(x1, p.clip_x1) - std::max(x0, p.clip_x0)) / (p.clip_x1 - p.clip_x0);
        const float span_h = std::max(0.0f, std::min(y1, p.clip_y1) - std::max(y0, p.clip_y0)) / (p.clip_y1 - p.clip_y0);
        const float used = span_w * span_h;
        // (Pictures side by side that span the panel's width or height have cells as large as
        // that side lets them be: the room left across the other is not room they could take.)
        const bool spans = rules.room_by_span && (span_w >= 0.9f || span_h >= 0.9f);
        if (used < 2.0f / 3.0f && !spans)
            out.push_back(where + p.name + ": what it draws covers " + std::to_string(int(100 * used)) + "% of it while " +
                          quoted(*small) + " is too small for its number");
    }
    // What the layout measured before placing a panel is what the panel drew.
    for (const std::string& m : r.mismeasured) out.push_back(where + m + " (the layout shares the column by the measure)");
    if (rules.memory_strip && std::none_of(r.items.begin(), r.items.end(), [](const AuditItem& it) {
            return it.memory && it.panel == "stage" && it.visible;
        }))
        out.push_back(where + "stage: no memory strip on a step whose lesson is where the values lie");
    // A tensor's numbers all or none: one visible cell showing and another not reads as a zero.
    std::map<std::pair<std::string, std::string>, std::pair<const AuditItem*, const AuditItem*>> seen;  // (shown, blank)
    for (const AuditItem& it : r.items) {
        if (!it.cell || !it.visible || it.tensor.empty()) continue;
        auto& [shown, blank] = seen[{it.panel, it.tensor}];
        const AuditItem*& first = it.value_shown ? shown : blank;
        if (!first) first = &it;
    }
    for (const auto& [key, pair] : seen)
        if (pair.first && pair.second)
            out.push_back(where + key.first + ": tensor " + key.second + " shows the number of " + quoted(*pair.first) +
                          " but not that of " + quoted(*pair.second));
}

}  // namespace

std::vector<std::string> audit_problems(const LayoutReport& r, const AuditRules& rules) {
    std::vector<std::string> out;
    char size[64];
    std::snprintf(size, sizeof size, "%dx%d font %.2g", r.window_w, r.window_h, r.font_scale);
    const std::string where = std::string(size) + (r.what.empty() ? "" : ", " + r.what) + ": ";
    auto panel_of = [&](const std::string& name) -> const AuditPanel* {
        for (const AuditPanel& p : r.panels)
            if (p.name == name) return &p;
        return nullptr;
    };
    const float tol = 1.0f;
    // Labels of one panel must not overlap.
    for (std::size_t i = 0; i < r.items.size(); ++i) {
        const AuditItem& a = r.items[i];
        if (a.cell || a.memory || !a.visible) continue;
        for (std::size_t j = i + 1; j < r.items.size(); ++j) {
            const AuditItem& b = r.items[j];
            if (b.cell || b.memory || !b.visible || b.panel != a.panel) continue;
            const float ox = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
            const float oy = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
            if (ox > tol && oy > tol)
                out.push_back(where + a.panel + ": " + quoted(a) + " overlaps " + quoted(b));
        }
    }
    // A panel that never scrolls shows all it draws: an item outside its visible area would
    // need scrolling (or is cut).
    for (const AuditItem& it : r.items) {
        const AuditPanel* p = panel_of(it.panel);
        if (!p || !p->must_fit) continue;
        if (it.x < p->clip_x0 - tol || it.y < p->clip_y0 - tol || it.x + it.w > p->clip_x1 + tol || it.y + it.h > p->clip_y1 + tol) {
            char clip[96];
            std::snprintf(clip, sizeof clip, "(%.0f, %.0f) to (%.0f, %.0f)", p->clip_x0, p->clip_y0, p->clip_x1, p->clip_y1);
            out.push_back(where + it.panel + ": " + quoted(it) + " lies outside the visible area " + clip +
                          ": it would need scrolling");
        }
    }
    // The Controls scroll down, never across: a row wider than the column is cut at its edge
    // (under the scroll bar), a preset's name or a button's last word gone.
    if (const AuditPanel* c = panel_of("controls"); c && c->scroll_x)
        out.push_back(where + "controls: a row is wider than the column and is cut at its right edge");
    // Every head of a panel that shows heads is on screen: its map, or its thumbnail's name.
    for (const AuditPanel& p : r.panels)
        for (int h : p.heads) {
            const std::string hk = "h" + std::to_string(h), head = "head " + std::to_string(h);
            auto names = [&](const std::string& t) {  // "head 1" and "head 1: causal", not "head 12"
                return t == hk || (t.rfind(head, 0) == 0 && (t.size() == head.size() || !std::isdigit(static_cast<unsigned char>(t[head.size()]))));
            };
            bool shown = false;
            for (const AuditItem& it : r.items)
                shown |= it.panel == p.name && it.visible && names(it.cell ? it.tensor : it.text);
            if (!shown) out.push_back(where + p.name + ": head " + std::to_string(h) + " of " + std::to_string(p.heads.size()) +
                                      " shown is not on screen (neither its map nor its thumbnail)");
        }
    // The default example's stage draws its step: a stage without a cell shows no number.
    if (rules.every_value_shown && panel_of("stage")) {
        bool cells = false;
        for (const AuditItem& it : r.items) cells |= it.panel == "stage" && it.cell && !it.memory && it.visible;
        if (!cells) out.push_back(where + "stage: draws no cell of the step");
    }
    const Numbered numbered = numbered_elements(r);
    for (const AuditItem& it : r.items) {
        if (!it.visible) continue;
        const AuditPanel* p = panel_of(it.panel);
        if (!p) {
            out.push_back(where + quoted(it) + " belongs to no panel \"" + it.panel + "\"");
            continue;
        }
        const bool out_x = it.x < p->x - tol || it.x + it.w > p->x + p->w + tol;
        const bool out_y = it.y < p->y - tol || it.y + it.h > p->y + p->h + tol;
        if (((out_x && !p->scroll_x) || (out_y && !p->scroll_y)) && !p->must_fit)  // must_fit: told above
            out.push_back(where + it.panel + ": " + quoted(it) + " sticks out of the panel (" + std::to_string(int(p->x)) +
                          ", " + std::to_string(int(p->y)) + ", " + std::to_string(int(p->w)) + " x " +
                          std::to_string(int(p->h)) + ")");
        if (!it.cell) continue;
        if (!it.value_shown && it.w >= it.value_w + 4)
            out.push_back(where + it.panel + ": " + quoted(it) + " has room for its number (" +
                          std::to_string(int(it.value_w)) + " px) but does not show it");
        if (rules.every_value_shown && !it.value_shown && !numbered_in(numbered, it))
            out.push_back(where + it.panel + ": " + quoted(it) + " does not show its number");
        if (rules.heatmap_cells_32 && it.heatmap && it.w < kLegibleMapCell)
            out.push_back(where + it.panel + ": heatmap " + quoted(it) + " is under 32 px");
        if (rules.number_min_h > 0 && it.value_shown && it.value_h + 0.5f < rules.number_min_h)
            out.push_back(where + it.panel + ": " + quoted(it) + "'s number is " + std::to_string(int(it.value_h)) +
                          " px tall, under the " + std::to_string(int(rules.number_min_h)) + " px a projector needs");
        if (rules.no_weights && it.heatmap)
            out.push_back(where + it.panel + ": " + quoted(it) + " shows attention weights outside the steps that compute and use them");
    }
    frame_problems(r, rules, numbered, where, out);
    return out;
}

std::vector<std::string> layout_shifts(const LayoutReport& before, const LayoutReport& after, float tolerance) {
    std::vector<std::string> out;
    auto panel_in = [](const LayoutReport& r, const std::string& name) -> const AuditPanel* {
        for (const AuditPanel& p : r.panels)
            if (p.name == name) return &p;
        return nullptr;
    };
    auto text = [](const AuditPanel& p) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.0f x %.0f at (%.0f, %.0f)", p.w, p.h, p.x, p.y);
        return std::string(buf);
    };
    const std::string from = before.what.empty() ? "the step before" : before.what;
    for (const AuditPanel& a : before.panels) {
        const AuditPanel* b = panel_in(after, a.name);
        if (!b) {
            out.push_back(a.name + ": shown on " + from + ", not here");
            continue;
        }
        auto moved = [&](float u, float v) { return std::abs(u - v) > std::max(tolerance, 1.0f); };
        if (moved(a.x, b->x) || moved(a.y, b->y) || moved(a.x + a.w, b->x + b->w) || moved(a.y + a.h, b->y + b->h))
            out.push_back(a.name + ": " + text(a) + " on " + from + ", " + text(*b) + " here");
    }
    for (const AuditPanel& b : after.panels)
        if (!panel_in(before, b.name)) out.push_back(b.name + ": shown here, not on " + from);
    // Each heatmap's cell size (its first cell) and cell count, by panel and map: a map of as
    // many cells is drawn as large (a decoding round's map grows by a key).
    auto maps = [](const LayoutReport& r) {
        std::map<std::pair<std::string, std::string>, std::pair<float, int>> out;
        for (const AuditItem& it : r.items)
            if (it.cell && it.heatmap) {
                auto [at, fresh] = out.emplace(std::make_pair(it.panel, it.tensor), std::make_pair(it.w, 0));
                ++at->second.second;
            }
        return out;
    };
    const auto was = maps(before), is = maps(after);
    for (const auto& [key, size] : was) {
        const auto now = is.find(key);
        const float w = size.first;
        if (now != is.end() && now->second.second == size.second && std::abs(now->second.first - w) > std::max(0.2f * w, 2.0f))
            out.push_back(key.first + ": " + key.second + "'s cells " + std::to_string(int(w)) + " px on " + from + ", " +
                          std::to_string(int(now->second.first)) + " px here");
    }
    return out;
}

std::vector<std::string> decimals_changed(const LayoutReport& before, const LayoutReport& after) {
    // The most decimals a stage tensor's drawn numbers show, by tensor.
    const auto decimals = [](const LayoutReport& r) {
        std::map<std::string, int> out;
        for (const AuditItem& it : r.items) {
            if (!it.cell || it.heatmap || it.memory || !it.value_shown || it.panel != "stage") continue;
            const std::size_t dot = it.text.find('.');
            if (dot == std::string::npos) continue;
            int& d = out.emplace(it.tensor, 0).first->second;
            d = std::max(d, static_cast<int>(it.text.size() - dot - 1));
        }
        return out;
    };
    const auto was = decimals(before), is = decimals(after);
    std::vector<std::string> out;
    const std::string from = before.what.empty() ? "the step before" : before.what;
    for (const auto& [tensor, d] : was) {
        const auto now = is.find(tensor);
        if (now != is.end() && now->second != d)
            out.push_back(tensor + ": " + std::to_string(d) + " decimals on " + from + ", " + std::to_string(now->second) +
                          " here");
    }
    return out;
}

}  // namespace headsplit::gui
