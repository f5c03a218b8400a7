#pragma once
// What one forward pass computes: the text, the dimensions, the mode and switches.
// validate() refuses every bad value with one line that names it and says what works.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "headsplit/backends/backend.hpp"

namespace headsplit {

enum class Mode { Loop, Split, Fused, Flash };

// What the scores are scaled by: 1/sqrt(head_dim) (the teaching code's, and every model's),
// 1/head_dim (the softmax nearly uniform), or nothing (at a large head_dim it saturates). The
// others than the first are for the training experiments: the window, the trace and the
// scripts show 1/sqrt(head_dim).
enum class Scale { SqrtHeadDim, HeadDim, None };
const char* scale_name(Scale s);  // "sqrt" | "head_dim" | "none"

const char* mode_name(Mode m);            // "loop" | "split" | "fused" | "flash"

// A user-facing problem with the configuration; what() is one line.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

constexpr std::uint64_t kDefaultMemoryBudget = 2ull << 30;  // 2 GiB
// Seconds a run may be estimated to take before it is refused (the CLI) or shown as shapes
// only (the window): a class waits a minute, not ten.
constexpr double kDefaultTimeBudget = 60;
constexpr std::int64_t kMaxDim = 65536;                     // D_in, D_out
constexpr std::int64_t kMaxTokens = 1 << 20;
// The longest word typed, in characters: a label is drawn for every token (the longest English
// word in a dictionary has 45 letters), and a checkpoint's tokenizer merges within a word.
constexpr std::size_t kMaxWordLength = 100;
// Flash mode's tile side when none is given: what measured best on this machine's CPU at
// gpt2-small sizes (README: Bench). Below 128 queries or keys the default is half the shorter
// of the two, rounded up, so that a sentence of two tokens or more shows 2 x 2 tiles
// (Config::flash_block).
constexpr std::int64_t kDefaultFlashBlock = 64;
// The most tiles (steps) a flash trace may have: T = 8192 at the default block makes 8,256.
constexpr std::int64_t kMaxFlashTiles = 65536;

struct Config {
    std::string preset = "cat-sleeps";     // where the values came from (for display)
    std::vector<std::string> tokens = {"the", "cat", "sleeps"};
    // Optional fixed input rows [T * D_in] (the journey preset's embeddings); when empty,
    // x is generated from the seed and the token strings.
    std::vector<float> embeddings;
    // Every sentence of a batch, the first equal to `tokens`; empty for one sentence. Shorter
    // sentences are padded at the end to the longest with kPadToken and masked as keys.
    // Set both (and `batch`) through set_sentences().
    std::vector<std::vector<std::string>> batch_tokens;
    std::int64_t batch = 1;
    std::int64_t d_in = 6;
    std::int64_t d_out = 6;
    std::int64_t heads = 2;
    // Key/value heads, each shared by heads / kv_heads query heads (grouped-query attention;
    // 1 is multi-query attention). 0: one per query head, plain multi-head attention.
    std::int64_t kv_heads = 0;
    // Cross-attention: keys and values come from these token sequences (one shared by the
    // whole batch, or one per sentence), not from the text. Empty: self-attention.
    std::vector<std::vector<std::string>> context;
    std::int64_t d_context = 0;  // width of a context token; 0: D_in
    // Decoding with a KV cache: 0 off; P: the first P tokens run at once (prefill), then each
    // later token alone, its keys and values appended to the cache.
    std::int64_t decode_from = 0;
    // The whole model's attention layers (a preset's); HeadSplit runs one. Only the
    // whole-model KV-cache figures use it.
    std::int64_t layers = 1;
    // A GPT-2 checkpoint folder (--weights): the attention weights are those of its layer
    // `layer`, x is that layer's real input (in `embeddings`), the tokens its BPE pieces with
    // their ids. Empty: generated weights.
    std::string weights_dir;
    std::int64_t layer = 0;
    std::vector<int> token_ids;
    bool causal = true;
    Mode mode = Mode::Split;
    // Flash mode: queries and keys go in tiles of `block` rows (0: flash_block()'s default).
    std::int64_t block = 0;
    BackendKind backend = BackendKind::Cpu;
    std::uint64_t seed = 0;
    double dropout = 0.0;
    bool out_proj = true;
    bool qkv_bias = false;     // the teaching material uses bias=False for W_query/W_key/W_value
    bool scale_first = false;  // false: mask then scale (as the seeds); true: scale then mask (nanoGPT)
    Scale scale = Scale::SqrtHeadDim;
    // The backward pass after the forward: from a gradient dout [B, T, D_out] arriving at the
    // output (out.backward(dout)) back to every weight, x and the context, step by step.
    bool backward = false;
    // dout: seeded like the inputs (false), or all ones (true: the gradient of output.sum()).
    bool dout_ones = false;
    std::uint64_t memory_budget = kDefaultMemoryBudget;
    double time_budget = kDefaultTimeBudget;  // seconds (engine.hpp: require_time)

