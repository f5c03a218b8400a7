// Controls: the sentence, sizes, switches and display settings. Any change asks for a new
// trace at once; a refused value shows why inline and the last good trace stays.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include <imgui.h>

#include "headsplit/model/presets.hpp"
#include "headsplit/backends/cpu_backend.hpp"
#include "gui/panels/panels.hpp"
#include "gui/platform/gl.hpp"
#include "gui/panels/style.hpp"

namespace headsplit::gui {

namespace {

std::string joined(const std::vector<std::string>& words) {
    std::string s;
    for (const auto& t : words) s += (s.empty() ? "" : " ") + t;
    return s;
}

// A text box that shows `words` unless the user is typing in it; true when edited, with the
// text in `out`.
bool words_box(std::map<std::string, PanelState::WordsBox>& boxes, const char* id, const char* hint,
               const std::vector<std::string>& words, std::string& out) {
    PanelState::WordsBox& box = boxes[id];
    const std::string now = joined(words);
    if (box.shown != now && !ImGui::IsAnyItemActive()) {
        std::snprintf(box.text, sizeof box.text, "%s", now.c_str());
        box.shown = now;
    }
    if (!ImGui::InputTextWithHint(id, hint, box.text, sizeof box.text)) return false;
    box.shown = out = box.text;
    return true;
}

// A slider over a list of allowed values; true when one was picked.
bool list_slider(const char* label, const std::vector<std::int64_t>& values, std::int64_t& value) {
    if (values.empty()) return false;
    const int last = static_cast<int>(values.size()) - 1;
    int idx = static_cast<int>(std::find(values.begin(), values.end(), value) - values.begin());
    idx = std::clamp(idx, 0, last);
    const std::string shown = std::to_string(values[static_cast<std::size_t>(idx)]);
    // AlwaysClamp: a number typed with Ctrl+click is an index here and must stay in range.
    if (!ImGui::SliderInt(label, &idx, 0, last, shown.c_str(), ImGuiSliderFlags_AlwaysClamp)) return false;
    value = values[static_cast<std::size_t>(std::clamp(idx, 0, last))];
    return true;
}

// Greyed, broken at spaces only (ImGui's wrapping breaks after a point: "1." / "50").
void dim_wrapped(const std::string& text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    text_at_spaces(text, true);
    ImGui::PopStyleColor();
}

// The preset list: a new example keeps how the run was set to run.
bool draw_preset(AppState& st) {
    Config& c = st.config;
    bool changed = false;
    section_title("Example");
    if (ImGui::BeginCombo("preset", c.preset.c_str())) {
        for (const Preset& p : presets()) {
            if (ImGui::Selectable(p.name.c_str(), p.name == c.preset)) {
                try {  // a checkpoint preset reads its folder, which may be missing or broken
                    Config next = config_from_preset(p.name);
                    keep_run_settings(c, next);
                    c = next;
                    changed = true;
                } catch (const ConfigError& e) {
                    st.error = e.what();
                }
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.about.c_str());
        }
        ImGui::EndCombo();
    }
    return changed;
}

// The sentences of the batch: the first, then one box per further sentence with its remove
// button; shorter ones are padded to the longest. A checkpoint run's tokens are BPE pieces
// (" cat"): its box shows them put back together.
bool draw_sentences(AppState& st, bool checkpoint) {
    Config& c = st.config;
    bool changed = false;
    const std::vector<std::vector<std::string>> sentences = c.sentences();
    std::string typed;
    for (std::size_t b = 0; b < sentences.size(); ++b) {
        const std::string id = "##text" + std::to_string(b);
        const bool removable = b > 0;
        ImGui::SetNextItemWidth(removable ? -button_width("x") - ImGui::GetStyle().ItemSpacing.x : -1);
        const std::vector<std::string> shown = checkpoint && !c.embeddings.empty()
                                                   ? std::vector<std::string>{checkpoint_text(c)}
                                                   : sentences[b];
        if (words_box(st.panels.words_boxes, id.c_str(), b == 0 ? "type a sentence" : "another sentence", shown, typed)) {
            set_sentence(c, b, typed);
            changed = true;
        }
        if (removable) {
            ImGui::SameLine();
            ImGui::PushID(static_cast<int>(b));
            if (ImGui::Button("x")) {
                remove_sentence(c, b);
                changed = true;
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("remove this sentence from the batch");
            ImGui::PopID();
        }
    }
    if (checkpoint) {
        ImGui::TextDisabled("T = %lld tokens (BPE pieces)", static_cast<long long>(c.num_tokens()));
    } else if (ImGui::Button("add a sentence")) {
        // A shorter one, so the padding shows at once: the first sentence without its last word.
        std::vector<std::string> shorter = sentences.front();
        if (shorter.size() > 1) shorter.pop_back();
        set_sentence(c, sentences.size(), joined(shorter));
        changed = true;
    }
    if (!checkpoint) {
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("a batch: B sentences side by side, the shorter ones padded and masked");
        same_line_if_fits(ImGui::CalcTextSize("B = 9, T = 999 tokens").x);
        ImGui::TextDisabled("B = %lld, T = %lld tokens", static_cast<long long>(c.batch), static_cast<long long>(c.num_tokens()));
    }
    return changed;
}

// The sizes (D_in, D_out, heads) or, for a checkpoint, which of its layers runs.
bool draw_sizes(AppState& st, bool checkpoint) {
    Config& c = st.config;
    bool changed = false;
    ImGui::Separator();
    if (checkpoint) {
        // The checkpoint sets the sizes; what can be chosen is which layer's attention runs.
        section_title("Checkpoint");
        dim_wrapped(std::filesystem::path(c.weights_dir).filename().string() + ": D = " + std::to_string(c.d_out) +
                    ", " + std::to_string(c.heads) + " heads of " + std::to_string(c.head_dim()) + ", " +
                    std::to_string(c.layers) + " layers (the checkpoint's sizes)");
        int layer = static_cast<int>(c.layer);
        if (ImGui::SliderInt("layer", &layer, 0, static_cast<int>(std::max<std::int64_t>(0, c.layers - 1)), "%d",
                             ImGuiSliderFlags_AlwaysClamp) &&
            layer != c.layer) {
            set_checkpoint_layer(c, layer);
            changed = true;
        }
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("the attention of this layer, on x = the text run through the layers before it");
    } else {
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
            std::int64_t heads = c.heads;
            if (list_slider("heads", divs, heads)) {
                const std::string why = set_heads(c, heads);
                if (!why.empty()) st.notice = why;
                changed = true;
            }
            // Wrapped at its spaces: cut at the panel's edge, "head_dim = 6" would read as a wrong size.
            dim_wrapped("head_dim = " + std::to_string(c.d_out) + " / " + std::to_string(c.heads) + " = " +
                        std::to_string(c.head_dim()));
        }
        // Why the others are missing, with the numbers.
        for (std::int64_t h = 2; h <= std::min<std::int64_t>(c.d_out, 8); ++h) {
            if (c.d_out % h == 0) continue;
            char why[160];
            std::snprintf(why, sizeof why, "not %lld heads: %lld / %lld = %.2f features per head is not whole", static_cast<long long>(h),
                          static_cast<long long>(c.d_out), static_cast<long long>(h), static_cast<double>(c.d_out) / static_cast<double>(h));
            dim_wrapped(why);
            break;  // one example is enough
        }
    }  // the sizes of a run without a checkpoint
    return changed;
}

// Mode (and flash's tile block), masks, order of scale and mask, dropout, bias, seed.
bool draw_attention(Config& c, bool checkpoint) {
    bool changed = false;
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
    same_line_if_fits(toggle_width("flash"));
    changed |= ImGui::RadioButton("flash", &mode, static_cast<int>(Mode::Flash));
    set_mode(c, static_cast<Mode>(mode));
    if (c.mode == Mode::Flash) {
        int blk = static_cast<int>(c.flash_block());
        const int last = static_cast<int>(std::max<std::int64_t>(1, c.num_tokens()));
        if (ImGui::SliderInt("tile block", &blk, 1, last, "%d", ImGuiSliderFlags_AlwaysClamp)) {
            c.block = std::clamp(blk, 1, last);
            changed = true;
        }
        dim_wrapped(std::to_string(c.query_blocks()) + " x " + std::to_string(c.key_blocks()) + " tiles, " +
                    std::to_string(c.tiles_run()) + " computed");
    }
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
    ImGui::BeginDisabled(checkpoint);  // GPT-2 has them
    changed |= ImGui::Checkbox("Q/K/V bias", &c.qkv_bias);
    ImGui::EndDisabled();
    // The backward pass: not for decoding (inference).
    ImGui::BeginDisabled(c.decoding());
    changed |= ImGui::Checkbox("backward pass (G)", &c.backward);
    ImGui::EndDisabled();
    int seed = static_cast<int>(c.seed);
    if (ImGui::InputInt("seed", &seed)) {
        c.seed = static_cast<std::uint64_t>(std::max(0, seed));
        changed = true;
    }
    if (c.backward && c.decoding()) c.backward = false;  // inference: no gradient flows back
    return changed;
}

// Grouped-query attention, cross-attention, decoding with a KV cache, and the backend.
bool draw_variants(AppState& st, bool checkpoint) {
    Config& c = st.config;
    bool changed = false;
    std::string typed;
    ImGui::Separator();
    section_title("Beyond multi-head attention");
    // Key/value heads: only divisors of heads, each serving heads / KV heads query heads. A
    // checkpoint has one per head and no context: it cannot share them or attend elsewhere.
    if (checkpoint) dim_wrapped("GPT-2 has one key/value head per head and attends to its own text");
    ImGui::BeginDisabled(checkpoint);
    if (c.heads >= 1 && c.d_out % c.heads == 0) {
        std::int64_t kv = c.kv_head_count();
        if (list_slider("KV heads", divisors(c.heads), kv)) {
            set_kv_heads(c, kv);
            changed = true;
        }
        const std::int64_t g = c.kv_head_count();
        dim_wrapped(g == c.heads ? "one key/value head per head: plain multi-head attention"
                    : g == 1    ? "1 key/value head shared by all " + std::to_string(c.heads) + " heads: multi-query attention"
                                : std::to_string(g) + " key/value heads, each shared by " + std::to_string(c.group_size()) +
                                      " heads: grouped-query attention");
        for (std::int64_t k = 2; k < c.heads; ++k) {
            if (c.heads % k == 0) continue;
            dim_wrapped("not " + std::to_string(k) + " KV heads: " + std::to_string(c.heads) + " heads / " +
                        std::to_string(k) + " is not a whole group");
            break;  // one example is enough
        }
    }
    // Cross-attention: keys and values from a second text.
    bool cross = c.cross();
    if (ImGui::Checkbox("cross-attention", &cross)) {
        set_cross(c, cross);
        changed = true;
    }
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("queries from the sentence, keys and values from a context text");
    if (c.cross()) {
        // One context for the whole batch, or one per sentence (from the command line): a box each.
        for (std::size_t k = 0; k < c.context.size(); ++k) {
            if (c.context.size() > 1) ImGui::TextDisabled("context of sentence %d", static_cast<int>(k));
            ImGui::SetNextItemWidth(-1);
            const std::string id = "##context" + std::to_string(k);
            if (words_box(st.panels.words_boxes, id.c_str(), "the context", c.context[k], typed)) {
                c.context[k] = split_words(typed);
                changed = true;
            }
        }
        ImGui::TextDisabled("S = %lld context tokens", static_cast<long long>(c.num_keys()));
    }
    // Decoding: prefill P tokens, then one at a time with a KV cache.
    bool decode = c.decoding();
    if (ImGui::Checkbox("decode with a KV cache", &decode)) {
        set_decoding(c, decode);
        changed = true;
    }
    if (c.decoding()) {
        int from = static_cast<int>(c.decode_from);
        const int last = static_cast<int>(std::max<std::int64_t>(1, c.num_tokens() - 1));
        if (ImGui::SliderInt("prefill P", &from, 1, last, "%d", ImGuiSliderFlags_AlwaysClamp)) {
            c.decode_from = std::clamp(from, 1, last);
            changed = true;
        }
        dim_wrapped("tokens 0 to " + std::to_string(c.decode_from - 1) + " at once, then " +
                    std::to_string(std::max<std::int64_t>(0, c.num_tokens() - c.decode_from)) + " rounds of one token");
    }

    int backend = static_cast<int>(c.backend);
    ImGui::TextUnformatted("backend");
    same_line_if_fits(toggle_width("GL"));
    changed |= ImGui::RadioButton("GL", &backend, static_cast<int>(BackendKind::Gl));
    same_line_if_fits(toggle_width("CPU"));
    changed |= ImGui::RadioButton("CPU", &backend, static_cast<int>(BackendKind::Cpu));
    c.backend = static_cast<BackendKind>(backend);
    if (kInPage) dim_wrapped("in the browser the CPU runs: GL's kernels are compute shaders, which WebGL2 lacks");
    return changed;
}

// What is on screen, what is computing, and anything the teacher should know.
void draw_status(const AppState& st) {
    ImGui::Separator();
    if (st.trace) {
        const Config& tc = st.trace->config;
        const std::string cpu_label = std::string("CPU (") + cpu_matmul_library() + ")";
        char line[512];
        if (st.shapes_only)
            std::snprintf(line, sizeof line, "%s: %zu steps, %lld matmuls, shapes only", mode_name(tc.mode), st.trace->steps.size(),
                          static_cast<long long>(st.trace->total_matmuls()));
        else
            std::snprintf(line, sizeof line, "%s on %s: %zu steps, %lld matmuls, %.2f ms", mode_name(tc.mode),
                          tc.backend == BackendKind::Gl ? st.gl_renderer.c_str() : cpu_label.c_str(), st.trace->steps.size(),
                          static_cast<long long>(st.trace->total_matmuls()), st.last_compute_ms);
        text_at_spaces(line, false);  // a number whole ("0.12 ms")
    }
    if (st.computer->busy()) {
        const char spinner[] = "|/-\\";
        ImGui::TextColored(warning_ink(), "%c computing %s ... %.1f s",
                           spinner[static_cast<int>(st.computer->busy_seconds() * 8) % 4],
                           st.computer->busy_what().c_str(), st.computer->busy_seconds());
    }
    if (!st.error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, error_ink());
        ImGui::TextWrapped("%s (the last good trace stays on screen)", st.error.c_str());
        ImGui::PopStyleColor();
    }
    if (!st.notice.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, warning_ink());
        ImGui::TextWrapped("%s", st.notice.c_str());
        ImGui::PopStyleColor();
    }
}

