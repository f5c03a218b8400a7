// The Train view (N): a tiny model of this attention learning its task, seen as it happens:
// the loss falling off its cliff, each head's attention on a probe sequence with the cells its
// job needs outlined, each head's score and gradient size, and a filmstrip of the snapshots.
// Space starts and pauses, S takes one step, Home starts again, Left and Right scrub.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

#include "gui/model/training.hpp"
#include "gui/panels/panels.hpp"
#include "gui/panels/style.hpp"
#include "headsplit/base/numbers.hpp"

namespace headsplit::gui {

namespace {

// A chart's frame with its title above; returns the plotting area inside.
std::pair<ImVec2, ImVec2> chart_frame(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::string& title, bool dark) {
    draw_label(dl, p0, ImGui::GetColorU32(ImGuiCol_Text), title);
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float left = ImGui::CalcTextSize("0.00").x + 8;
    const ImVec2 a{p0.x + left, p0.y + line + 4}, b{p1.x - 8, p1.y - line - 4};
    dl->AddRect(a, b, neutral_color(dark, 0.6f));
    return {a, b};
}

// (step, value) points as a line in [a, b], x over [0, x_max], y over [0, y_max].
void polyline(ImDrawList* dl, ImVec2 a, ImVec2 b, const std::vector<std::pair<double, double>>& pts, double x_max,
              double y_max, ImU32 col, float thick) {
    std::vector<ImVec2> out;
    for (const auto& [x, y] : pts)
        out.push_back({a.x + static_cast<float>(x / x_max) * (b.x - a.x),
                       b.y - static_cast<float>(std::clamp(y / y_max, 0.0, 1.0)) * (b.y - a.y)});
    if (out.size() > 1) dl->AddPolyline(out.data(), static_cast<int>(out.size()), col, 0, thick);
}

void y_labels(ImDrawList* dl, ImVec2 a, ImVec2 b, double top, int digits) {
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const std::string t = format_fixed(top, digits), z = format_fixed(0, digits);
    draw_label(dl, {a.x - ImGui::CalcTextSize(t.c_str()).x - 4, a.y}, text, t);
    draw_label(dl, {a.x - ImGui::CalcTextSize(z.c_str()).x - 4, b.y - ImGui::GetTextLineHeight()}, text, z);
}

// The loss of every step, its cliff marked, and the step on screen.
void loss_chart(const TrainView& v, ImVec2 p0, ImVec2 p1, bool dark) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const std::pair<ImVec2, ImVec2> area = chart_frame(dl, p0, p1, fit_text("loss", p1.x - p0.x), dark);
    const ImVec2 a = area.first, b = area.second;  // not a structured binding: a lambda below reads them
    const double steps = static_cast<double>(std::max<std::int64_t>(v.config.steps, 1));
    double top = 0.1;
    for (const TrainSnapshot& s : v.film) top = std::max(top, s.loss);
    for (double l : v.losses) top = std::max(top, std::min(l, 2 * top));
    std::vector<std::pair<double, double>> pts;
    const std::size_t stride = std::max<std::size_t>(1, v.losses.size() / 400);
    for (std::size_t i = 0; i < v.losses.size(); i += stride) pts.push_back({static_cast<double>(i + 1), v.losses[i]});
    if (!v.film.empty()) pts.insert(pts.begin(), {0.0, v.film.front().loss});
    polyline(dl, a, b, pts, steps, top, ImGui::ColorConvertFloat4ToU32(accent_color()), 3.0f);
    // An experiment's other runs, each in its colour, named at the chart's top right.
    float legend_y = a.y + 4;
    const auto name_line = [&](const std::string& name, ImU32 col) {
        if (name.empty()) return;
        const std::string shown = fit_text(name, (b.x - a.x) / 2);
        draw_label(dl, {b.x - ImGui::CalcTextSize(shown.c_str()).x - 4, legend_y}, col, shown);
        legend_y += ImGui::GetTextLineHeight();
    };
    name_line(v.name, ImGui::ColorConvertFloat4ToU32(accent_color()));
    for (std::size_t k = 0; k < v.beside.size(); ++k) {
        std::vector<std::pair<double, double>> other;
        const std::vector<double>& ls = v.beside[k].losses;
        for (std::size_t i = 0; i < ls.size(); i += stride) other.push_back({static_cast<double>(i + 1), ls[i]});
        const ImU32 col = head_color(static_cast<int>(k) + 2);
        polyline(dl, a, b, other, steps, top, col, 2.5f);
        name_line(v.beside[k].name, col);
    }
    y_labels(dl, a, b, top, 2);
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const std::string x = "step " + std::to_string(v.config.steps);
    draw_label(dl, {b.x - ImGui::CalcTextSize(x.c_str()).x, b.y + 2}, text, x);
    draw_label(dl, {a.x, b.y + 2}, text, "0");
    if (v.cliff > 0) {
        const float cx = a.x + static_cast<float>(static_cast<double>(v.cliff) / steps) * (b.x - a.x);
        dl->AddLine({cx, a.y}, {cx, b.y}, ImGui::ColorConvertFloat4ToU32(warning_ink()), 2.0f);
        const std::string c = "cliff: step " + std::to_string(v.cliff);
        const float w = ImGui::CalcTextSize(c.c_str()).x;
        draw_label(dl, {std::min(cx + 6, b.x - w), a.y + 4}, ImGui::ColorConvertFloat4ToU32(warning_ink()), c);
    }
    if (const TrainSnapshot* s = shown_snapshot(v); s && v.shown_snapshot >= 0) {
        const float sx = a.x + static_cast<float>(static_cast<double>(s->step) / steps) * (b.x - a.x);
        dl->AddLine({sx, a.y}, {sx, b.y}, neutral_color(dark), 1.5f);
    }
}

// Each head's score at its job against the step, one line a head in its colour; 0.8 dashed.
void score_chart(const TrainView& v, ImVec2 p0, ImVec2 p1, bool dark) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const std::pair<ImVec2, ImVec2> area = chart_frame(dl, p0, p1, fit_text("each head's score (0.8 dashed)", p1.x - p0.x), dark);
    const ImVec2 a = area.first, b = area.second;  // not a structured binding: a lambda below reads them
    const double steps = static_cast<double>(std::max<std::int64_t>(v.config.steps, 1));
    const float y8 = b.y - 0.8f * (b.y - a.y);
    for (float x = a.x; x < b.x; x += 12) dl->AddLine({x, y8}, {std::min(x + 6, b.x), y8}, neutral_color(dark, 0.7f), 1.5f);
    const std::size_t heads = v.film.empty() ? 0 : v.film.front().heads.size();
    for (std::size_t h = 0; h < heads; ++h) {
        std::vector<std::pair<double, double>> pts;
        for (const TrainSnapshot& s : v.film) pts.push_back({static_cast<double>(s.step), s.heads[h].score});
        polyline(dl, a, b, pts, steps, 1.0, head_color(static_cast<int>(h)), 3.0f);
    }
    y_labels(dl, a, b, 1.0, 1);
}

