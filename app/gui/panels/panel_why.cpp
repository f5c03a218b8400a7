// Why weight splits: one view at a time, chosen by a row of buttons: the modes measured on the
// current shape (time and matmul count as bars), a sweep over T showing the score grids'
// memory growing as T^2 against flash's tile, and the KV cache generation keeps.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "headsplit/base/threads.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"
#include "gui/model/why.hpp"
#include "gui/view/layout.hpp"

namespace headsplit::gui {

namespace {

// A line of (x, y) points scaled into [p0, p1] (y up to y_top, or its own max when 0), with
// dots.
void plot_line(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::vector<double>& xs, const std::vector<double>& ys,
               ImU32 col, double y_top = 0) {
    if (xs.empty()) return;
    const double x_max = *std::max_element(xs.begin(), xs.end());
    const double y_max = y_top > 0 ? y_top : *std::max_element(ys.begin(), ys.end());
    std::vector<ImVec2> pts;
    for (std::size_t i = 0; i < xs.size(); ++i)
        pts.push_back({p0.x + static_cast<float>(xs[i] / x_max) * (p1.x - p0.x),
                       p1.y - static_cast<float>(y_max > 0 ? ys[i] / y_max : 0) * (p1.y - p0.y)});
    if (pts.size() > 1) dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, 2.5f);
    for (const ImVec2& p : pts) dl->AddCircleFilled(p, 4.0f, col);
}

using Legend = std::vector<std::pair<ImU32, std::string>>;

// A legend's entries as the lines they take in a chart `width` px wide: an entry too long for
// one line goes on at the next, indented, broken at its spaces (lines_at_spaces: never inside
// a number; at 1024x768, text 1.5, the KV cache's figures were cut off at the panel's edge).
Legend legend_lines(const Legend& legend, float width) {
    const float room = width - 12 - ImGui::CalcTextSize("  ").x;  // the frame's margins (chart()), the indent
    const auto measure = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
    // A figure keeps its unit ("8.00 MiB"): the space after a digit is held as a no-break
    // space (as wide) while the lines are broken.
    const std::string glue = "\xC2\xA0";
    Legend out;
    for (const auto& [color, text] : legend) {
        std::string held;
        for (std::size_t i = 0; i < text.size(); ++i)
            held += text[i] == ' ' && i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1])) ? glue : std::string(1, text[i]);
        bool first = true;
        for (std::string piece : lines_at_spaces(held, room, measure)) {
            for (std::size_t at; (at = piece.find(glue)) != std::string::npos;) piece.replace(at, glue.size(), " ");
            out.push_back({color, (first ? "" : "  ") + piece});
            first = false;
        }
    }
    return out;
}

// A chart's frame from the cursor, as wide as the panel and `h` high, its legend's lines
// (legend_lines()) inside the top left, or, `legend_w` > 0, in a column that wide at its
// right; returns the plot's corners.
std::pair<ImVec2, ImVec2> chart(ImDrawList* dl, float h, const Legend& lines, float legend_w = 0) {
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float w = room_left().x;
    const ImVec2 p0(o.x + 4, o.y + 4), p1(o.x + w - 4, o.y + h - 4);
    dl->AddRect({p0.x - 4, p0.y - 4}, {p1.x + 4, p1.y + 4}, ImGui::GetColorU32(ImGuiCol_Border));
    const float line = ImGui::GetTextLineHeight();
    const float x = legend_w > 0 ? p1.x - legend_w + 12 : p0.x + 2;
    for (std::size_t i = 0; i < lines.size(); ++i)
        draw_label(dl, {x, p0.y + static_cast<float>(i) * line}, lines[i].first, fit_text(lines[i].second, p1.x - x - 2));
    ImGui::Dummy({w, h});
    return {p0, p1};
}

std::string kv_cache_sentence(const Config& c) {
    return std::string("What generation keeps: each earlier token's keys and values, per layer") +
           (c.layers > 1 ? " (all the model's layers in fp16 in brackets)" : "") + ". Fewer KV heads, a smaller cache.";
}

