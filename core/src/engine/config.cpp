#include "headsplit/engine/config.hpp"

#include "char_class.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/base/utf8.hpp"
#include "headsplit/engine/config_edit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace headsplit {

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::Loop: return "loop";
        case Mode::Split: return "split";
        case Mode::Fused: return "fused";
        case Mode::Flash: return "flash";
    }
    return "?";
}

const char* const kPadToken = "<pad>";

std::int64_t Config::flash_block() const {
    if (block > 0) return std::max<std::int64_t>(1, std::min(block, num_tokens()));
    const std::int64_t shorter = std::min(num_tokens(), num_keys());
    return std::max<std::int64_t>(1, std::min(kDefaultFlashBlock, (shorter + 1) / 2));
}
std::int64_t Config::query_blocks() const { return (num_tokens() + flash_block() - 1) / flash_block(); }
std::int64_t Config::key_blocks() const { return (num_keys() + flash_block() - 1) / flash_block(); }
bool Config::tile_runs(std::int64_t i, std::int64_t j) const {
    // The tile's first key, j * block, after its last query, (i + 1) * block - 1.
    return !causal || j * flash_block() <= std::min((i + 1) * flash_block(), num_tokens()) - 1;
}
std::int64_t Config::tiles_run() const {
    // Per query block, the key blocks tile_runs() lets through are a prefix: one division a
    // row (the window asks every frame, gpt2-xl's flash block 1 has 8192 x 8192 tiles).
    const std::int64_t b = flash_block(), rows = query_blocks(), cols = key_blocks(), T = num_tokens();
    if (!causal) return rows * cols;
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < rows; ++i) n += std::min(cols, (std::min((i + 1) * b, T) - 1) / b + 1);
    return n;
}

const char* scale_name(Scale s) {
    switch (s) {
        case Scale::SqrtHeadDim: return "sqrt";
        case Scale::HeadDim: return "head_dim";
        case Scale::None: return "none";
    }
    return "?";
}

float Config::scale_factor() const {
    const double hd = static_cast<double>(head_dim());
    switch (scale) {
        case Scale::SqrtHeadDim: return static_cast<float>(1.0 / std::sqrt(hd));
        case Scale::HeadDim: return static_cast<float>(1.0 / hd);
        case Scale::None: break;
    }
    return 1.0f;
}

std::int64_t Config::num_tokens() const {
    std::size_t t = tokens.size();
    for (const auto& s : batch_tokens) t = std::max(t, s.size());
    return static_cast<std::int64_t>(t);
}

std::vector<std::vector<std::string>> Config::sentences() const {
    if (batch_tokens.empty()) return {tokens};
    return batch_tokens;
}

void Config::set_sentences(std::vector<std::vector<std::string>> all) {
    tokens = all.empty() ? std::vector<std::string>{} : all.front();
    batch = std::max<std::int64_t>(1, static_cast<std::int64_t>(all.size()));
    if (all.size() > 1) batch_tokens = std::move(all);
    else batch_tokens.clear();
}

std::string Config::token_at(std::int64_t b, std::int64_t t) const {
    const std::vector<std::string>& s = batch_tokens.empty() ? tokens : batch_tokens.at(static_cast<std::size_t>(b));
    return t < static_cast<std::int64_t>(s.size()) ? s[static_cast<std::size_t>(t)] : kPadToken;
}

std::int64_t Config::num_keys() const {
    if (!cross()) return num_tokens();
    std::size_t s = 0;
    for (const auto& seq : context) s = std::max(s, seq.size());
    return static_cast<std::int64_t>(s);
}

std::vector<std::string> Config::key_tokens(std::int64_t b) const {
    const std::int64_t S = num_keys();
    std::vector<std::string> out;
    if (cross()) {
        const auto& seq = context.size() == 1 ? context.front() : context.at(static_cast<std::size_t>(b));
        for (std::int64_t j = 0; j < S; ++j)
            out.push_back(j < static_cast<std::int64_t>(seq.size()) ? seq[static_cast<std::size_t>(j)] : kPadToken);
        return out;
    }
    for (std::int64_t j = 0; j < S; ++j) out.push_back(token_at(b, j));
    return out;
}

