#pragma once
// Deterministic inputs and weights: the same seed and text give the same numbers on every
// machine (a portable SplitMix64 generator, not <random>'s distributions, whose output
// differs between standard libraries).
#include <cstdint>
#include <string>
#include <vector>

#include "headsplit/engine/config.hpp"

namespace headsplit {

// SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, one add and three xor-shift-multiplies.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next_u64();
    // Uniform in [0, 1) with 24 random bits: exactly representable as float.
    float next_unit();
    // Uniform in [lo, hi).
    float uniform(float lo, float hi) { return lo + (hi - lo) * next_unit(); }

private:
    std::uint64_t state_;
};

// 64-bit FNV-1a of a string; mixes token text into the seed.
std::uint64_t fnv1a(const std::string& s);

struct Inputs {
    std::vector<float> x;                 // [B, T, D_in], row-major; padded rows are kPadToken's
    std::vector<float> context;           // [B, S, D_context] with cross-attention, else empty
    std::vector<float> key_padding_mask;  // [B, S]: 1 where the key is padding; empty unless padded
    std::vector<float> dout;              // [B, T, D_out]: the gradient at the output; empty unless backward
};

// Weights in PyTorch nn.Linear layout: weight [out_features, in_features], so that
// nn.Linear.weight.copy_() takes them as they are. Row block h*head_dim .. (h+1)*head_dim-1
// of w_query is head h's query weight (columns of W_Q in the math layout x @ W_Q).
struct Weights {
    std::vector<float> w_query;                  // [D_out, D_in]
    std::vector<float> w_key, w_value;           // [kv_width, key_dim]: G heads, D_in or D_context
    std::vector<float> b_query, b_key, b_value;  // [D_out], [kv_width]: empty unless qkv_bias
    std::vector<float> w_out;                    // [D_out, D_out], empty unless out_proj
    std::vector<float> b_out;                    // [D_out], empty unless out_proj

    // The weight a trace link names ("w_query", ..., "b_out"); nullptr for another name.
    const std::vector<float>* find(const std::string& name) const;
};

// x: a token's row depends only on (seed, token text), so a repeated word gets the same
// embedding; uniform in [-1, 1). Fixed embeddings from a preset are used as they are. The
// context rows are made the same way, at D_context; the key padding mask from the lengths;
// with the backward pass, dout from the seed (its own stream) or all ones (Config::dout_ones).
Inputs make_inputs(const Config& c);

// nn.Linear's default init range: uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)). Seeded
// weights only: std::logic_error for a configuration that names a checkpoint, whose weights
// are read above the engine (load_weights() in model/checkpoint.hpp).
Weights make_weights(const Config& c);

// The dropout keep-mask for the attention weights (1 = kept, 0 = dropped), n values,
// deterministic for (seed, n, p).
std::vector<float> make_dropout_mask(std::uint64_t seed, std::int64_t n, double p);

}  // namespace headsplit
