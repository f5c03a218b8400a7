#include "headsplit/io/config_options.hpp"

#include <filesystem>
#include <system_error>

#include "headsplit/base/numbers.hpp"
#include "headsplit/engine/config_edit.hpp"
#include "headsplit/formats/files.hpp"
#include "headsplit/model/presets.hpp"

namespace headsplit {

namespace {

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

// A checkpoint's configuration: `source` (the shipped model's name, or its folder), the text
// its pieces make, the layer, and what was chosen on top of them.
std::vector<std::pair<std::string, std::string>> checkpoint_options(const Config& c, std::pair<std::string, std::string> source) {
    std::vector<std::pair<std::string, std::string>> o = {
        std::move(source), {"text", checkpoint_text(c)}, {"layer", std::to_string(c.layer)}, {"mode", mode_name(c.mode)}};
    if (c.mode == Mode::Flash) o.emplace_back("block", std::to_string(c.flash_block()));
    if (!c.causal) o.emplace_back("no-causal", "");
    if (c.decoding()) o.emplace_back("decode-from", std::to_string(c.decode_from));
    if (c.dropout > 0) o.emplace_back("dropout", exact_number(c.dropout)), o.emplace_back("seed", std::to_string(c.seed));
    if (c.scale_first) o.emplace_back("scale-first", "");
    if (!c.out_proj) o.emplace_back("no-out-proj", "");
    if (c.backward) o.emplace_back("backward", "");
    if (c.dout_ones) o.emplace_back("dout", "ones");
    if (c.backend == BackendKind::Gl) o.emplace_back("backend", "gl");
    return o;
}

// Whether the checkpoint is a shipped preset's (tiny-trained), not a folder the user named.
bool shipped_checkpoint(const Config& c) {
    const Preset* p = find_preset(c.preset);
    return p && !p->weights.empty();
}

// The checkpoint folder as an absolute path, so that a line printed for later still finds it.
std::string absolute_folder(const std::string& dir) {
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::absolute(dir, ec);
    return ec ? dir : p.lexically_normal().string();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> config_options(const Config& c) {
    std::vector<std::pair<std::string, std::string>> o;
    if (!c.weights_dir.empty()) {
        // A shipped model (tiny-trained): its name. A checkpoint folder of the user's
        // (--weights) is not spelled: the page cannot open a folder (command_options can).
        if (!shipped_checkpoint(c)) return {};
        return checkpoint_options(c, {"preset", c.preset});
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
    if (c.backward) o.emplace_back("backward", "");
    if (c.dout_ones) o.emplace_back("dout", "ones");
    if (c.backend == BackendKind::Gl) o.emplace_back("backend", "gl");  // the CPU is the default
    return o;
}

std::vector<std::pair<std::string, std::string>> command_options(const Config& c) {
    if (!c.weights_dir.empty() && !shipped_checkpoint(c)) return checkpoint_options(c, {"weights", absolute_folder(c.weights_dir)});
    return config_options(c);
}

std::string shell_options(const Config& c) {
    std::string o;
    for (const auto& [name, value] : command_options(c))
        o += (o.empty() ? "--" : " --") + name + (value.empty() ? "" : " " + shell_word(value));
    return o;
}

std::string weights_source(const Config& c) {
    if (c.weights_dir.empty()) return "random, from seed " + std::to_string(c.seed);
    const std::string layer = "layer " + std::to_string(c.layer) + " of " + std::to_string(c.layers);
    if (shipped_checkpoint(c))
        return "the " + c.preset + " preset: the GPT-2 checkpoint shipped with HeadSplit (" + absolute_folder(c.weights_dir) +
               "), " + layer;
    return "the GPT-2 checkpoint in " + absolute_folder(c.weights_dir) + ", " + layer;
}

}  // namespace headsplit