std::int64_t Config::key_length(std::int64_t b) const {
    if (cross())
        return static_cast<std::int64_t>(
            (context.size() == 1 ? context.front() : context.at(static_cast<std::size_t>(b))).size());
    return static_cast<std::int64_t>(
        (batch_tokens.empty() ? tokens : batch_tokens.at(static_cast<std::size_t>(b))).size());
}

bool Config::padded() const {
    const std::int64_t S = num_keys();
    for (std::int64_t b = 0; b < batch; ++b)
        if (key_length(b) != S) return true;
    return false;
}

ParamCounts attention_params(const Config& c) {
    ParamCounts p;
    const std::int64_t kv = c.kv_width();
    p.query = c.d_out * c.d_in + (c.qkv_bias ? c.d_out : 0);
    p.key = kv * c.key_dim() + (c.qkv_bias ? kv : 0);
    p.value = p.key;
    p.out = c.out_proj ? c.d_out * c.d_out + c.d_out : 0;
    return p;
}

std::int64_t kv_cache_bytes_per_token(const Config& c, int bytes_per_value) {
    return 2 * c.kv_width() * bytes_per_value;
}

std::int64_t model_kv_cache_bytes_per_token(const Config& c, int bytes_per_value) {
    return c.layers * kv_cache_bytes_per_token(c, bytes_per_value);
}

std::vector<std::string> split_words(const std::string& text) {
    // Words are separated by ASCII's spaces (as isspace), Unicode's space separators (Zs), the
    // line and paragraph separators, and the zero-width spaces and joiners that show nothing
    // between words (U+200B, U+2060, U+180E, U+FEFF). NEL (U+0085) is White_Space but a C1
    // control, refused inside a word, and so separates nothing.
    const auto separates = [](char32_t u) {
        return u == ' ' || (u >= '\t' && u <= '\r') || u == 0x00A0 || u == 0x1680 || (u >= 0x2000 && u <= 0x200B) ||
               u == 0x2028 || u == 0x2029 || u == 0x202F || u == 0x205F || u == 0x2060 || u == 0x3000 || u == 0x180E ||
               u == 0xFEFF;
    };
    std::vector<std::string> words;
    std::size_t start = 0;  // of the word being read
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t at = i;
        const char32_t u = next_code_point(text, i);
        if (u == kNotUtf8) {
            ++i;  // a stray byte belongs to its word (the checks name it)
            continue;
        }
        if (!separates(u)) continue;
        if (at > start) words.push_back(text.substr(start, at - start));
        start = i;
    }
    if (text.size() > start) words.push_back(text.substr(start));
    return words;
}

std::vector<std::string> synthetic_tokens(std::int64_t n) {
    std::vector<std::string> out;
    for (std::int64_t i = 1; i <= n; ++i) out.push_back("t" + std::to_string(i));
    return out;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
    std::vector<std::int64_t> low, high;
    for (std::int64_t d = 1; n >= 1 && d <= n / d; ++d)
        if (n % d == 0) {
            low.push_back(d);
            if (d != n / d) high.push_back(n / d);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

std::string human_bytes(double bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5) {
        bytes /= 1024.0;
        ++u;
    }
    std::ostringstream s;
    s.precision(u == 0 ? 0 : (bytes < 10 ? 2 : 1));
    s << std::fixed << bytes << ' ' << units[u];
    return s.str();
}

void check_block_needs_flash(std::int64_t block, Mode mode, const std::string& add_flash) {
    if (block != 0 && mode != Mode::Flash)
        throw ConfigError("block = " + std::to_string(block) + " is the tile side of flash mode, but the mode is " +
                          mode_name(mode) + "; " + add_flash + " or drop --block");
}

namespace {

void check_dim(const char* what, std::int64_t v) {
    if (v < 1 || v > kMaxDim)
        throw ConfigError(std::string(what) + " = " + std::to_string(v) +
                          " is not a valid size; use a whole number from 1 to " +
                          std::to_string(kMaxDim));
}

std::string code_point_name(char32_t u) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(u));
    return hex;
}