// What generation keeps: the KV cache growing by one token's keys and values per token, for
// MHA, this configuration's grouped-query attention and MQA. From the configuration alone.
// Its sentence (`explain_h` px high) where the chart's legend and a line still fit under it,
// and six lines at least; the chart takes the rest of the panel, its legend at least.
struct KvChart {
    std::int64_t tokens = 0;
    Legend legend;
    std::vector<double> ends;  // each line's cache at the axis's end, bytes
};

KvChart kv_chart(const Config& c) {
    KvChart k;
    std::vector<std::int64_t> kvs{c.heads};
    if (c.grouped() && c.kv_head_count() > 1) kvs.push_back(c.kv_head_count());
    if (c.heads > 1) kvs.push_back(1);
    // Tokens to plot: the sequence on screen, or 4096 for the model presets (a long context).
    const std::int64_t n = k.tokens = c.layers > 1 ? 4096 : std::max<std::int64_t>(c.num_tokens(), 8);
    k.legend = {{ImGui::GetColorU32(ImGuiCol_TextDisabled), "the cache after 0 .. " + std::to_string(n) + " tokens, one layer, float32"}};
    for (std::int64_t kv : kvs) {
        Config v = c;
        v.kv_heads = kv == c.heads ? 0 : kv;
        k.ends.push_back(static_cast<double>(n) * static_cast<double>(kv_cache_bytes_per_token(v)));
        // The bytes a token adds, and the cache at the end of the axis.
        k.legend.push_back({head_ink(kv == c.heads ? 0 : kv == 1 ? 2 : 1),
                            std::string(kv == c.heads ? "MHA, " : kv == 1 ? "MQA, " : "GQA, ") + std::to_string(kv) +
                                " KV heads: " + grouped(kv_cache_bytes_per_token(v)) + " bytes a token" +
                                (c.layers > 1 ? " (" + human_bytes(static_cast<double>(model_kv_cache_bytes_per_token(v))) + ")"
                                              : "") +
                                ", " + human_bytes(k.ends.back()) + " at " + std::to_string(n)});
    }
    return k;
}

// A chart's legend height `width` px wide.
float legend_height(const Legend& legend, float width) {
    return static_cast<float>(legend_lines(legend, width).size()) * ImGui::GetTextLineHeight() + 8;
}

void draw_kv_cache(ImDrawList* dl, const Config& c, float& legend_h, float explain_h) {
    const KvChart k = kv_chart(c);
    const Legend& legend = k.legend;
    const std::vector<double>& ends = k.ends;
    const Legend lines = legend_lines(legend, room_left().x);
    legend_h = legend_height(legend, room_left().x);
    const float line = ImGui::GetTextLineHeightWithSpacing();
    if (room_left().y >= explain_h + std::max(6 * line, legend_h + line))
        ImGui::TextWrapped("%s", kv_cache_sentence(c).c_str());
    const auto [p0, p1] = chart(dl, std::max(legend_h + ImGui::GetTextLineHeight(), room_left().y), lines);
    // The lines under the legend, which they crossed when it took two lines an entry.
    const double top = ends.front();  // MHA's, the largest
    const float plot_h = p1.y - (p0.y + legend_h);
    for (std::size_t i = 0; i < ends.size(); ++i)
        dl->AddLine({p0.x, p1.y}, {p1.x, p1.y - static_cast<float>(ends[i] / top) * plot_h}, legend[i + 1].first, 2.5f);
}

// What the measurement took, on the row of the views' buttons: the rounds behind the modes'
// figures (each round's fastest run), or the timed runs where the time allowed one round; the
// backend; the shape timed where it is not the one on screen.
std::string measured_what(const WhyResult& r, const Config& c) {
    const auto range = [](const std::vector<int>& counts) {
        int least = 0, most = 0;
        for (int n : counts) least = least ? std::min(least, n) : n, most = std::max(most, n);
        return std::make_pair(least, most);
    };
    std::vector<int> runs;
    for (const BenchResult& b : r.modes) runs.push_back(b.runs);
    const auto [least_runs, most_runs] = range(runs);
    const auto [least_rounds, most_rounds] = range(r.rounds);
    const auto from_to = [](int least, int most) {
        return (least < most ? std::to_string(least) + " to " : "") + std::to_string(most);
    };
    std::string what = (most_rounds > 1   ? "median of " + from_to(least_rounds, most_rounds) + " rounds"
                        : most_runs == 1 ? std::string("1 run")
                                         : "median of " + from_to(least_runs, most_runs) + " runs") +
                       ", " + (r.modes.empty() ? "?" : r.modes[0].backend);
    const Config& m = r.config;  // another shape than the one on screen: say which
    if (m.num_tokens() != c.num_tokens() || m.d_in != c.d_in || m.d_out != c.d_out || m.heads != c.heads ||
        m.kv_head_count() != c.kv_head_count() || m.batch != c.batch)
        what += ", of T=" + std::to_string(m.num_tokens()) + " D=" + std::to_string(m.d_out) + " " +
                std::to_string(m.heads) + " heads";
    return what;
}