// Head h of layer l's attention weights on the probe sequence, the cells its job needs
// outlined; its name, score and gradient size above.
void head_map(const TrainView& v, const TrainSnapshot& s, std::int64_t l, std::int64_t h, ImVec2 p0, float side, bool dark) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const std::int64_t H = v.config.heads, T = v.probe.tokens;
    const HeadReport& r = s.heads[static_cast<std::size_t>(l * H + h)];
    const std::string score = format_fixed(r.score, 2), grad_norm = format_number(r.grad_norm, 2);
    const std::string title = first_fitting({r.name + "  score " + score, r.name + " " + score}, side);
    // One word for every map: the long one where it fits with the widest number.
    const std::string word = ImGui::CalcTextSize("gradient 0.0000").x <= side ? "gradient " : "grad ";
    const std::string grad = fit_text(word + grad_norm, side);
    const float line = ImGui::GetTextLineHeightWithSpacing();
    draw_label(dl, p0, head_ink(static_cast<int>(l * H + h)), title);
    draw_label(dl, {p0.x, p0.y + line}, ImGui::GetColorU32(ImGuiCol_Text), grad);
    const float top = p0.y + 2 * line;
    const float cell = side / static_cast<float>(T);
    const std::vector<float>& w = s.weights[static_cast<std::size_t>(l)];
    for (std::int64_t i = 0; i < T; ++i)
        for (std::int64_t j = 0; j <= i; ++j) {
            const float x = p0.x + static_cast<float>(j) * cell, y = top + static_cast<float>(i) * cell;
            dl->AddRectFilled({x, y}, {x + cell, y + cell}, sequential_color(w[static_cast<std::size_t>((h * T + i) * T + j)]));
        }
    const ImU32 job = ImGui::ColorConvertFloat4ToU32(right_ink());
    for (std::int64_t i = 0; i < T; ++i)
        for (std::int64_t j : job_keys(v.config.task, v.probe, l, 0, i)) {
            const float x = p0.x + static_cast<float>(j) * cell, y = top + static_cast<float>(i) * cell;
            dl->AddRect({x, y}, {x + cell, y + cell}, job, 0, 0, std::max(1.5f, cell * 0.12f));
        }
    dl->AddRect({p0.x, top}, {p0.x + side, top + side}, neutral_color(dark, 0.5f));
}