// Text typed must be UTF-8 and hold no control character (a terminal acts on some) and no
// direction control (it turns the text around it, in a handout or a title). `which` names the
// text in the refusal ("word 2 of the text"). `spaces`: the ASCII spaces among the control
// characters (tab, newline, return ...) are let through, as in a checkpoint's text, which its
// tokenizer reads whole. With `must_show`, the text must also draw something: only spaces and
// invisible characters (Unicode's White_Space, Default_Ignorable_Code_Point and format
// characters) are refused.
void check_typed(const std::string& text, const std::string& which, bool must_show, bool spaces) {
    const std::size_t bad = first_bad_utf8(text);
    if (bad != std::string::npos)
        throw ConfigError(which + " has bytes that are not UTF-8 (" + bad_bytes(text, bad) + " at byte " +
                          std::to_string(bad) + "); give the text as UTF-8");
    bool shows = false;
    std::size_t run = 0, word = 0;  // the characters of the word being read, and its number
    for (std::size_t i = 0; i < text.size();) {
        const char32_t u = next_code_point(text, i);
        // Printable ASCII shows and is neither; only the rest is asked of Unicode's properties.
        const unsigned cls = u > 0x20 && u < 0x7F ? kShows : char_class(u);
        const bool ascii_space = u == ' ' || u == '\t' || u == '\n' || u == '\v' || u == '\f' || u == '\r';
        run = ascii_space ? 0 : run + 1;
        word += run == 1 ? 1 : 0;
        if (run > kMaxWordLength)
            throw ConfigError((spaces ? "word " + std::to_string(word) + " of " + which : which) + " is longer than " +
                              std::to_string(kMaxWordLength) + " characters; separate the words with spaces");
        if ((cls & kControl) && !(spaces && ascii_space))
            throw ConfigError(which + " holds " + code_point_name(u) + ", a control character; leave it out");
        if (cls & kReorders)
            throw ConfigError(which + " holds " + code_point_name(u) +
                              ", a direction control that turns the text around it; leave it out");
        shows = shows || !(cls & kNoInk);
    }
    if (must_show && !shows) {
        std::string points;  // named only when refused
        for (std::size_t i = 0; i < text.size();) points += (points.empty() ? "" : " ") + code_point_name(next_code_point(text, i));
        throw ConfigError(which + " (" + points +
                          ") shows nothing: only spaces or invisible characters; separate words with ordinary spaces");
    }
}

void check_words(const std::vector<std::string>& words, const std::string& where) {
    for (std::size_t w = 0; w < words.size(); ++w)
        check_typed(words[w], "word " + std::to_string(w + 1) + " of " + where, true, false);
}

// The text: its sentences and tokens, within the limits.
void validate_text(const Config& c) {
    if (c.tokens.empty())
        throw ConfigError("the text has no tokens; give at least one word, e.g. --text \"the cat sleeps\"");
    if (c.num_tokens() > kMaxTokens)
        throw ConfigError("the text has " + std::to_string(c.num_tokens()) +
                          " tokens; at most " + std::to_string(kMaxTokens) + " fit");
    const std::int64_t sentences = c.batch_tokens.empty() ? 1 : static_cast<std::int64_t>(c.batch_tokens.size());
    if (c.batch != sentences || (!c.batch_tokens.empty() && c.batch_tokens.front() != c.tokens))
        throw ConfigError("batch = " + std::to_string(c.batch) + " but the text has " + std::to_string(sentences) +
                          " sentences; set the sentences with set_sentences()");
    for (std::size_t b = 0; b < c.batch_tokens.size(); ++b)
        if (c.batch_tokens[b].empty())
            throw ConfigError("sentence " + std::to_string(b + 1) +
                              " of the batch has no tokens; give every --text at least one word");
    if (c.weights_dir.empty()) {
        const std::vector<std::vector<std::string>> all = c.sentences();
        for (std::size_t b = 0; b < all.size(); ++b)
            check_words(all[b], all.size() > 1 ? "sentence " + std::to_string(b + 1) : std::string("the text"));
    } else {
        // A checkpoint's tokens are its tokenizer's pieces (one may cut a character in two):
        // the text they spell is what was typed.
        check_typed(checkpoint_text(c), "the text", false, true);
    }
    if (c.batch * c.num_tokens() > kMaxTokens)
        throw ConfigError("the batch has " + std::to_string(c.batch) + " x " + std::to_string(c.num_tokens()) +
                          " token rows; at most " + std::to_string(kMaxTokens) + " fit");
}