    // T: the longest sentence (every sentence is padded to it).
    std::int64_t num_tokens() const;
    std::int64_t head_dim() const { return heads > 0 ? d_out / heads : 0; }
    // The factor the scores are multiplied by (Scale).
    float scale_factor() const;

    // Every sentence (batch_tokens, or just `tokens`).
    std::vector<std::vector<std::string>> sentences() const;
    // Replaces the text: tokens = the first sentence, batch = their count.
    void set_sentences(std::vector<std::vector<std::string>> all);
    // Row t of sentence b as the model sees it: its token, or kPadToken past its end.
    std::string token_at(std::int64_t b, std::int64_t t) const;

    std::int64_t kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
    std::int64_t kv_width() const { return kv_head_count() * head_dim(); }  // columns of keys, values
    std::int64_t group_size() const { return heads / std::max<std::int64_t>(kv_head_count(), 1); }
    bool grouped() const { return kv_head_count() != heads; }

    bool cross() const { return !context.empty(); }
    std::int64_t context_dim() const { return d_context > 0 ? d_context : d_in; }
    // The keys' side: its width (D_context or D_in), its length S (context or text), the
    // tokens of batch element b as keys (padded), and whether any key is padding.
    std::int64_t key_dim() const { return cross() ? context_dim() : d_in; }
    std::int64_t num_keys() const;
    std::vector<std::string> key_tokens(std::int64_t b) const;
    std::int64_t key_length(std::int64_t b) const;  // real (unpadded) keys of batch element b
    bool padded() const;
    bool decoding() const { return decode_from > 0; }
    // Flash mode's tiles: their side, and how many blocks of queries (T) and keys (S). The
    // side is `block`, at most T; by default kDefaultFlashBlock, at most ceil(min(T, S) / 2),
    // and 1 at least.
    std::int64_t flash_block() const;
    std::int64_t query_blocks() const;
    std::int64_t key_blocks() const;
    // Whether tile (query block i, key block j) is computed: under a causal mask a tile whose
    // every key comes after its every query is skipped.
    bool tile_runs(std::int64_t i, std::int64_t j) const;
    std::int64_t tiles_run() const;  // the tiles computed, of query_blocks() x key_blocks()
};

// Parameters of the attention layer, weights and biases: W_query [D_out, D_in], W_key and
// W_value [kv_width, key_dim], W_out [D_out, D_out] (+ b_out).
struct ParamCounts {
    std::int64_t query = 0, key = 0, value = 0, out = 0;
    std::int64_t total() const { return query + key + value + out; }
};
ParamCounts attention_params(const Config& c);

// What the KV cache holds per token: keys and values of kv_heads heads of head_dim, at
// `bytes_per_value` (4: float32, as HeadSplit stores them; 2: fp16/bf16, as models ship);
// for one layer, and for all c.layers.
std::int64_t kv_cache_bytes_per_token(const Config& c, int bytes_per_value = 4);
std::int64_t model_kv_cache_bytes_per_token(const Config& c, int bytes_per_value = 2);

// The filler token of padded rows.
extern const char* const kPadToken;

// Throws ConfigError naming the first bad value. Does not check the memory budget
// (see estimate_memory / check_memory_budget in engine.hpp).
void validate(const Config& c);

// Whitespace-separated words of `text`.
std::vector<std::string> split_words(const std::string& text);

// "t1 t2 ... tN": the synthetic tokens of the large presets.
std::vector<std::string> synthetic_tokens(std::int64_t n);

// The divisors of n, ascending (the head counts that split D_out = n evenly); none for n < 1.
std::vector<std::int64_t> divisors(std::int64_t n);

// "1.5 GiB", "768 KiB", ...
std::string human_bytes(double bytes);

}  // namespace headsplit
