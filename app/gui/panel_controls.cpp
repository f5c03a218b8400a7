// Controls: the sentence, sizes, switches and display settings. Any change asks for a new
// trace at once; a refused value shows why inline and the last good trace stays.
#include <algorithm>
#include <cstring>

#include <imgui.h>

#include "headsplit/presets.hpp"
#include "panels.hpp"
#include "style.hpp"

namespace headsplit::gui {

namespace {

std::string joined_tokens(const Config& c) {
    std::string s;
    for (const auto& t : c.tokens) s += (s.empty() ? "" : " ") + t;
    return s;
}

}  // namespace

void DrawControls(AppState& st, double now) {
    (void)now;
    Config& c = st.config;
    bool changed = false;

    section_title("Example");
    if (ImGui::BeginCombo("preset", c.preset.c_str())) {
        for (const Preset& p : presets()) {
            if (ImGui::Selectable(p.name.c_str(), p.name == c.preset)) {
                Config next = config_from_preset(p.name);
                next.mode = c.mode;
                next.backend = c.backend;
                next.causal = c.causal;
                next.seed = c.seed;
                c = next;
                changed = true;
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.about.c_str());
        }
        ImGui::EndCombo();
    }

    static char text[2048];
    static std::string shown;
    const std::string tokens = joined_tokens(c);
    if (shown != tokens && !ImGui::IsAnyItemActive()) {
        std::snprintf(text, sizeof text, "%s", tokens.c_str());
        shown = tokens;
    }
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputTextWithHint("##text", "type a sentence", text, sizeof text)) {
        shown = text;
        c.tokens = split_words(text);
        c.embeddings.clear();
        changed = true;
    }
    ImGui::TextDisabled("%d tokens", static_cast<int>(c.tokens.size()));

    ImGui::Separator();
    section_title("Sizes");
    int d_in = static_cast<int>(c.d_in), d_out = static_cast<int>(c.d_out);
    // The range grows with a preset's sizes up to the largest valid one (ImGui's sliders
    // cannot span more than half of int; a typed value outside it is refused below).
    const int d_max = static_cast<int>(std::clamp<std::int64_t>(std::max({std::int64_t{64}, c.d_in, c.d_out}), 64, kMaxDim));
    if (ImGui::SliderInt("D_in", &d_in, 1, d_max)) {
        c.d_in = d_in;
        c.embeddings.clear();
        changed = true;
    }
    if (ImGui::SliderInt("D_out", &d_out, 1, d_max)) {
        const std::string why = set_d_out(c, d_out);
        if (!why.empty()) st.notice = why;
        changed = true;
    }
    // Only divisors of D_out can be chosen: the slider walks the list of divisors.
    // (A value typed into a slider with Ctrl+click may be anything: no divisors, no slider.)
    const std::vector<std::int64_t> divs = c.d_out <= kMaxDim ? divisors(c.d_out) : std::vector<std::int64_t>{};
    if (divs.empty()) {
        ImGui::TextDisabled("heads: choose a valid D_out first");
    } else {
        if (c.heads < 1 || c.d_out % c.heads != 0)
            ImGui::TextDisabled("heads = %lld does not divide D_out = %lld; pick one below", static_cast<long long>(c.heads),
                                static_cast<long long>(c.d_out));
        int idx = static_cast<int>(std::find(divs.begin(), divs.end(), c.heads) - divs.begin());
        const int last = static_cast<int>(divs.size()) - 1;
        idx = std::clamp(idx, 0, last);
        const std::string heads_label = std::to_string(divs[idx]);
        // AlwaysClamp: a number typed with Ctrl+click is an index here and must stay in range.
        if (ImGui::SliderInt("heads", &idx, 0, last, heads_label.c_str(), ImGuiSliderFlags_AlwaysClamp)) {
            c.heads = divs[std::clamp(idx, 0, last)];
            changed = true;
        }
        ImGui::TextDisabled("head_dim = %lld / %lld = %lld", static_cast<long long>(c.d_out),
                            static_cast<long long>(c.heads), static_cast<long long>(c.head_dim()));
    }
    // Why the others are missing, with the numbers.
    for (std::int64_t h = 2; h <= std::min<std::int64_t>(c.d_out, 8); ++h) {
        if (c.d_out % h == 0) continue;
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("not %lld heads: %lld / %lld = %.2f features per head is not whole", static_cast<long long>(h),
                           static_cast<long long>(c.d_out), static_cast<long long>(h),
                           static_cast<double>(c.d_out) / static_cast<double>(h));
        ImGui::PopStyleColor();
        break;  // one example is enough
    }