void header(TrainView& v) {
    const TrainSnapshot* s = shown_snapshot(v);
    std::string line = std::string("Train: ") + task_name(v.config.task) + ", " + std::to_string(v.config.layers) +
                       (v.config.layers > 1 ? " layers" : " layer") + " x " + std::to_string(v.config.heads) +
                       " heads. Step " + std::to_string(v.trainer ? v.trainer->steps_done() : 0) + " of " +
                       std::to_string(v.config.steps);
    if (v.steps_per_second > 0) line += ", " + format_fixed(v.steps_per_second, 0) + " steps/s";
    if (s) line += ".  Loss " + format_fixed(s->loss, 4) + ", accuracy " + format_fixed(100 * s->accuracy, 0) + "%.";
    text_at_spaces(line);
    const char* run = v.running ? "pause (Space)" : "train (Space)";
    if (ImGui::Button(run)) v.running = !v.running;
    same_line_if_fits(button_width("one step (S)"));
    if (ImGui::Button("one step (S)")) train_some(v, 1, 1e9);
    same_line_if_fits(button_width("again (Home)"));
    if (ImGui::Button("again (Home)")) start_training(v, v.base, v.experiment);
    for (Task t : all_tasks()) {
        same_line_if_fits(toggle_width(task_name(t)));
        if (ImGui::RadioButton(task_name(t), v.config.task == t) && v.config.task != t) {
            TrainConfig c;
            c.task = t;
            c.seed = v.base.seed;
            start_training(v, c, v.experiment);
        }
    }
    // The experiments: the same seed again beside this run, one thing changed.
    for (const std::string& e : std::vector<std::string>{"", "scale", "init", "heads", "ablate"}) {
        const std::string label = e.empty() ? "one run" : "compare " + e;
        same_line_if_fits(toggle_width(label.c_str()));
        if (ImGui::RadioButton(label.c_str(), v.experiment == e) && v.experiment != e) start_training(v, v.base, e);
    }
    same_line_if_fits(button_width("close (N)"));
    if (ImGui::Button("close (N)")) v.shown = false;
    if (!v.stopped.empty()) ImGui::TextColored(error_ink(), "stopped: %s", v.stopped.c_str());
}

}  // namespace

void DrawTrain(AppState& st) {
    TrainView& v = st.training;
    const ImVec2 size = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowPos({0, 0});
    ImGui::SetNextWindowSize(size);
    ImGui::Begin("Train", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    audit_panel("Train");
    header(v);
    const TrainSnapshot* s = shown_snapshot(v);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float pad = ImGui::GetStyle().WindowPadding.x;
    const float W = size.x - origin.x - pad, line = ImGui::GetTextLineHeightWithSpacing();
    const std::string film = s ? "Snapshot at step " + std::to_string(s->step) + " (Left, Right). Outlined: where a head " +
                                     "that does its job looks (" + score_name(v.config.task, v.config.layers - 1) + ")."
                               : std::string();
    const float film_h = ImGui::CalcTextSize(film.c_str(), nullptr, false, W).y;
    const float H = size.y - origin.y - pad - line - film_h - 8;  // the filmstrip's slider and its words below
    if (s && H > 4 * line && W > 200) {
        const float left_w = std::floor(W * 0.42f);
        loss_chart(v, origin, {origin.x + left_w, origin.y + H * 0.55f}, st.dark);
        score_chart(v, {origin.x, origin.y + H * 0.55f + line * 0.5f}, {origin.x + left_w, origin.y + H}, st.dark);
        // The maps: a row a layer, a column a head, as large as the room allows.
        const std::int64_t L = v.config.layers, Hh = v.config.heads;
        const float room_w = W - left_w - 2 * pad, room_h = H;
        const float side = std::max(8.0f, std::min((room_w - (Hh - 1) * pad) / static_cast<float>(Hh),
                                                  room_h / static_cast<float>(L) - 2 * line - pad));
        for (std::int64_t l = 0; l < L; ++l)
            for (std::int64_t h = 0; h < Hh; ++h)
                head_map(v, *s, l, h,
                         {origin.x + left_w + 2 * pad + static_cast<float>(h) * (side + pad),
                          origin.y + static_cast<float>(l) * (side + 2 * line + pad)},
                         side, st.dark);
    }
    ImGui::SetCursorScreenPos({origin.x, origin.y + H + 4});
    int frame = v.shown_snapshot < 0 ? static_cast<int>(v.film.size()) - 1 : v.shown_snapshot;
    ImGui::SetNextItemWidth(W);
    if (ImGui::SliderInt("##film", &frame, 0, std::max(0, static_cast<int>(v.film.size()) - 1), "")) {
        v.shown_snapshot = frame == static_cast<int>(v.film.size()) - 1 ? -1 : frame;
        v.running = false;
    }
    if (s) text_at_spaces(film);
    ImGui::End();
}

}  // namespace headsplit::gui
