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
    std::int64_t n_inner = 0;  // the MLP's width (config.json's n_inner; null: 4 x n_embd)
    double layer_norm_epsilon = 1e-5;
    std::string activation = "gelu_new";  // the MLP's activation, by Hugging Face's name
};

// DIR/config.json, checked (sizes positive and sane, n_head dividing n_embd). Every key that
// changes what a block computes is followed as Hugging Face's GPT-2 follows it (n_inner,
// activation_function, layer_norm_epsilon) or the file is refused naming the key and its
// value (attention scaled otherwise than by 1/sqrt(head_dim), which is what HeadSplit shows).
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

// The weights `c` runs with: layer c.layer's of the checkpoint in c.weights_dir when it
// names one (gpt2_attention_weights), else the seeded ones (make_weights).
Weights load_weights(const Config& c);

// A Config for `text` at layer `layer` of the checkpoint in `dir`: tokens, sizes, heads, x
// (as fixed embeddings), Q/K/V bias and output projection as GPT-2 has them.
Config gpt2_config(const std::string& dir, const std::string& text, std::int64_t layer);

}  // namespace headsplit