// The measurement: the button and what was measured on the row the view buttons began, or its
// progress while it runs; the result once it is in and good (nullptr otherwise, its error
// shown).
const WhyResult* measurement(AppState& st, const Config& c) {
    if (st.why && !st.why->result) {  // (take_result() takes it once finished)
        const float f = static_cast<float>(st.why->done) / std::max(1, static_cast<int>(st.why->total));
        char label[64];
        std::snprintf(label, sizeof label, "measuring %d of %d", st.why->done.load(), st.why->total.load());
        ImGui::ProgressBar(f, ImVec2(-1, 0), label);
        return nullptr;
    }
    next_on_line(ImGui::CalcTextSize("measure").x + 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::Button("measure")) st.why = start_why(c);
    if (!st.why || !st.why->result) return nullptr;
    const WhyResult& r = *st.why->result;
    if (!r.error.empty()) {
        ImGui::TextColored({1, 0.4f, 0.4f, 1}, "%s", r.error.c_str());
        return nullptr;
    }
    const std::string what = measured_what(r, c);
    next_on_line(ImGui::CalcTextSize(what.c_str()).x);
    ImGui::TextDisabled("%s", fit_text(what, room_left().x).c_str());
    if (!r.notice.empty()) ImGui::TextColored({1.0f, 0.75f, 0.2f, 1}, "%s", r.notice.c_str());
    return &r;
}

// Bars from the cursor: one line per mode, its forward time as a bar, then the numbers; under
// them the ratios of the modes measured (loop/split, split/fused, flash/split).
void draw_mode_bars(ImDrawList* dl, const WhyResult& r) {
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float width = room_left().x, line = ImGui::GetTextLineHeightWithSpacing();
    double max_ms = 0;
    for (const BenchResult& b : r.modes) max_ms = std::max(max_ms, b.median_ms);
    const float label_w = ImGui::CalcTextSize("fused  ").x;
    const float bar_room = width - label_w - ImGui::CalcTextSize("000.000 ms, 000 matmuls").x - 12;
    for (std::size_t i = 0; i < r.modes.size(); ++i) {
        const BenchResult& b = r.modes[i];
        const float y = o.y + static_cast<float>(i) * line;
        draw_label(dl, {o.x, y}, ImGui::GetColorU32(ImGuiCol_Text), mode_name(b.mode));
        const float w_ms = std::max(0.0f, static_cast<float>(b.median_ms / max_ms) * bar_room);
        dl->AddRectFilled({o.x + label_w, y + 3}, {o.x + label_w + w_ms, y + line - 3}, head_color(static_cast<int>(i)), 2);
        char t[96];
        std::snprintf(t, sizeof t, "%.3f ms, %lld matmuls", b.median_ms, static_cast<long long>(b.matmuls));
        draw_label(dl, {o.x + label_w + w_ms + 6, y}, ImGui::GetColorU32(ImGuiCol_Text), t);
    }
    std::vector<std::string> ratios;
    const auto ratio = [&](Mode a, Mode b) {
        const double x = why_ratio(r, a, b);
        if (x <= 0) return;
        char t[64];
        std::snprintf(t, sizeof t, "%s/%s = %.2fx", mode_name(a), mode_name(b), x);
        ratios.push_back(t);
    };
    ratio(Mode::Loop, Mode::Split);
    ratio(Mode::Split, Mode::Fused);
    ratio(Mode::Flash, Mode::Split);
    // Side by side, a ratio that does not fit going to the next line (ratio_lines() of them).
    float x = o.x, y = o.y + static_cast<float>(r.modes.size()) * line + 4;
    for (std::size_t i = 0; i < ratios.size(); ++i) {
        const std::string text = ratios[i] + (i + 1 < ratios.size() ? "," : "");
        const float w = ImGui::CalcTextSize(text.c_str()).x;
        if (x > o.x && x + w > o.x + width) x = o.x, y += line;
        x += draw_label(dl, {x, y}, ImGui::GetColorU32(ImGuiCol_Text), fit_text(text, width)).x + ImGui::CalcTextSize(" ").x;
    }
}

