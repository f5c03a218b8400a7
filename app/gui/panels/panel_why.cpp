// Why weight splits: the three modes measured on the current shape (time and matmul count
// as bars), and a sweep over T showing the score grids' memory growing as T^2.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"
#include "gui/model/why.hpp"

namespace headsplit::gui {

namespace {

// A line of (x, y) points scaled into [p0, p1] (y up to y_top, or its own max when 0), with
// dots and a label at the end.
void plot_line(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::vector<double>& xs, const std::vector<double>& ys,
               ImU32 col, const char* label, double y_top = 0) {
    if (xs.size() < 2) return;
    const double x_max = *std::max_element(xs.begin(), xs.end());
    const double y_max = y_top > 0 ? y_top : *std::max_element(ys.begin(), ys.end());
    std::vector<ImVec2> pts;
    for (std::size_t i = 0; i < xs.size(); ++i)
        pts.push_back({p0.x + static_cast<float>(xs[i] / x_max) * (p1.x - p0.x),
                       p1.y - static_cast<float>(y_max > 0 ? ys[i] / y_max : 0) * (p1.y - p0.y)});
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, 2.5f);
    for (const ImVec2& p : pts) dl->AddCircleFilled(p, 4.0f, col);
    dl->AddText({pts.back().x - ImGui::CalcTextSize(label).x - 6, pts.back().y + 4}, col, label);
}

}  // namespace

// What generation keeps: the KV cache growing by one token's keys and values per token, for
// MHA, this configuration's grouped-query attention and MQA. From the configuration alone.
static void draw_kv_cache(const Config& c) {
    std::vector<std::int64_t> kvs{c.heads};
    if (c.grouped() && c.kv_head_count() > 1) kvs.push_back(c.kv_head_count());
    if (c.heads > 1) kvs.push_back(1);
    // Tokens to plot: the sequence on screen, or 4096 for the model presets (a long context).
    const std::int64_t n = c.layers > 1 ? 4096 : std::max<std::int64_t>(c.num_tokens(), 8);
    std::string line = "KV cache per token, one layer in float32" +
                       std::string(c.layers > 1 ? " (all " + std::to_string(c.layers) + " layers in fp16)" : "") + ": ";
    for (std::size_t i = 0; i < kvs.size(); ++i) {
        Config v = c;
        v.kv_heads = kvs[i] == c.heads ? 0 : kvs[i];
        const std::string what = kvs[i] == c.heads ? "MHA" : kvs[i] == 1 ? "MQA" : "GQA";
        line += (i ? ", " : "") + what + " (" + std::to_string(kvs[i]) + " KV heads) " +
                grouped(kv_cache_bytes_per_token(v)) + " bytes" +
                (c.layers > 1 ? " (" + human_bytes(static_cast<double>(model_kv_cache_bytes_per_token(v))) + ")" : "");
    }
    ImGui::TextWrapped("%s", line.c_str());
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float lh = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float h = std::clamp(avail.y * 0.35f, 4.5f * lh, 8 * lh), w = std::min(avail.x - 10, 40 * ImGui::GetFontSize());
    const ImVec2 p0(o.x + 4, o.y + 4), p1(o.x + w, o.y + h);
    dl->AddRect({p0.x - 4, p0.y - 4}, {p1.x + 4, p1.y + 4}, ImGui::GetColorU32(ImGuiCol_Border));
    const double top = 2.0 * static_cast<double>(n) * static_cast<double>(c.d_out) * 4;  // MHA at n tokens
    for (std::size_t i = 0; i < kvs.size(); ++i) {
        Config v = c;
        v.kv_heads = kvs[i] == c.heads ? 0 : kvs[i];
        const double end = static_cast<double>(n) * static_cast<double>(kv_cache_bytes_per_token(v));
        const ImVec2 a(p0.x, p1.y), b(p1.x, p1.y - static_cast<float>(end / top) * (p1.y - p0.y));
        const ImU32 col = head_color(static_cast<int>(kvs[i] == c.heads ? 0 : kvs[i] == 1 ? 2 : 1));
        dl->AddLine(a, b, col, 2.5f);
        // The legend, a line each under the axis note (line ends may lie on each other).
        const std::string label = (kvs[i] == c.heads ? "MHA: " : kvs[i] == 1 ? "MQA: " : "GQA: ") + human_bytes(end);
        dl->AddText({p0.x + 2, p0.y + (static_cast<float>(i) + 1) * lh}, col, label.c_str());
    }
    const std::string axis = "cache after 0 .. " + std::to_string(n) + " tokens, one layer";
    dl->AddText({p0.x + 2, p0.y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), axis.c_str());
    ImGui::Dummy({w + 8, h + 10});
}

