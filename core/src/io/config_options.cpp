#include "headsplit/io/config_options.hpp"

#include "headsplit/base/numbers.hpp"
#include "headsplit/engine/config_edit.hpp"
#include "headsplit/io/files.hpp"
#include "headsplit/teaching/presets.hpp"

namespace headsplit {

namespace {

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> config_options(const Config& c) {
    std::vector<std::pair<std::string, std::string>> o;
    if (!c.weights_dir.empty()) {
        // A shipped model (tiny-trained): its name, the text its pieces make, the layer. A
        // checkpoint folder of the user's (--weights) is not spelled.
        if (c.preset.empty() || c.preset.find(' ') != std::string::npos) return {};
        o = {{"preset", c.preset}, {"text", checkpoint_text(c)}, {"layer", std::to_string(c.layer)}, {"mode", mode_name(c.mode)}};
        if (c.mode == Mode::Flash) o.emplace_back("block", std::to_string(c.flash_block()));
        if (!c.causal) o.emplace_back("no-causal", "");
        if (c.backend == BackendKind::Gl) o.emplace_back("backend", "gl");
        return o;
    }
    if (!c.embeddings.empty()) {
        // A preset's own rows (journey's): its name, then the options that keep them. --text,
        // --tokens and --d-in replace the rows, so a configuration with other words or another
        // D_in and the same rows cannot be spelled.
        const Preset* p = find_preset(c.preset);
        if (!p || p->embeddings != c.embeddings || !p->weights.empty()) return {};
        const Config own = config_from_preset(c.preset);
        if (own.tokens != c.tokens || own.d_in != c.d_in || c.batch != 1) return {};
        o.emplace_back("preset", c.preset);
    } else {
        if (!c.preset.empty() && c.preset != "cat-sleeps") o.emplace_back("preset", c.preset);  // its layer count, its name
        // The large presets' t1 .. tN: their count, not their words.
        if (c.batch == 1 && c.num_tokens() > 3 && c.tokens == synthetic_tokens(c.num_tokens()))
            o.emplace_back("tokens", std::to_string(c.num_tokens()));
        else
            for (const std::vector<std::string>& s : c.sentences()) o.emplace_back("text", joined(s));
        o.emplace_back("d-in", std::to_string(c.d_in));
    }
    o.emplace_back("d-out", std::to_string(c.d_out));
    o.emplace_back("heads", std::to_string(c.heads));
    o.emplace_back("mode", mode_name(c.mode));
    o.emplace_back("seed", std::to_string(c.seed));
    if (c.grouped()) o.emplace_back("kv-heads", std::to_string(c.kv_head_count()));
    for (const std::vector<std::string>& s : c.context) o.emplace_back("context", joined(s));
    if (c.d_context > 0) o.emplace_back("d-context", std::to_string(c.d_context));
    if (c.decoding()) o.emplace_back("decode-from", std::to_string(c.decode_from));
    if (c.mode == Mode::Flash) o.emplace_back("block", std::to_string(c.flash_block()));
    if (c.causal && c.cross()) o.emplace_back("causal", "");
    if (!c.causal && !c.cross()) o.emplace_back("no-causal", "");
    if (c.dropout > 0) o.emplace_back("dropout", exact_number(c.dropout));  // the same p, so the same mask
    if (c.qkv_bias) o.emplace_back("qkv-bias", "");
    if (c.scale_first) o.emplace_back("scale-first", "");
    if (!c.out_proj) o.emplace_back("no-out-proj", "");
    if (c.backend == BackendKind::Gl) o.emplace_back("backend", "gl");  // the CPU is the default
    return o;
}

std::string shell_options(const Config& c) {
    std::string o;
    for (const auto& [name, value] : config_options(c))
        o += (o.empty() ? "--" : " --") + name + (value.empty() ? "" : " " + shell_word(value));
    return o;
}

}  // namespace headsplit
