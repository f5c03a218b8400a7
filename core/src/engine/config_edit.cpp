#include "headsplit/engine/config_edit.hpp"

#include <algorithm>
#include <vector>

namespace headsplit {

bool mode_from_name(const std::string& name, Mode* out) {
    for (Mode m : {Mode::Loop, Mode::Split, Mode::Fused, Mode::Flash}) {
        if (name == mode_name(m)) {
            *out = m;
            return true;
        }
    }
    return false;
}

bool backend_from_name(const std::string& name, BackendKind* out) {
    for (BackendKind b : {BackendKind::Cpu, BackendKind::Gl}) {
        if (name == backend_name(b)) {
            *out = b;
            return true;
        }
    }
    return false;
}

std::string divisor_list(std::int64_t n) {
    std::string d;
    for (std::int64_t v : divisors(n)) d += (d.empty() ? "" : ", ") + std::to_string(v);
    return d;
}

bool kv_heads_fit(const Config& c) {
    return c.kv_heads == 0 || (c.heads >= 1 && c.kv_heads >= 1 && c.kv_heads <= c.heads && c.heads % c.kv_heads == 0);
}

namespace {

// The largest divisor of n that is at most `limit` (1 when none is).
std::int64_t divisor_at_most(std::int64_t n, std::int64_t limit) {
    std::int64_t best = 1;
    for (std::int64_t d : divisors(n))
        if (d <= limit) best = d;
    return best;
}

}  // namespace

std::string set_d_out(Config& c, std::int64_t d_out) {
    c.d_out = d_out;
    if (c.heads >= 1 && d_out % c.heads == 0) return "";
    const std::int64_t best = divisor_at_most(d_out, c.heads);
    const std::string why = std::to_string(c.heads) + " heads do not divide D_out = " + std::to_string(d_out) + " (" +
                            std::to_string(d_out) + " / " + std::to_string(c.heads) + " is not whole); now " +
                            std::to_string(best) + " heads";
    const std::string kv = set_heads(c, best);
    return kv.empty() ? why : why + "; " + kv;
}

std::string set_heads(Config& c, std::int64_t heads) {
    c.heads = heads;
    return fit_kv_heads(c);
}

std::string fit_kv_heads(Config& c) {
    if (kv_heads_fit(c) || c.heads < 1) return "";
    const std::int64_t best = divisor_at_most(c.heads, c.kv_heads);
    const std::string why = std::to_string(c.kv_heads) + " KV heads cannot serve " + std::to_string(c.heads) +
                            " heads in equal groups; now " + std::to_string(best) + " KV heads";
    set_kv_heads(c, best);
    return why;
}

void set_kv_heads(Config& c, std::int64_t kv) { c.kv_heads = kv == c.heads ? 0 : kv; }

void set_mode(Config& c, Mode m) {
    if (m == c.mode) return;
    c.block = m == Mode::Flash ? std::max<std::int64_t>(1, c.num_tokens() / 3) : 0;
    if (m == Mode::Flash) c.dropout = 0, c.decode_from = 0;
    c.mode = m;
}

void set_decoding(Config& c, bool on) {
    c.decode_from = on ? std::max<std::int64_t>(1, c.num_tokens() / 2) : 0;
    if (!on) return;
    c.causal = true;
    c.dropout = 0;
    if (c.mode == Mode::Loop) c.mode = Mode::Split;
}

void set_cross(Config& c, bool on) {
    if (on) {
        c.context = {split_words("le chat dort")};
        c.causal = false;  // a decoder sees its whole context
        c.decode_from = 0;
    } else {
        c.context.clear();
        c.d_context = 0;
    }
}

void fit_to_text(Config& c) {
    if (c.mode == Mode::Flash) c.block = std::clamp<std::int64_t>(c.block, 1, std::max<std::int64_t>(1, c.num_tokens()));
    if (c.decoding() && c.decode_from >= c.num_tokens()) c.decode_from = c.num_tokens() >= 2 ? c.num_tokens() - 1 : 0;
}

void set_sentence(Config& c, std::size_t b, const std::string& text) {
    std::vector<std::vector<std::string>> all = c.sentences();
    if (b >= all.size()) all.resize(b + 1);
    all[b] = split_words(text);
    c.set_sentences(std::move(all));
    c.embeddings.clear();
}

void remove_sentence(Config& c, std::size_t b) {
    std::vector<std::vector<std::string>> all = c.sentences();
    if (b >= all.size() || all.size() == 1) return;
    all.erase(all.begin() + static_cast<std::ptrdiff_t>(b));
    c.set_sentences(std::move(all));
    if (c.context.size() > 1 && b < c.context.size()) c.context.erase(c.context.begin() + static_cast<std::ptrdiff_t>(b));
}

std::string checkpoint_text(const Config& c) {
    std::string text;
    for (const std::string& piece : c.tokens) text += piece;
    return text;
}

void set_checkpoint_layer(Config& c, std::int64_t layer) {
    // Pieces become words again (the compute job tokenizes the words, joined by spaces).
    if (!c.embeddings.empty()) c.set_sentences({split_words(checkpoint_text(c))});
    c.embeddings.clear();
    c.layer = layer;
}

void keep_run_settings(const Config& from, Config& to) {
    to.mode = from.mode, to.block = from.block, to.backend = from.backend, to.causal = from.causal;
    to.scale_first = from.scale_first, to.dropout = from.dropout, to.decode_from = from.decode_from;
    to.out_proj = from.out_proj, to.seed = from.seed, to.memory_budget = from.memory_budget;
    to.time_budget = from.time_budget, to.backward = from.backward, to.dout_ones = from.dout_ones;
    fit_to_text(to);
}

}  // namespace headsplit
