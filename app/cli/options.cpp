#include "cli/options.hpp"

#include "headsplit/model/checkpoint.hpp"
#include "headsplit/engine/config_edit.hpp"

#include "headsplit/engine/engine.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <sstream>
#include <vector>

#include "headsplit/io/terminal.hpp"
#include "headsplit/teaching/narration.hpp"
#include "headsplit/model/presets.hpp"

namespace headsplit::app {

namespace {

std::string list(const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
}


}  // namespace

void refuse_blanks(const char* name, const std::string& value) {
    const auto blank = [](char ch) { return std::isspace(static_cast<unsigned char>(ch)) != 0; };
    if (value.empty() || !(blank(value.front()) || blank(value.back()))) return;
    const auto first = std::find_if_not(value.begin(), value.end(), blank);
    const auto last = std::find_if_not(value.rbegin(), value.rend(), blank).base();
    const std::string bare = first < last ? std::string(first, last) : std::string();
    throw ConfigError(std::string(name) + " " + shown_value(value) + " has a blank before or after it; " +
                      (bare.empty() ? "give a value" : "give the value alone: " + std::string(name) + " " + shown_value(bare)));
}

double parse_real(const char* name, const std::string& value) {
    refuse_blanks(name, value);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (!value.empty() && *end == '\0' && errno == ERANGE)
        throw ConfigError(std::string(name) + " " + value + " is too " + (std::abs(v) < 1 ? "small" : "large") +
                          " for a float (1e-38 to 3e38); use e.g. " + name + " 0.1");
    if (value.empty() || *end != '\0' || !std::isfinite(v))
        throw ConfigError(std::string(name) + " " + shown_value(value) + " is not a number; use e.g. " + name + " 0.1");
    return v;
}

// "2GiB", "512MiB", "1G", "3000000" (bytes).
std::uint64_t parse_bytes(const std::string& value) {
    const char* name = "--memory-budget";
    refuse_blanks(name, value);
    std::size_t i = 0;
    while (i < value.size() && (std::isdigit(static_cast<unsigned char>(value[i])) || value[i] == '.')) ++i;
    const std::string number = value.substr(0, i), unit = value.substr(i);
    double scale = 0;
    if (unit.empty() || unit == "B") scale = 1;
    else if (unit == "K" || unit == "KiB") scale = 1024.0;
    else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
    else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
    char* end = nullptr;
    const double v = number.empty() ? -1 : std::strtod(number.c_str(), &end);
    if (scale == 0 || number.empty() || *end != '\0' || !(v > 0) || v * scale > 1e18)
        throw ConfigError(std::string(name) + " " + shown_value(value) +
                          " is not a size; use e.g. --memory-budget 2GiB (units B, KiB, MiB, GiB)");
    return static_cast<std::uint64_t>(v * scale);
}

std::int64_t parse_count(const char* name, const std::string& value, std::int64_t lo, std::int64_t hi) {
    refuse_blanks(name, value);
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (value.empty() || *end != '\0' || errno == ERANGE)
        throw ConfigError(std::string(name) + " " + shown_value(value) + " is not " + range);
    if (v < lo || v > hi) throw ConfigError(std::string(name) + " " + value + " is out of range; use " + range);
    return v;
}

void add_config_options(CLI::App& cmd, ConfigOptions& o) {
    cmd.add_option("--preset", o.preset, list(preset_names()) + " (default cat-sleeps)");
    o.text_option = cmd.add_option("--text", o.texts,
                                   "the sentence; tokens are its whitespace-separated words. Give it again for a "
                                   "batch: shorter sentences are padded and masked")
                        ->expected(1)
                        ->allow_extra_args(false)
                        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd.add_option("--tokens", o.tokens, "N synthetic tokens t1 .. tN instead of the preset's text");
    cmd.add_option("--d-in", o.d_in, "embedding size of each input token");
    cmd.add_option("--d-out", o.d_out, "size of queries, keys, values and the output");
    cmd.add_option("--heads", o.heads, "number of heads; must divide D_out");
    cmd.add_option("--kv-heads", o.kv_heads,
                   "key/value heads, each shared by heads / N query heads (grouped-query attention; 1: multi-query); "
                   "must divide heads (default: heads)");
    cmd.add_option("--context", o.contexts,
                   "cross-attention: keys and values come from this text; once for the whole batch or once per --text")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd.add_option("--context-tokens", o.context_tokens, "cross-attention with S synthetic context tokens c1 .. cS");
    cmd.add_option("--d-context", o.d_context, "width of a context token (default D_in)");
    cmd.add_option("--decode-from", o.decode_from,
                   "run the first P tokens at once, then one token at a time with a KV cache (0 < P < T)");
    cmd.add_option("--seed", o.seed, "seed of the generated inputs and weights (default 0)");
    cmd.add_option("--weights", o.weights,
                   "a Hugging Face GPT-2 folder (model.safetensors, config.json, vocab.json, merges.txt): its layer's "
                   "attention weights, the text as its BPE tokens, x as that layer's real input");
    cmd.add_option("--layer", o.layer, "the checkpoint's attention layer for --weights (default 0)");
    o.causal_option = cmd.add_flag("--causal,!--no-causal", o.causal,
                                   "mask future tokens (default on; off with --context)");
    cmd.add_option("--mode", o.mode, "loop | split (default) | fused | flash");
    cmd.add_option("--block", o.block,
                   "flash mode's tile side: queries and keys go in blocks of N (1 to T; default " +
                       std::to_string(kDefaultFlashBlock) + ", or ceil(min(T, keys) / 2) when smaller)");
    cmd.add_option("--backend", o.backend, "cpu (default) | gl");
    cmd.add_option("--dropout", o.dropout, "attention dropout probability p in [0, 1) (default 0)");
    cmd.add_flag("--no-out-proj", o.no_out_proj, "leave out the output projection");
    cmd.add_flag("--scale-first", o.scale_first, "divide by sqrt(head_dim) before masking (nanoGPT's order)");
    cmd.add_flag("--qkv-bias", o.qkv_bias, "add a bias to W_query, W_key, W_value (off, as in the seeds)");
    cmd.add_flag("--backward", o.backward,
                 "after the forward, the backward pass: every gradient from d_output back to the weights and x");
    cmd.add_option("--dout", o.dout, "with --backward, the gradient at the output: seeded (default) | ones");
    cmd.add_option("--memory-budget", o.memory_budget, "refuse runs needing more (default 2GiB)");
    cmd.add_option("--time-budget", o.time_budget,
                   "refuse runs estimated to take longer, in seconds (default " +
                       std::to_string(static_cast<int>(kDefaultTimeBudget)) + "; the window shows their shapes)");
    for (const char* name : {"--preset", "--tokens", "--d-in", "--d-out", "--heads", "--seed", "--mode", "--backend",
                             "--dropout", "--memory-budget", "--time-budget", "--kv-heads", "--context-tokens", "--d-context",
                             "--decode-from", "--block", "--weights", "--layer", "--dout"}) {
        cmd.get_option(name)->check(
            [](const std::string& v) { return v.empty() ? std::string("the value is empty") : std::string(); });
    }
}

void progress(std::int64_t done, std::int64_t total, const std::string& what) {
    if (!isatty(STDERR_FILENO)) return;
    const std::int64_t width = 30, filled = total ? done * width / total : width;
    std::fprintf(stderr, "\r[%s%s] %lld/%lld %-50s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str(), static_cast<long long>(done),
                 static_cast<long long>(total), what.c_str());
    if (done == total) std::fprintf(stderr, "\r%*s\r", static_cast<int>(width) + 70, "");
    std::fflush(stderr);
}

CLI::Option* needs_a_path(CLI::Option* option) {
    return option->check(
        [](const std::string& v) { return v.empty() ? std::string("the path is empty; name a file or folder") : std::string(); });
}

namespace {

// The options that choose how a configuration runs, not its sizes: seed, dropout, mode, block,
// backend, memory budget, masks, output projection, order of mask and scale, decoding.
void apply_run_options(const ConfigOptions& o, Config& c) {
    if (!o.seed.empty()) c.seed = static_cast<std::uint64_t>(parse_count("--seed", o.seed, 0, INT64_MAX));
    if (!o.dropout.empty()) c.dropout = parse_real("--dropout", o.dropout);
    if (!o.mode.empty() && !mode_from_name(o.mode, &c.mode))
        throw ConfigError("--mode " + shown_value(o.mode) + " is not a mode; use loop, split, fused or flash");
    if (!o.block.empty()) c.block = parse_count("--block", o.block, 1, kMaxTokens);
    if (!o.backend.empty() && !backend_from_name(o.backend, &c.backend))
        throw ConfigError("--backend " + shown_value(o.backend) + " is not a backend; use cpu or gl");
    if (!o.memory_budget.empty()) c.memory_budget = parse_bytes(o.memory_budget);
    if (!o.time_budget.empty()) c.time_budget = static_cast<double>(parse_count("--time-budget", o.time_budget, 1, 86400));
    // Cross-attention sees the whole context: no causal mask unless --causal is given.
    c.causal = c.cross() && (!o.causal_option || o.causal_option->count() == 0) ? false : o.causal;
    c.out_proj = !o.no_out_proj;
    c.scale_first = o.scale_first;
    if (!o.decode_from.empty()) c.decode_from = parse_count("--decode-from", o.decode_from, 1, kMaxTokens);
    c.backward = o.backward;
    if (!o.dout.empty()) {
        if (o.dout != "seeded" && o.dout != "ones")
            throw ConfigError("--dout " + shown_value(o.dout) + " is not a gradient; use seeded or ones");
        if (!o.backward) throw ConfigError("--dout is the gradient the backward pass starts from; add --backward");
        c.dout_ones = o.dout == "ones";
    }
}

}  // namespace

CheckedConfig make_config(const ConfigOptions& o) {
    const Preset* preset = find_preset(o.preset.empty() ? "cat-sleeps" : o.preset);
    const bool shipped = preset && !preset->weights.empty();  // a preset that opens a shipped checkpoint
    if (o.weights.empty() && !o.layer.empty() && !shipped)
        throw ConfigError("--layer picks a layer of a checkpoint; give --weights DIR too (or --preset tiny-trained)");
    if (!o.weights.empty() || shipped) {
        // The checkpoint fixes the sizes, heads, biases and tokens; the rest may be chosen.
        const std::string source = o.weights.empty() ? "--preset " + o.preset : std::string("--weights");
        const std::pair<const char*, bool> fixed[] = {
            {"--tokens", !o.tokens.empty()},   {"--d-in", !o.d_in.empty()},        {"--d-out", !o.d_out.empty()},
            {"--heads", !o.heads.empty()},     {"--kv-heads", !o.kv_heads.empty()}, {"--context", !o.contexts.empty()},
            {"--context-tokens", !o.context_tokens.empty()}, {"--d-context", !o.d_context.empty()},
            {"--qkv-bias", o.qkv_bias},        {"--preset", !o.weights.empty() && !o.preset.empty() && o.preset != "cat-sleeps"}};
        for (const auto& [name, given] : fixed)
            if (given) throw ConfigError(std::string(name) + " cannot be used with " + source + ": the checkpoint sets it");
        if (o.texts.size() > 1) throw ConfigError(source + " runs one sentence; give one --text");
        const std::string text = o.texts.empty() ? "" : o.texts.front();
        if (!o.texts.empty() && split_words(text).empty())  // not the model's own sentence in its place
            throw ConfigError("--text " + shown_value(text) + " has no words; give at least one, e.g. --text \"the cat sleeps\"");
        const std::int64_t layer = o.layer.empty() ? -1 : parse_count("--layer", o.layer, 0, 1 << 20);
        Config c = o.weights.empty() ? config_from_preset(o.preset, text, layer)
                                     : gpt2_config(o.weights, text.empty() ? "the cat sleeps" : text, std::max<std::int64_t>(layer, 0));
        apply_run_options(o, c);
        return check_config(c, narration_bytes);
    }
    Config c = config_from_preset(o.preset);
    if (!o.texts.empty() && !o.tokens.empty())
        throw ConfigError("--text and --tokens both choose the tokens; give one of them");
    if (!o.texts.empty()) {
        std::vector<std::vector<std::string>> sentences;
        for (const std::string& text : o.texts) {
            sentences.push_back(split_words(text));
            if (sentences.back().empty())
                throw ConfigError("--text " + shown_value(text) + " has no words; give at least one, e.g. --text \"the cat sleeps\"");
        }
        c.set_sentences(std::move(sentences));
        c.embeddings.clear();
    }
    if (!o.tokens.empty()) {
        c.set_sentences({synthetic_tokens(parse_count("--tokens", o.tokens, 1, kMaxTokens))});
        c.embeddings.clear();
    }
    if (!o.contexts.empty() && !o.context_tokens.empty())
        throw ConfigError("--context and --context-tokens both choose the context; give one of them");
    for (const std::string& text : o.contexts) {
        c.context.push_back(split_words(text));
        if (c.context.back().empty())
            throw ConfigError("--context " + shown_value(text) + " has no words; give at least one, e.g. --context \"le chat dort\"");
    }
    if (!o.context_tokens.empty()) {
        std::vector<std::string> seq = synthetic_tokens(parse_count("--context-tokens", o.context_tokens, 1, kMaxTokens));
        for (std::string& t : seq) t[0] = 'c';
        c.context = {seq};
    }
    if (!o.d_context.empty()) c.d_context = parse_count("--d-context", o.d_context, 1, kMaxDim);
    if (!o.kv_heads.empty()) {
        const std::int64_t heads = o.heads.empty() ? c.heads : parse_count("--heads", o.heads, 1, kMaxDim);
        c.kv_heads = parse_count("--kv-heads", o.kv_heads, 0, kMaxDim);
        if (c.kv_heads == 0)
            throw ConfigError("--kv-heads 0 leaves the queries no keys; use a divisor of heads = " + std::to_string(heads) +
                              ": " + divisor_list(heads) + " (" + std::to_string(heads) +
                              " is plain multi-head attention, 1 is multi-query)");
    }
    if (!o.d_in.empty()) {
        c.d_in = parse_count("--d-in", o.d_in, 1, kMaxDim);
        c.embeddings.clear();
    }
    if (!o.d_out.empty()) c.d_out = parse_count("--d-out", o.d_out, 1, kMaxDim);
    if (!o.heads.empty()) c.heads = parse_count("--heads", o.heads, 1, kMaxDim);
    apply_run_options(o, c);
    c.qkv_bias = o.qkv_bias;
    // The window fits the key/value heads to a new head count (fit_kv_heads); an option the
    // user typed is refused instead, with the divisors that would work.
    if (!o.heads.empty() && o.kv_heads.empty() && c.heads >= 1 && c.d_out % c.heads == 0 && !kv_heads_fit(c))
        throw ConfigError("preset " + c.preset + " shares " + std::to_string(c.kv_heads) +
                          " key/value heads, which cannot serve --heads " + o.heads +
                          " in equal groups; give --kv-heads too, a divisor of " + o.heads + ": " + divisor_list(c.heads));
    // The one validation entry: every value, and the memory estimate with the words every
    // subcommand's trace is narrated with (run_traced).
    return check_config(c, narration_bytes);
}

void refuse_backward(const Config& c, const std::string& where) {
    if (c.backward)
        throw ConfigError("--backward is not shown by " + where +
                          " yet; headsplit trace --backward computes and prints it (--json FILE keeps every gradient)");
}

std::string one_line(std::string s) {
    for (auto& ch : s)
        if (ch == '\n') ch = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

std::string command_line_problem(const CLI::ParseError& e, const std::string& hint) {
    std::string msg = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {  // name the first three extras, count the rest
        const auto colon = msg.find(": ");
        std::istringstream in(colon == std::string::npos ? "" : msg.substr(colon + 2));
        std::vector<std::string> extra;
        for (std::string w; in >> w;) extra.push_back(w.size() > 40 ? w.substr(0, 40) + "..." : w);
        if (extra.size() > 3)
            msg = msg.substr(0, colon + 2) + extra[0] + " " + extra[1] + " " + extra[2] + " and " +
                  std::to_string(extra.size() - 3) + " more";
    }
    // CLI11 says "--heads: 1 required TEXT missing"; say it plainly.
    const auto colon = msg.find(':');
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && msg.rfind("--", 0) == 0 && colon != std::string::npos &&
        msg.find("missing") != std::string::npos)
        msg = msg.substr(0, colon) + " needs a value";
    return one_line(msg + " " + hint);
}

}  // namespace headsplit::app