// Text size, quiz, theme, fullscreen, the saves, presenter mode, the layout.
void draw_display(AppState& st) {
    ImGui::Separator();
    section_title("Display");
    // The font atlas is rebuilt when the slider is released, not on every drag step.
    float& pending = st.panels.pending_font_scale;
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
    audit_last_item("save screenshot (F12)");  // the page's test clicks the three by their place in the report
    same_line_if_fits(button_width("save handout"));
    if (ImGui::Button("save handout")) st.handout_requested = true;
    audit_last_item("save handout");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("a picture per step and a page to print: index.html in a new folder beside the screenshots");
    if (ImGui::Button("save take-home scripts")) st.scripts_requested = true;
    audit_last_item("save take-home scripts");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("this example as a PyTorch script and a NumPy one that rerun it and check every value");
    if (ImGui::Button("presenter mode (F5)")) st.presenting = true;
    same_line_if_fits(button_width("reset layout"));
    if (ImGui::Button("reset layout")) st.splits = AppState::Splits{};
    if (st.lesson.can_start) {  // the live lesson: served on every interface, on the port in the field
        const char* label = st.lesson.on ? "end the lesson" : "start a live lesson";
        if (ImGui::Button(label)) (st.lesson.on ? st.lesson.stop_requested : st.lesson.start_requested) = true;
        audit_last_item(label);
        if (!st.lesson.on && ImGui::IsItemHovered())
            ImGui::SetTooltip("serve the page on this network; students follow your steps in their browsers");
        if (!st.lesson.on) {
            const char* port_label = "lesson port";
            same_line_if_fits(ImGui::CalcTextSize("000000").x + 2 * ImGui::GetStyle().FramePadding.x +
                              ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(port_label).x);
            ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + 2 * ImGui::GetStyle().FramePadding.x);
            ImGui::InputInt(port_label, &st.lesson.port, 0, 0);
            audit_last_item(port_label);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("the port the lesson listens on (0: any free port)");
        }
        if (!st.lesson.said.empty()) ImGui::TextWrapped("%s", st.lesson.said.c_str());
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (!st.last_screenshot.empty()) ImGui::TextWrapped("%s", st.last_screenshot.c_str());
    ImGui::TextWrapped("keys: Left/Right step, Space play, Home/End, F5 presenter mode; drag the panel borders");
    ImGui::PopStyleColor();
}

}  // namespace