// The dimensions, the heads, the key/value heads and dropout's p.
void validate_sizes(const Config& c) {
    check_dim("D_in", c.d_in);
    check_dim("D_out", c.d_out);
    if (c.heads < 1)
        throw ConfigError("heads = " + std::to_string(c.heads) + " is not a valid head count; heads that divide " +
                          std::to_string(c.d_out) + ": " + divisor_list(c.d_out));
    if (c.d_out % c.heads != 0) {
        std::ostringstream ratio;
        ratio << static_cast<double>(c.d_out) / static_cast<double>(c.heads);
        throw ConfigError("D_out = " + std::to_string(c.d_out) + " cannot be split into " +
                          std::to_string(c.heads) + " heads (" + std::to_string(c.d_out) + " / " +
                          std::to_string(c.heads) + " = " + ratio.str() + "); heads that divide " +
                          std::to_string(c.d_out) + ": " + divisor_list(c.d_out));
    }
    if (!(c.dropout >= 0.0 && c.dropout < 1.0)) {
        std::ostringstream p;
        p << c.dropout;
        throw ConfigError("dropout p = " + p.str() +
                          " is outside [0, 1); use 0 for none or a probability such as 0.1");
    }
    // The mask compares float32 draws with p as a float: a p that rounds to 1 would drop every
    // weight, one that rounds to 0 none (with a dropout step that drops nothing).
    if (static_cast<float>(c.dropout) >= 1.0f || (c.dropout > 0 && static_cast<float>(c.dropout) < 1e-7f)) {
        throw ConfigError("dropout p = " + exact_number(c.dropout) + " is too close to " + (c.dropout > 0.5 ? "1" : "0") +
                          " for a float32 probability; use 0 for none or a p from 1e-07 to 0.9999999");
    }
    if (!kv_heads_fit(c))
        throw ConfigError("kv_heads = " + std::to_string(c.kv_heads) + (c.kv_heads > c.heads ? " is more than" : " does not divide") +
                          " heads = " + std::to_string(c.heads) +
                          "; each key/value head serves a whole group of query heads, so use a divisor of " +
                          std::to_string(c.heads) + ": " + divisor_list(c.heads));
}

// Cross-attention's context, or no D_context without one.
void validate_context(const Config& c) {
    if (c.cross()) {
        if (c.context.size() != 1 && static_cast<std::int64_t>(c.context.size()) != c.batch)
            throw ConfigError("there are " + std::to_string(c.context.size()) + " contexts for " +
                              std::to_string(c.batch) + " sentences; give one context for the whole batch or one per sentence");
        for (const auto& seq : c.context)
            if (seq.empty())
                throw ConfigError("the context has no tokens; give at least one word, e.g. --context \"le chat dort\"");
        for (const auto& seq : c.context) check_words(seq, "the context");
        if (c.num_keys() > kMaxTokens)
            throw ConfigError("the context has " + std::to_string(c.num_keys()) + " tokens; at most " +
                              std::to_string(kMaxTokens) + " fit");
        check_dim("D_context", c.context_dim());
        if (c.mode == Mode::Fused)
            throw ConfigError("fused mode stacks W_query, W_key and W_value to multiply one input, but with a context "
                              "the queries read the text and the keys read the context; use --mode split or loop");
        if (c.causal && c.num_keys() != c.num_tokens())
            throw ConfigError("a causal mask needs as many keys as queries, but the context has S = " +
                              std::to_string(c.num_keys()) + " tokens and the text T = " + std::to_string(c.num_tokens()) +
                              "; cross-attention sees the whole context, so leave the mask off (--no-causal)");
    } else if (c.d_context != 0) {
        throw ConfigError("D_context = " + std::to_string(c.d_context) +
                          " is the width of context tokens, but there is no context; give --context too or drop --d-context");
    }
}