namespace {

// The measurement: its button, its progress while it runs; the result once it is in and
// good (nullptr otherwise, its error shown).
const WhyResult* measurement(AppState& st, const Config& c) {
    const bool running = st.why && !st.why->result;
    if (st.why && !st.why->result && st.why->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
        st.why->result = std::make_shared<WhyResult>(st.why->future.get());
    ImGui::TextWrapped("One big matmul per projection and a reshape, against one small matmul per head: measured "
                       "here, on this machine, for the shape on screen.");
    if (!running && ImGui::Button("measure this shape")) st.why = start_why(c);
    if (running) {
        const float f = static_cast<float>(st.why->done) / std::max(1, static_cast<int>(st.why->total));
        char label[64];
        std::snprintf(label, sizeof label, "measuring %d of %d", st.why->done.load(), st.why->total.load());
        ImGui::ProgressBar(f, ImVec2(-1, 0), label);
        return nullptr;
    }
    if (!st.why || !st.why->result) return nullptr;
    const WhyResult& r = *st.why->result;
    if (!r.error.empty()) {
        ImGui::TextColored({1, 0.4f, 0.4f, 1}, "%s", r.error.c_str());
        return nullptr;
    }
    return &r;
}

// Bars from o, `half` wide: one line per mode, its forward time as a bar, then the numbers;
// under them the ratios of the modes measured (loop / split, split / fused, flash / split).
void draw_mode_bars(ImDrawList* dl, const WhyResult& r, ImVec2 o, float half, float line) {
    double max_ms = 0;
    std::int64_t max_mm = 0;
    for (const BenchResult& b : r.modes) max_ms = std::max(max_ms, b.median_ms), max_mm = std::max(max_mm, b.matmuls);
    const float label_w = ImGui::CalcTextSize("fused  ").x;
    const float bar_room = half - label_w - ImGui::CalcTextSize("000.000 ms, 000 matmuls").x - 12;
    for (std::size_t i = 0; i < r.modes.size(); ++i) {
        const BenchResult& b = r.modes[i];
        const float y = o.y + i * line;
        dl->AddText({o.x, y}, ImGui::GetColorU32(ImGuiCol_Text), mode_name(b.mode));
        const float w_ms = static_cast<float>(b.median_ms / max_ms) * bar_room;
        dl->AddRectFilled({o.x + label_w, y + 3}, {o.x + label_w + w_ms, y + line - 3}, head_color(static_cast<int>(i)), 2);
        char t[96];
        std::snprintf(t, sizeof t, "%.3f ms, %lld matmuls", b.median_ms, static_cast<long long>(b.matmuls));
        dl->AddText({o.x + label_w + w_ms + 6, y}, ImGui::GetColorU32(ImGuiCol_Text), t);
    }
    (void)max_mm;
    const auto ms_of = [&](Mode m) {
        for (const BenchResult& b : r.modes)
            if (b.mode == m) return b.median_ms;
        return 0.0;
    };
    std::string ratios;
    const auto ratio = [&](Mode a, Mode b, double num, double den) {
        if (num <= 0 || den <= 0) return;
        char t[64];
        std::snprintf(t, sizeof t, "%s%s / %s = %.2fx", ratios.empty() ? "" : ", ", mode_name(a), mode_name(b), num / den);
        ratios += t;
    };
    ratio(Mode::Loop, Mode::Split, ms_of(Mode::Loop), ms_of(Mode::Split));
    ratio(Mode::Split, Mode::Fused, ms_of(Mode::Split), ms_of(Mode::Fused));
    ratio(Mode::Flash, Mode::Split, ms_of(Mode::Flash), ms_of(Mode::Split));
    draw_label(dl, {o.x, o.y + static_cast<float>(r.modes.size()) * line + 4}, ImGui::GetColorU32(ImGuiCol_Text),
               fit_text(ratios, half));
}

// Sweep, in [p0, p1]: score memory (T^2) and forward time against T. Memory lines share one
// scale (split's grid at the longest T), time lines another.
void draw_sweep(ImDrawList* dl, const WhyResult& r, ImVec2 p0, ImVec2 p1, float line) {
    std::vector<double> xs, mem, ms, fmem, fms;
    for (const SweepPoint& s : r.sweep) {
        xs.push_back(static_cast<double>(s.tokens));
        mem.push_back(s.score_bytes), ms.push_back(s.forward_ms);
        fmem.push_back(s.flash_bytes), fms.push_back(s.flash_ms);
    }
    const double mem_top = mem.empty() ? 0 : *std::max_element(mem.begin(), mem.end());
    double ms_top = 0;
    for (double v : ms) ms_top = std::max(ms_top, v);
    for (double v : fms) ms_top = std::max(ms_top, v);
    const bool flash_timed = !fms.empty() && *std::min_element(fms.begin(), fms.end()) > 0;
    plot_line(dl, p0, p1, xs, mem, head_color(3), "", mem_top);
    plot_line(dl, p0, p1, xs, ms, head_color(2), "", ms_top);
    plot_line(dl, p0, p1, xs, fmem, head_color(5), "", mem_top);
    if (flash_timed) plot_line(dl, p0, p1, xs, fms, head_color(4), "", ms_top);
    draw_label(dl, {p0.x + 4, p0.y + 2}, head_color(3), fit_text("split's score memory (heads x T x T floats)", p1.x - p0.x - 8));
    draw_label(dl, {p0.x + 4, p0.y + 2 + line}, head_color(2), fit_text("forward time, split mode", p1.x - p0.x - 8));
    draw_label(dl, {p0.x + 4, p0.y + 2 + 2 * line}, head_color(5),
               fit_text("flash's memory (one tile per head, m and l)", p1.x - p0.x - 8));
    if (flash_timed)
        draw_label(dl, {p0.x + 4, p0.y + 2 + 3 * line}, head_color(4), fit_text("forward time, flash mode", p1.x - p0.x - 8));
    if (!r.sweep.empty()) {
        const SweepPoint& last = r.sweep.back();
        char t[200];
        std::snprintf(t, sizeof t, "T=%lld: split %s of scores, %.2f ms; flash %s, %.2f ms", static_cast<long long>(last.tokens),
                      human_bytes(last.score_bytes).c_str(), last.forward_ms, human_bytes(last.flash_bytes).c_str(),
                      last.flash_ms);
        draw_label(dl, {p0.x, p1.y + 6}, ImGui::GetColorU32(ImGuiCol_TextDisabled), fit_text(t, p1.x - p0.x));
    }
}

}  // namespace

void DrawWhy(AppState& st) {
    // The shape on screen: the last good trace's (the controls may hold a refused value).
    const Config& c = st.trace ? st.trace->config : st.config;
    draw_kv_cache(c);
    const WhyResult* measured = measurement(st, c);
    if (!measured) return;
    const WhyResult& r = *measured;
    if (!r.notice.empty()) ImGui::TextColored({1.0f, 0.75f, 0.2f, 1}, "%s", r.notice.c_str());
    else ImGui::SameLine();
    ImGui::TextDisabled("T=%lld D=%lld heads=%lld on %s, median of 5", static_cast<long long>(r.config.num_tokens()),
                        static_cast<long long>(r.config.d_out), static_cast<long long>(r.config.heads),
                        r.modes.empty() ? "?" : r.modes[0].backend.c_str());

    // The bars on the left half, the sweep on the right.
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float half = avail.x * 0.5f - 10;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 o = ImGui::GetCursorScreenPos();
    draw_mode_bars(dl, r, o, half, line);
    const ImVec2 p0(o.x + half + 40, o.y + line), p1(o.x + avail.x - 10, o.y + std::max(4 * line, avail.y - 2 * line));
    dl->AddRect({p0.x - 4, p0.y - 4}, {p1.x + 4, p1.y + 4}, ImGui::GetColorU32(ImGuiCol_Border));
    dl->AddText({p0.x, o.y - 2}, ImGui::GetColorU32(ImGuiCol_Text), "T doubling: score memory x4 each time");
    draw_sweep(dl, r, p0, p1, line);
    ImGui::Dummy({avail.x, std::max(4 * line, p1.y - o.y + line)});
}

}  // namespace headsplit::gui