// The lines the ratios take in `width` px: measured at their widest ("loop/split = 100.00x,"),
// so that the room kept for them does not depend on the numbers.
int ratio_lines(float width) {
    int lines = 1;
    float x = 0;
    for (const char* widest : {"loop/split = 100.00x, ", "split/fused = 10.00x, ", "flash/split = 10.00x"}) {
        const float w = ImGui::CalcTextSize(widest).x;
        if (x > 0 && x + w > width) ++lines, x = 0;
        x += w;
    }
    return lines;
}

// An axis from 0 to `top` (the data's largest value, > 0) with at most `most` steps between
// labelled ticks: the step the smallest of 1, 2 or 5 times a power of ten that needs no more,
// the axis up to the tick at or above `top`.
struct Axis {
    double step = 1, top = 1;
};
Axis axis_for(double top, int most) {
    Axis a;
    if (!std::isfinite(top) || top <= 0) return a;
    for (double decade = std::pow(10.0, std::floor(std::log10(top / most)) - 1);; decade *= 10)
        for (double m : {1.0, 2.0, 5.0})
            if (top / (m * decade) <= most + 1e-9) {
                a.step = m * decade;
                a.top = std::ceil(top / a.step - 1e-9) * a.step;
                return a;
            }
}

// A tick's label: the value with `unit`, "0" at the foot.
std::string tick_text(double v, const char* unit) {
    if (v == 0) return "0";
    char t[32];
    std::snprintf(t, sizeof t, "%g %s", v, unit);
    return t;
}

// The rows the sweep's axes take under its legend: half a line above the plot (its top
// label), a line for T's values under it, and the plot's least: a line, its top labels
// alone (from two lines, its foot's too).
constexpr float kAxesLines = 1.5f, kLeastPlotLines = 1;
// The legend goes beside a plot that would have fewer lines than this under it.
constexpr float kBesideLines = 4;

// The share of `width` (the narrowest of 40% to 60%) whose column holds the legend in `most`
// px of height beside the plot; 0 where none does.
float beside_share(const Legend& legend, float width, float most) {
    for (float share = 0.4f; share < 0.61f; share += 0.05f)
        if (legend_height(legend, share * width) <= most) return share;
    return 0;
}

// The sweep's legend: the names, and the longest length's figures once there are some (no
// zeros while measuring); short enough for a projector's panel. Memory's lines first, then
// time's: the order of the axes, left to right.
Legend sweep_legend(const WhyResult* r, bool flash_timed) {
    std::string axis = "T doubling from 8", t[4] = {"split's scores (x4 a step)", "split's forward", "flash's tile, m and l",
                                                   "flash's forward"};
    if (r && !r->sweep.empty()) {
        const SweepPoint& last = r->sweep.back();
        char ms_text[2][32];
        std::snprintf(ms_text[0], sizeof ms_text[0], ": %.2f ms", last.forward_ms);
        std::snprintf(ms_text[1], sizeof ms_text[1], ": %.2f ms", last.flash_ms);
        axis = "T = 8 .. " + std::to_string(last.tokens) + ", doubling; at T = " + std::to_string(last.tokens) + ":";
        t[0] += ": " + human_bytes(last.score_bytes);
        t[1] += ms_text[0];
        t[2] += ": " + human_bytes(last.flash_bytes);
        t[3] += ms_text[1];
    }
    Legend legend{
        {ImGui::GetColorU32(ImGuiCol_TextDisabled), axis}, {head_ink(3), t[0]}, {head_ink(5), t[2]}, {head_ink(2), t[1]}};
    if (flash_timed) legend.push_back({head_ink(4), t[3]});
    if (r && !r->sweep_end.empty()) legend.push_back({ImGui::GetColorU32(ImGuiCol_TextDisabled), r->sweep_end});
    return legend;
}