// Decoding from P: what it needs and what it cannot be combined with.
void validate_decoding(const Config& c) {
    if (c.decode_from != 0) {
        const std::int64_t T = c.num_tokens();
        if (c.decode_from < 1 || c.decode_from >= T)
            throw ConfigError("decode from P = " + std::to_string(c.decode_from) + " is outside 0 < P < T = " +
                              std::to_string(T) + (T > 1 ? "; use 1 to " + std::to_string(T - 1)
                                                         : "; decoding needs at least 2 tokens"));
        if (c.cross())
            throw ConfigError("with a context the keys and values are all known before the first token, so there is "
                              "no cache to grow; drop --context or --decode-from");
        if (!c.causal)
            throw ConfigError("decoding one token at a time gives the full pass only under a causal mask (a token "
                              "never sees later ones); drop --no-causal or --decode-from");
        if (c.mode == Mode::Loop)
            throw ConfigError("decoding is shown with all heads at once; use --mode split or fused with --decode-from");
        if (c.dropout > 0)
            throw ConfigError("generation runs without dropout (eval mode); drop --dropout or --decode-from");
    }
}

// Flash mode's block and tile count, or no block in another mode.
void validate_flash(const Config& c) {
    if (c.mode == Mode::Flash) {
        const std::int64_t T = c.num_tokens();
        if (c.block < 0 || c.block > T)
            throw ConfigError("block = " + std::to_string(c.block) + " is outside 1 to T = " + std::to_string(T) +
                              "; a tile holds at most every token, so use 1 to " + std::to_string(T));
        if (c.dropout > 0)
            throw ConfigError("flash mode never holds the whole weight grid that dropout would mask; drop --dropout "
                              "or use --mode split");
        if (c.decoding())
            throw ConfigError("decoding runs one query row per round, with no tiles to show; drop --decode-from or "
                              "use --mode split");
        // Every tile is a step of the trace: counted here, in closed form, before any walk
        // (at T = 65536 with block 1 the walk alone would not end).
        const auto tiles = [&](std::int64_t blk) {
            const double q = static_cast<double>((T + blk - 1) / blk);
            const double k = static_cast<double>((c.num_keys() + blk - 1) / blk);
            return c.causal ? q * (q + 1) / 2 : q * k;
        };
        if (tiles(c.flash_block()) > static_cast<double>(kMaxFlashTiles)) {
            std::int64_t smallest = c.flash_block();
            while (tiles(smallest) > static_cast<double>(kMaxFlashTiles)) smallest += std::max<std::int64_t>(1, smallest / 8);
            while (smallest > 1 && tiles(smallest - 1) <= static_cast<double>(kMaxFlashTiles)) --smallest;
            throw ConfigError("flash at T = " + std::to_string(T) + " with block " + std::to_string(c.flash_block()) +
                              " makes " + std::to_string(static_cast<long long>(tiles(c.flash_block()))) + " tiles, each a step of the trace; " +
                              "at most " + std::to_string(kMaxFlashTiles) + " can be traced: use --block " +
                              std::to_string(smallest) + " or more");
        }
    } else {
        check_block_needs_flash(c.block, c.mode, "add --mode flash");
    }
}

// The backward pass: what it needs and what it cannot be combined with.
void validate_backward(const Config& c) {
    if (!c.backward) return;
    if (c.decoding())
        throw ConfigError("decoding with a KV cache is inference, where no gradient flows back; drop --backward or "
                          "--decode-from");
}

// A preset's fixed embeddings: one sentence, T x D_in numbers.
void validate_embeddings(const Config& c) {
    if (!c.embeddings.empty() && c.batch != 1)
        throw ConfigError("fixed embeddings hold one sentence, but the batch has " + std::to_string(c.batch) +
                          "; drop the preset's embeddings or give one --text");
    if (!c.embeddings.empty() &&
        static_cast<std::int64_t>(c.embeddings.size()) != c.num_tokens() * c.d_in)
        throw ConfigError("the fixed embeddings hold " + std::to_string(c.embeddings.size()) +
                          " numbers but T x D_in = " + std::to_string(c.num_tokens()) + " x " +
                          std::to_string(c.d_in) + "; drop them or match the text and D_in");
}

}  // namespace

void validate(const Config& c) {
    validate_text(c);
    validate_sizes(c);
    validate_context(c);
    validate_decoding(c);
    validate_flash(c);
    validate_backward(c);
    validate_embeddings(c);
}

}  // namespace headsplit