    ImGui::Separator();
    section_title("Attention");
    int mode = static_cast<int>(c.mode);
    ImGui::TextUnformatted("mode");
    same_line_if_fits(toggle_width("loop"));
    changed |= ImGui::RadioButton("loop", &mode, static_cast<int>(Mode::Loop));
    same_line_if_fits(toggle_width("split"));
    changed |= ImGui::RadioButton("split", &mode, static_cast<int>(Mode::Split));
    same_line_if_fits(toggle_width("fused"));
    changed |= ImGui::RadioButton("fused", &mode, static_cast<int>(Mode::Fused));
    c.mode = static_cast<Mode>(mode);
    changed |= ImGui::Checkbox("causal mask", &c.causal);
    same_line_if_fits(toggle_width("output projection"));
    changed |= ImGui::Checkbox("output projection", &c.out_proj);
    int order = c.scale_first ? 1 : 0;
    changed |= ImGui::RadioButton("mask, then scale", &order, 0);
    same_line_if_fits(toggle_width("scale, then mask"));
    changed |= ImGui::RadioButton("scale, then mask", &order, 1);
    c.scale_first = order == 1;
    float p = static_cast<float>(c.dropout);
    if (ImGui::SliderFloat("dropout", &p, 0.0f, 0.9f, "%.2f")) {
        c.dropout = p;
        changed = true;
    }
    changed |= ImGui::Checkbox("Q/K/V bias", &c.qkv_bias);
    int seed = static_cast<int>(c.seed);
    if (ImGui::InputInt("seed", &seed)) {
        c.seed = static_cast<std::uint64_t>(std::max(0, seed));
        changed = true;
    }
    int backend = static_cast<int>(c.backend);
    ImGui::TextUnformatted("backend");
    same_line_if_fits(toggle_width("GL"));
    changed |= ImGui::RadioButton("GL", &backend, static_cast<int>(BackendKind::Gl));
    same_line_if_fits(toggle_width("CPU"));
    changed |= ImGui::RadioButton("CPU", &backend, static_cast<int>(BackendKind::Cpu));
    c.backend = static_cast<BackendKind>(backend);

    if (changed) recompute(st);

    // Status: what is on screen, and anything the teacher should know.
    ImGui::Separator();
    if (st.trace) {
        const Config& tc = st.trace->config;
        if (st.shapes_only)
            ImGui::TextWrapped("%s: %zu steps, %lld matmuls, shapes only", mode_name(tc.mode), st.trace->steps.size(),
                               static_cast<long long>(st.trace->total_matmuls()));
        else
        ImGui::TextWrapped("%s on %s: %zu steps, %lld matmuls, %.2f ms", mode_name(tc.mode),
                           tc.backend == BackendKind::Gl ? st.gl_renderer.c_str() : "CPU (OpenBLAS)",
                           st.trace->steps.size(), static_cast<long long>(st.trace->total_matmuls()), st.last_compute_ms);
    }
    if (st.computer->busy()) {
        const char spinner[] = "|/-\\";
        ImGui::TextColored({0.9f, 0.8f, 0.3f, 1}, "%c computing %s ... %.1f s",
                           spinner[static_cast<int>(st.computer->busy_seconds() * 8) % 4],
                           st.computer->busy_what().c_str(), st.computer->busy_seconds());
    }
    if (!st.error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.35f, 0.35f, 1));
        ImGui::TextWrapped("%s (the last good trace stays on screen)", st.error.c_str());
        ImGui::PopStyleColor();
    }
    if (!st.notice.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.75f, 0.25f, 1));
        ImGui::TextWrapped("%s", st.notice.c_str());
        ImGui::PopStyleColor();
    }

    ImGui::Separator();
    section_title("Display");
    // The font atlas is rebuilt when the slider is released, not on every drag step.
    static float pending = -1;
    if (pending < 0) pending = st.font_scale;
    ImGui::SliderFloat("text size", &pending, 0.75f, 2.5f, "%.2fx");
    if (ImGui::IsItemDeactivatedAfterEdit()) {
        st.font_scale = pending;
        st.font_dirty = true;
    }
    if (!ImGui::IsItemActive()) pending = st.font_scale;
    bool quiz = st.quiz.on;
    if (ImGui::Checkbox("predict the shape (Q)", &quiz)) set_quiz(st, quiz);
    if (st.quiz.on) {
        const std::string score = "score " + std::to_string(st.quiz.right) + " / " + std::to_string(st.quiz.asked);
        same_line_if_fits(ImGui::CalcTextSize(score.c_str()).x);
        ImGui::TextUnformatted(score.c_str());
        same_line_if_fits(button_width("reset score"));
        if (ImGui::Button("reset score")) quiz_reset_score(st);
    }
    ImGui::Checkbox("dark theme", &st.dark);
    const char* full = st.fullscreen ? "window (F11)" : "fullscreen (F11)";
    same_line_if_fits(button_width(full));
    if (ImGui::Button(full)) st.fullscreen = !st.fullscreen;
    if (ImGui::Button("save screenshot (F12)")) st.screenshot_requested = true;
    same_line_if_fits(button_width("save handout"));
    if (ImGui::Button("save handout")) st.handout_requested = true;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("a picture per step and a page to print: index.html in a new folder beside the screenshots");
    if (ImGui::Button("save take-home scripts")) st.scripts_requested = true;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("this example as a PyTorch script and a NumPy one that rerun it and check every value");
    if (ImGui::Button("presenter mode (F5)")) st.presenting = true;
    same_line_if_fits(button_width("reset layout"));
    if (ImGui::Button("reset layout")) st.splits = AppState::Splits{};
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (!st.last_screenshot.empty()) ImGui::TextWrapped("%s", st.last_screenshot.c_str());
    ImGui::TextWrapped("keys: Left/Right step, Space play, Home/End, F5 presenter mode; drag the panel borders");
    ImGui::PopStyleColor();
}

}  // namespace headsplit::gui