float ControlsRowsWidth() {
    float w = 0;
    for (const char* toggle : {"causal mask", "output projection", "mask, then scale", "scale, then mask", "Q/K/V bias",
                               "backward pass (G)",
                               "cross-attention", "decode with a KV cache", "predict the shape (Q)", "dark theme"})
        w = std::max(w, toggle_width(toggle));
    for (const char* button : {"add a sentence", "fullscreen (F11)", "save screenshot (F12)", "save take-home scripts",
                               "presenter mode (F5)", "start a live lesson", "end the lesson"})
        w = std::max(w, button_width(button));
    const ImGuiStyle& style = ImGui::GetStyle();
    return std::ceil(w + 2 * style.WindowPadding.x + style.ScrollbarSize + 1);
}

void DrawControls(AppState& st) {
    audit_panel("controls");  // it scrolls down, never across: a line too wide for it is cut
    // Every widget's label, on its right, whole: the widgets take what the widest leaves (by
    // default ImGui gives them 65% of the column, and a narrow column cut "preset" to "prese").
    float label_w = 0;
    for (const char* label : {"preset", "layer", "D_in", "D_out", "heads", "tile block", "dropout", "seed", "KV heads",
                              "prefill P", "text size"})
        label_w = std::max(label_w, ImGui::CalcTextSize(label).x);
    ImGui::PushItemWidth(-(label_w + ImGui::GetStyle().ItemInnerSpacing.x));
    const bool checkpoint = !st.config.weights_dir.empty();
    bool changed = draw_preset(st);
    changed |= draw_sentences(st, checkpoint);
    changed |= draw_sizes(st, checkpoint);
    changed |= draw_attention(st.config, checkpoint);
    changed |= draw_variants(st, checkpoint);
    if (changed) {
        fit_to_text(st.config);  // a shorter text: the tile block and the prefill within it
        recompute(st);
    }
    draw_status(st);
    draw_display(st);
    ImGui::PopItemWidth();
}


}  // namespace headsplit::gui