// The sweep's frame in `room_h` px: its legend's lines and height, the column it takes beside
// the plot (0: above it) and the frame's height.
struct SweepFrame {
    Legend lines;
    float legend_h = 0, beside_w = 0, frame_h = 0;
};

// The legend beside the plot, where under it the plot would have fewer than kBesideLines
// lines (the normal layout at 1366x768, text 1.25: the legend's five lines left no plot). The
// frame: the panel's room, at least what the legend and the least plot need.
SweepFrame sweep_frame(const Legend& legend, float width, float room_h) {
    const float line = ImGui::GetTextLineHeight();
    SweepFrame f;
    f.lines = legend_lines(legend, width);
    f.legend_h = static_cast<float>(f.lines.size()) * line + 8;
    const float under_least = f.legend_h + (kAxesLines + kLeastPlotLines) * line;
    f.frame_h = room_h;
    if (f.frame_h - f.legend_h - kAxesLines * line < kBesideLines * line) {
        // (In the room where a column holds it there, else in what the legend under needs.)
        float share = beside_share(legend, width, f.frame_h);
        if (share == 0) share = beside_share(legend, width, std::max(f.frame_h, under_least));
        if (share > 0) {
            f.lines = legend_lines(legend, share * width);
            f.legend_h = static_cast<float>(f.lines.size()) * line + 8;
            f.beside_w = share * width;
        }
    }
    f.frame_h = std::max(f.frame_h, f.beside_w > 0 ? std::max(f.legend_h, (kAxesLines + kLeastPlotLines) * line) : under_least);
    return f;
}

