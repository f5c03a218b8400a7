#pragma once
// A Hugging Face GPT-2 folder as downloaded (model.safetensors, config.json, vocab.json,
// merges.txt): the text tokenized with its BPE, x = the real input of layer L's attention
// (token and position embeddings through blocks 0 .. L-1, then ln_1 of block L, on the CPU),
// and layer L's attention weights in HeadSplit's layout. Every file is untrusted; each
// problem is one ConfigError line naming the file.
#include <cstdint>
#include <string>
#include <vector>

#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"

namespace headsplit {

struct Gpt2Shape {
    std::int64_t n_embd = 0, n_head = 0, n_layer = 0, n_positions = 0, vocab_size = 0;
    double layer_norm_epsilon = 1e-5;
};

// DIR/config.json, checked (sizes positive and sane, n_head dividing n_embd).
Gpt2Shape read_gpt2_config(const std::string& dir);

struct Gpt2Input {
    Gpt2Shape shape;
    std::vector<std::string> pieces;  // the BPE tokens as text (" cat")
    std::vector<int> ids;
    std::vector<float> x;  // [T, n_embd]: layer `layer`'s attention input
};

// Tokenizes `text` and runs it to layer `layer`'s attention input.
Gpt2Input gpt2_layer_input(const std::string& dir, const std::string& text, std::int64_t layer);

// Layer `layer`'s c_attn (Conv1D [D, 3D], bias [3D]) as w_query, w_key, w_value [D, D] in
// nn.Linear layout and their biases, and c_proj as w_out, b_out.
Weights gpt2_attention_weights(const std::string& dir, std::int64_t layer);

// A Config for `text` at layer `layer` of the checkpoint in `dir`: tokens, sizes, heads, x
// (as fixed embeddings), Q/K/V bias and output projection as GPT-2 has them.
Config gpt2_config(const std::string& dir, const std::string& text, std::int64_t layer);

}  // namespace headsplit
