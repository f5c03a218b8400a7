#include "gui/runs/layout_record.hpp"

#include <cmath>

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace headsplit::gui {

LayoutAudit& layout_audit() {
    static LayoutAudit audit;
    static const bool installed = (watch_frames(&audit), true);
    (void)installed;
    return audit;
}

void LayoutAudit::begin_frame(int window_w, int window_h, float font_scale, std::string what) {
    report_ = LayoutReport{};
    report_.window_w = window_w;
    report_.window_h = window_h;
    report_.font_scale = font_scale;
    report_.what = std::move(what);
    panel_.clear();
}

void LayoutAudit::begin_panel(const std::string& name, float x, float y, float w, float h, float clip_x0,
                              float clip_y0, float clip_x1, float clip_y1, bool scroll_x, bool scroll_y) {
    if (!enabled) return;
    panel_ = name;
    clip_[0] = clip_x0;
    clip_[1] = clip_y0;
    clip_[2] = clip_x1;
    clip_[3] = clip_y1;
    report_.panels.push_back({name, x, y, w, h, scroll_x, scroll_y, clip_x0, clip_y0, clip_x1, clip_y1, must_fit_panel(name), {}});
}

void LayoutAudit::expect_heads(std::vector<int> heads) {
    if (enabled && !report_.panels.empty()) report_.panels.back().heads = std::move(heads);
}

void LayoutAudit::allow_scroll() {
    if (!enabled || report_.panels.empty()) return;
    AuditPanel& p = report_.panels.back();
    p.must_fit = false;
    p.scroll_x = p.scroll_y = true;  // zoomed in, the reader scrolls both ways
}

bool must_fit_panel(const std::string& name) {
    return name == "stage" || name == "heatmaps" || name == "code" || name == "caption" || name == "why" ||
           name == "timeline" || name == "weights";
}

bool LayoutAudit::visible(float x, float y, float w, float h) const {
    return x + w > clip_[0] && x < clip_[2] && y + h > clip_[1] && y < clip_[3];
}

AuditItem LayoutAudit::placed(float x, float y, float w, float h) const {
    AuditItem it;
    it.panel = panel_;
    it.x = x, it.y = y, it.w = w, it.h = h;
    it.visible = visible(x, y, w, h);
    return it;
}

void LayoutAudit::label(const std::string& text, float x, float y, float w, float h, const std::string& token) {
    if (!enabled || (text.empty() && token.empty())) return;  // a token's label cut to nothing counts
    AuditItem it = placed(x, y, w, h);
    it.text = text;
    it.token = token;
    report_.items.push_back(std::move(it));
}

void LayoutAudit::thinned(const std::string& what) {
    if (enabled) report_.thinned.emplace_back(panel_, what);
}

void LayoutAudit::cut(const std::string& whole, const std::string& shown) {
    if (enabled) report_.cut.push_back({panel_, whole, shown});
}

void LayoutAudit::mismeasured(const std::string& what, float told, float drawn) {
    if (enabled)
        report_.mismeasured.push_back(panel_ + ": " + what + ": measured " + std::to_string(static_cast<int>(std::lround(told))) +
                                      " px, drawn " + std::to_string(static_cast<int>(std::lround(drawn))) + " px");
}

void LayoutAudit::cell(const std::string& text, float x, float y, float w, float h, bool value_shown, float value_w,
                       bool heatmap, const std::string& tensor, int head, float value_h, std::vector<long long> index,
                       const std::string& values_of) {
    if (!enabled) return;
    AuditItem it = placed(x, y, w, h);
    it.cell = true;
    it.text = text;
    it.value_shown = value_shown;
    it.value_w = value_w;
    it.heatmap = heatmap;
    it.tensor = tensor;
    it.head = head;
    it.value_h = value_shown ? value_h : 0;
    it.index = std::move(index);
    it.values_of = values_of;
    report_.items.push_back(std::move(it));
}

void LayoutAudit::memory(float x, float y, float w, float h, const std::string& tensor, int head,
                         std::vector<long long> index) {
    if (!enabled) return;
    AuditItem it = placed(x, y, w, h);
    it.memory = true;
    it.tensor = tensor;
    it.head = head;
    it.index = std::move(index);
    report_.items.push_back(std::move(it));
}

std::string layout_report_json(const LayoutReport& r) {
    nlohmann::json doc;
    doc["format"] = "headsplit-layout";
    doc["version"] = 2;
    doc["window"] = {r.window_w, r.window_h};
    doc["font_scale"] = r.font_scale;
    doc["what"] = r.what;
    nlohmann::json panels = nlohmann::json::array();
    for (const AuditPanel& p : r.panels)
        panels.push_back({{"name", p.name}, {"x", p.x}, {"y", p.y}, {"w", p.w}, {"h", p.h},
                          {"scroll_x", p.scroll_x}, {"scroll_y", p.scroll_y},
                          {"visible", {p.clip_x0, p.clip_y0, p.clip_x1, p.clip_y1}}, {"must_fit", p.must_fit},
                          {"heads", p.heads}});
    doc["panels"] = std::move(panels);
    nlohmann::json items = nlohmann::json::array();
    for (const AuditItem& it : r.items) {
        nlohmann::json j = {{"panel", it.panel}, {"kind", it.cell ? "cell" : it.memory ? "memory" : "label"},
                            {"text", it.text}, {"x", it.x}, {"y", it.y}, {"w", it.w}, {"h", it.h}, {"visible", it.visible}};
        if (it.cell) {
            j["value_shown"] = it.value_shown;
            j["value_w"] = it.value_w;
            j["value_h"] = it.value_h;
            if (!it.values_of.empty()) j["values_of"] = it.values_of;
        }
        if (it.cell || it.memory) {
            j["tensor"] = it.tensor;
            j["head"] = it.head;
            j["index"] = it.index;
        }
        if (!it.token.empty()) j["token"] = it.token;
        items.push_back(std::move(j));
    }
    doc["items"] = std::move(items);
    nlohmann::json thinned = nlohmann::json::array();
    for (const auto& [panel, what] : r.thinned) thinned.push_back({{"panel", panel}, {"what", what}});
    doc["thinned"] = std::move(thinned);
    nlohmann::json cut = nlohmann::json::array();
    for (const LayoutReport::Cut& c : r.cut) cut.push_back({{"panel", c.panel}, {"whole", c.whole}, {"shown", c.shown}});
    doc["cut"] = std::move(cut);
    return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace headsplit::gui