// The sweep, its chart taking the rest of the panel: score memory (T^2) and forward time
// against T, memory on the left axis (split's grid and flash's tile), time on the right (both
// forwards), T along the foot; the legend above the plot gives the longest length's figures,
// and where the time stopped the sweep.
void draw_sweep(ImDrawList* dl, const WhyResult* r, float& legend_h) {
    std::vector<double> xs, mem, ms, fmem, fms;
    if (r)
        for (const SweepPoint& s : r->sweep) {
            xs.push_back(static_cast<double>(s.tokens));
            mem.push_back(s.score_bytes), ms.push_back(s.forward_ms);
            fmem.push_back(s.flash_bytes), fms.push_back(s.flash_ms);
        }
    const bool flash_timed = !fms.empty() && *std::min_element(fms.begin(), fms.end()) > 0;
    const Legend legend = sweep_legend(r, flash_timed);
    const float line = ImGui::GetTextLineHeight(), width = room_left().x;
    const SweepFrame f = sweep_frame(legend, width, room_left().y);
    const Legend& lines = f.lines;
    const float frame_h = f.frame_h, beside_w = f.beside_w;
    legend_h = f.legend_h;
    const auto [p0, p1] = chart(dl, frame_h, lines, beside_w);
    if (xs.empty()) return;  // one length is a point on each line, its axes labelled

    // Measure, then place: the plot's height gives the ticks, their labels the side columns.
    // A chart the layout left no line for under its legend has the legend alone.
    const float top = (beside_w > 0 ? p0.y : p0.y + legend_h) + line / 2, foot = p1.y - line;
    if (foot - top < line) return;
    const int most = std::clamp(static_cast<int>((foot - top) / (1.5f * line)), 1, 4);
    double mem_top = 0, ms_top = 0;
    for (double v : mem) mem_top = std::max(mem_top, v);
    for (double v : ms) ms_top = std::max(ms_top, v);
    for (double v : fms) ms_top = std::max(ms_top, v);
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double per_unit = 1;
    while (u < 4 && mem_top >= 1024 * per_unit) ++u, per_unit *= 1024;
    const Axis mem_axis = axis_for(std::max(mem_top / per_unit, 1e-9), most);
    const Axis ms_axis = axis_for(std::max(ms_top, 1e-9), most);
    // A tick's labels from the foot up: where the plot has room for one step only and not for
    // two labels, the top's alone.
    const bool both_ends = foot - top >= 2 * line;
    const auto ticks = [&](const Axis& a, const char* unit) {
        std::vector<std::pair<double, std::string>> out;
        const int n = static_cast<int>(std::lround(a.top / a.step));
        for (int i = both_ends ? 0 : n; i <= n; ++i) out.push_back({i * a.step, tick_text(i * a.step, unit)});
        return out;
    };
    const auto mem_ticks = ticks(mem_axis, units[u]), ms_ticks = ticks(ms_axis, "ms");
    const float gap = ImGui::CalcTextSize(" ").x;
    const std::string last_t = std::to_string(static_cast<long long>(xs.back()));
    float left_w = ImGui::CalcTextSize("T").x, right_w = ImGui::CalcTextSize(last_t.c_str()).x / 2;
    for (const auto& [v, text] : mem_ticks) left_w = std::max(left_w, ImGui::CalcTextSize(text.c_str()).x);
    for (const auto& [v, text] : ms_ticks) right_w = std::max(right_w, ImGui::CalcTextSize(text.c_str()).x);
    const ImVec2 q0(p0.x + left_w + gap, top), q1(p1.x - beside_w - right_w - gap, foot);
    if (q1.x - q0.x < 4 * gap) return;  // no room for a plot: the legend says it all

    // The axes: memory's on the left, time's on the right, T's at the foot.
    const ImU32 axis_col = ImGui::GetColorU32(ImGuiCol_Border), text_col = ImGui::GetColorU32(ImGuiCol_Text);
    dl->AddLine(q0, {q0.x, q1.y}, axis_col);
    dl->AddLine({q1.x, q0.y}, q1, axis_col);
    dl->AddLine({q0.x, q1.y}, q1, axis_col);
    const auto tick_y = [&](double v, const Axis& a) { return q1.y - static_cast<float>(v / a.top) * (q1.y - q0.y); };
    // A label beside its tick, kept within the plot's height (the foot's above it, the top's below).
    const auto label_y = [&](float y) { return std::max(q0.y, std::min(y - line / 2, q1.y - line)); };
    for (const auto& [v, text] : mem_ticks) {
        const float y = tick_y(v, mem_axis);
        dl->AddLine({q0.x - gap / 2, y}, {q0.x, y}, axis_col);
        draw_label(dl, {q0.x - gap - ImGui::CalcTextSize(text.c_str()).x, label_y(y)}, text_col, text);
    }
    for (const auto& [v, text] : ms_ticks) {
        const float y = tick_y(v, ms_axis);
        dl->AddLine({q1.x, y}, {q1.x + gap / 2, y}, axis_col);
        draw_label(dl, {q1.x + gap, label_y(y)}, text_col, text);
    }
    // T's values under their points, from the longest back, each drawn where it clears the one
    // to its right by a space and the axis's name.
    const double x_max = xs.back();
    float free_right = p1.x - beside_w;
    const float name_right = p0.x + left_w + gap / 2;
    draw_label(dl, {p0.x, q1.y}, text_col, "T");
    for (std::size_t i = xs.size(); i-- > 0;) {
        const std::string text = std::to_string(static_cast<long long>(xs[i]));
        const float w = ImGui::CalcTextSize(text.c_str()).x;
        const float x = q0.x + static_cast<float>(xs[i] / x_max) * (q1.x - q0.x);
        if (x + w / 2 > free_right || x - w / 2 < name_right) continue;
        dl->AddLine({x, q1.y}, {x, q1.y + gap / 2}, axis_col);
        draw_label(dl, {x - w / 2, q1.y}, text_col, text);
        free_right = x - w / 2 - gap;
    }
    plot_line(dl, q0, q1, xs, mem, head_ink(3), mem_axis.top * per_unit);
    plot_line(dl, q0, q1, xs, fmem, head_ink(5), mem_axis.top * per_unit);
    plot_line(dl, q0, q1, xs, ms, head_ink(2), ms_axis.top);
    if (flash_timed) plot_line(dl, q0, q1, xs, fms, head_ink(4), ms_axis.top);
}

}  // namespace

