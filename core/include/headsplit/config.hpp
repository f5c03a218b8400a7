#pragma once
// What one forward pass computes: the text, the dimensions, the mode and switches.
// validate() refuses every bad value with one line that names it and says what works.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace headsplit {

enum class Mode { Loop, Split, Fused };
enum class BackendKind { Cpu, Gl };

const char* mode_name(Mode m);            // "loop" | "split" | "fused"
const char* backend_name(BackendKind b);  // "cpu" | "gl"

// A user-facing problem with the configuration; what() is one line.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

constexpr std::uint64_t kDefaultMemoryBudget = 2ull << 30;  // 2 GiB
constexpr std::int64_t kMaxDim = 65536;                     // D_in, D_out
constexpr std::int64_t kMaxTokens = 1 << 20;

struct Config {
    std::string preset = "cat-sleeps";     // where the values came from (for display)
    std::vector<std::string> tokens = {"the", "cat", "sleeps"};
    // Optional fixed input rows [T * D_in] (the journey preset's embeddings); when empty,
    // x is generated from the seed and the token strings.
    std::vector<float> embeddings;
    std::int64_t batch = 1;
    std::int64_t d_in = 6;
    std::int64_t d_out = 6;
    std::int64_t heads = 2;
    bool causal = true;
    Mode mode = Mode::Split;
    BackendKind backend = BackendKind::Cpu;
    std::uint64_t seed = 0;
    double dropout = 0.0;
    bool out_proj = true;
    bool qkv_bias = false;     // the teaching material uses bias=False for W_query/W_key/W_value
    bool scale_first = false;  // false: mask then scale (as the seeds); true: scale then mask (nanoGPT)
    std::uint64_t memory_budget = kDefaultMemoryBudget;

    std::int64_t num_tokens() const { return static_cast<std::int64_t>(tokens.size()); }
    std::int64_t head_dim() const { return heads > 0 ? d_out / heads : 0; }
};

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