namespace {

using View = AppState::WhyView;

const std::vector<const char*> kViews{"modes", "T sweep", "KV cache"};
const char* const kModesAbout = "One big matmul per projection and a reshape, against a small matmul per head: measured "
                                "here, on this machine, for the shape on screen.";

// Items placed one after another as next_on_line() places them, in a row `width` px wide: a
// line as tall as a frame where it holds one, else as a line of text (at a whole pixel, as
// ImGui places lines).
class Flow {
public:
    explicit Flow(float width) : width_(width) {}
    void item(float w, bool frame) {
        const float gap = ImGui::GetStyle().ItemSpacing.x;
        if (x_ >= 0 && x_ + gap + w > width_) close();
        x_ = (x_ >= 0 ? x_ + gap : 0.0f) + w;
        framed_ = framed_ || frame;
    }
    void alone(float h) { close(), h_ += std::floor(h); }  // an item on a line of its own, `h` with its spacing
    float height() {
        close();
        return h_;
    }

private:
    void close() {
        if (x_ >= 0) h_ += std::floor(framed_ ? ImGui::GetFrameHeightWithSpacing() : ImGui::GetTextLineHeightWithSpacing());
        x_ = -1, framed_ = false;
    }
    float width_, x_ = -1, h_ = 0;
    bool framed_ = false;
};

// The row of the views' buttons and the measurement (measurement()), `width` px wide.
float header_height(const AppState& st, View view, const Config& c, float width) {
    Flow row(width);
    for (const char* label : kViews)
        row.item(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x, true);
    if (view == View::KvCache) return row.height();
    if (st.why && !st.why->result) {
        row.alone(ImGui::GetFrameHeightWithSpacing());  // the progress bar
        return row.height();
    }
    row.item(ImGui::CalcTextSize("measure").x + 2 * ImGui::GetStyle().FramePadding.x, true);
    if (!st.why) return row.height();
    const WhyResult& r = *st.why->result;
    if (!r.error.empty()) {
        row.alone(ImGui::GetTextLineHeightWithSpacing());
        return row.height();
    }
    row.item(std::min(ImGui::CalcTextSize(measured_what(r, c).c_str()).x, width), false);
    if (!r.notice.empty()) row.alone(ImGui::GetTextLineHeightWithSpacing());
    return row.height();
}

// The modes' bars with their note and ratios, `width` px wide.
float bars_height(const WhyResult* r, const Config& c, float width) {
    const float line = ImGui::GetTextLineHeightWithSpacing();
    // Four modes and their ratios, whether measured yet or not, under the length they were
    // timed at where it is not the one on screen (its lines kept before the result).
    const std::string note = r ? r->timed_note : timing_note(c, timing_config(c));
    const auto measure = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
    const float note_h = static_cast<float>(note.empty() ? 0 : lines_at_spaces(note, width, measure).size()) * line;
    return note_h + static_cast<float>(4 + ratio_lines(width)) * line + 4;
}

const WhyResult* result_of(const AppState& st) {
    return st.why && st.why->result && st.why->result->error.empty() ? st.why->result.get() : nullptr;
}

bool flash_timed(const WhyResult* r) {
    if (!r || r->sweep.empty()) return false;
    for (const SweepPoint& p : r->sweep)
        if (!(p.flash_ms > 0)) return false;
    return true;
}

// The view's height under the header `width` px wide: its text lines and a chart's legend, and
// with a chart that reads.
std::pair<float, float> view_need(const AppState& st, View view, const Config& c, float width) {
    const float line = ImGui::GetTextLineHeightWithSpacing(), text_line = ImGui::GetTextLineHeight();
    if (view == View::KvCache) {
        const float legend_h = legend_height(kv_chart(c).legend, width);
        return {legend_h + line, legend_h + 3 * line};  // the lines are drawn under the legend
    }
    const WhyResult* r = result_of(st);
    if (view == View::Modes) return {bars_height(r, c, width), bars_height(r, c, width)};
    // Its legend and a plot that reads (its least, then three ticks' six lines), the legend
    // under the plot or beside it (as draw_sweep places it), whichever needs the less height.
    const Legend legend = sweep_legend(r, flash_timed(r));
    const float legend_h = legend_height(legend, width), side_h = legend_height(legend, 0.6f * width);
    const auto least = [&](float plot_lines) {
        const float plot_h = (kAxesLines + plot_lines) * text_line;
        return std::min(legend_h + plot_h, std::max(side_h, plot_h));
    };
    return {least(kLeastPlotLines), least(6)};
}

// The shape on screen: the last good trace's (the controls may hold a refused value).
const Config& shown_config(const AppState& st) { return st.trace ? st.trace->config : st.config; }

}  // namespace

PanelNeed MeasureWhy(const AppState& st, ImVec2 panel, bool window_titled) {
    PanelNeed n;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width = std::max(panel.x - 2 * style.WindowPadding.x, 1.0f);
    const Config& c = shown_config(st);
    const float top = heads_content_top(st, window_titled) + header_height(st, st.why_view, c, width);
    const auto [text_h, need_h] = view_need(st, st.why_view, c, width);
    n.text_h = std::ceil(top + text_h + style.WindowPadding.y);
    n.need_h = std::ceil(top + need_h + style.WindowPadding.y);
    n.min_w = radio_row_width(kViews) + 2 * style.WindowPadding.x;
    return n;
}

void DrawWhy(AppState& st) {
    const Config& c = shown_config(st);
    audit_panel("why");
    scroll_below_projector_size(st.font_scale);  // every view fits from 1024x768 at text 1.5
    const float top = ImGui::GetCursorScreenPos().y;
    const float width = room_left().x;
    const float told_header = header_height(st, st.why_view, c, width);

    // One row that wraps where it must: the views, the measurement's button and what it took.
    const View measured = st.why_view;
    st.why_view = static_cast<View>(radio_row(kViews, static_cast<int>(st.why_view)));

    // Below: a sentence that says what the view shows where there is room for it, then the view
    // (its need measured before the panel was placed, MeasureWhy); the sentence takes what room
    // is left over (the stage has the better claim to it).
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float drawn_header = 0;
    if (st.why_view == View::KvCache) {
        drawn_header = ImGui::GetCursorScreenPos().y - top;
        const float explain_h = ImGui::CalcTextSize(kv_cache_sentence(c).c_str(), nullptr, false, room_left().x).y +
                                ImGui::GetStyle().ItemSpacing.y;
        float legend_h = 0;
        draw_kv_cache(dl, c, legend_h, explain_h);
    } else {
        const WhyResult* r = measurement(st, c);
        drawn_header = ImGui::GetCursorScreenPos().y - top;
        if (st.why_view == View::Modes) {
            const std::string note = r ? r->timed_note : "";
            const float bars_h = bars_height(r, c, room_left().x);
            const float line = ImGui::GetTextLineHeightWithSpacing();
            const auto measure = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
            const float note_h = static_cast<float>(note.empty() ? 0 : lines_at_spaces(note, room_left().x, measure).size()) * line;
            const float about_h =
                ImGui::CalcTextSize(kModesAbout, nullptr, false, room_left().x).y + ImGui::GetStyle().ItemSpacing.y;
            if (room_left().y >= about_h + bars_h) ImGui::TextWrapped("%s", kModesAbout);
            const float note_top = ImGui::GetCursorScreenPos().y;
            if (r && !note.empty()) {
                ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
                text_at_spaces(note);
                ImGui::PopStyleColor();
            }
            ImGui::SetCursorScreenPos({ImGui::GetCursorScreenPos().x, note_top + note_h});
            if (r) draw_mode_bars(dl, *r);
            ImGui::Dummy({room_left().x, bars_h - note_h});
        } else {
            float legend_h = 0;
            draw_sweep(dl, r, legend_h);
        }
    }
    // (A view chosen this frame is measured from the next.)
    if (std::abs(drawn_header - told_header) > 1 && st.why_view == measured)
        frame_watch().mismeasured("the why tab's header", told_header, drawn_header);
}

}  // namespace headsplit::gui
