#include "headsplit/model/checkpoint.hpp"


#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/formats/bpe.hpp"
#include "headsplit/formats/files.hpp"
#include "headsplit/model/safetensors.hpp"

namespace headsplit {

namespace {

std::string in_dir(const std::string& dir, const char* file) { return dir + (dir.empty() || dir.back() == '/' ? "" : "/") + file; }

// The name under which the file stores GPT-2's tensor `name`: with or without the
// "transformer." prefix.
std::string stored_name(const SafetensorsFile& f, const std::string& name) {
    for (const SafetensorsEntry& e : f.entries())
        if (e.name == "transformer." + name) return e.name;
    return name;
}

std::vector<float> tensor(const SafetensorsFile& f, const std::string& name, const Shape& shape) {
    return f.read(stored_name(f, name), shape);
}

std::string block(std::int64_t i, const char* rest) { return "h." + std::to_string(i) + "." + rest; }

// y[T, out] = x[T, in] @ w[in, out] + b (GPT-2's Conv1D).
std::vector<float> conv1d(const std::vector<float>& x, std::int64_t T, std::int64_t in, const std::vector<float>& w,
                          const std::vector<float>& b, std::int64_t out) {
    std::vector<float> y(static_cast<std::size_t>(T * out));
    for (std::int64_t t = 0; t < T; ++t) {
        float* yr = &y[static_cast<std::size_t>(t * out)];
        for (std::int64_t o = 0; o < out; ++o) yr[o] = b[static_cast<std::size_t>(o)];
        for (std::int64_t i = 0; i < in; ++i) {
            const float xi = x[static_cast<std::size_t>(t * in + i)];
            const float* wr = &w[static_cast<std::size_t>(i * out)];
            for (std::int64_t o = 0; o < out; ++o) yr[o] += xi * wr[o];
        }
    }
    return y;
}

std::vector<float> layer_norm(const std::vector<float>& x, std::int64_t T, std::int64_t D, const std::vector<float>& g,
                              const std::vector<float>& b, double eps) {
    std::vector<float> y(x.size());
    for (std::int64_t t = 0; t < T; ++t) {
        const float* r = &x[static_cast<std::size_t>(t * D)];
        double mean = 0, var = 0;
        for (std::int64_t d = 0; d < D; ++d) mean += r[d];
        mean /= static_cast<double>(D);
        for (std::int64_t d = 0; d < D; ++d) var += (r[d] - mean) * (r[d] - mean);
        const double inv = 1.0 / std::sqrt(var / static_cast<double>(D) + eps);
        for (std::int64_t d = 0; d < D; ++d)
            y[static_cast<std::size_t>(t * D + d)] =
                static_cast<float>((r[d] - mean) * inv) * g[static_cast<std::size_t>(d)] + b[static_cast<std::size_t>(d)];
    }
    return y;
}


void check_layer(const Gpt2Shape& s, std::int64_t layer) {
    if (layer < 0 || layer >= s.n_layer)
        throw ConfigError("--layer " + std::to_string(layer) + " is not a layer of this checkpoint; use 0 to " +
                          std::to_string(s.n_layer - 1));
}

// Block `layer`'s c_attn (Conv1D [D, 3D], bias [3D]) as w_query, w_key, w_value [D, D] in
// nn.Linear layout (transposed) with their biases, and c_proj as w_out, b_out.
Weights attention_weights(const SafetensorsFile& f, std::int64_t D, std::int64_t layer) {
    const std::vector<float> w = tensor(f, block(layer, "attn.c_attn.weight"), {D, 3 * D});
    const std::vector<float> b = tensor(f, block(layer, "attn.c_attn.bias"), {3 * D});
    const std::vector<float> pw = tensor(f, block(layer, "attn.c_proj.weight"), {D, D});
    // Columns k*D .. of c_attn are the queries' (k = 0), keys' (1), values' (2).
    const auto transposed = [&](const std::vector<float>& m, std::int64_t cols, std::int64_t first) {
        std::vector<float> lin(static_cast<std::size_t>(D * D));
        for (std::int64_t o = 0; o < D; ++o)
            for (std::int64_t i = 0; i < D; ++i)
                lin[static_cast<std::size_t>(o * D + i)] = m[static_cast<std::size_t>(i * cols + first + o)];
        return lin;
    };
    Weights out;
    out.w_query = transposed(w, 3 * D, 0);
    out.w_key = transposed(w, 3 * D, D);
    out.w_value = transposed(w, 3 * D, 2 * D);
    out.b_query.assign(b.begin(), b.begin() + D);
    out.b_key.assign(b.begin() + D, b.begin() + 2 * D);
    out.b_value.assign(b.begin() + 2 * D, b.end());
    out.w_out = transposed(pw, D, 0);
    out.b_out = tensor(f, block(layer, "attn.c_proj.bias"), {D});
    return out;
}

// The MLP activations of Hugging Face's ACT2FN that a GPT-2 config may name, as it defines
// them: the GELUs by tanh (gelu_new, gelu_pytorch_tanh, gelu_fast, gelu_accurate) and by erf
// (gelu, gelu_python), quick_gelu, and the plain ones.
constexpr const char* kActivations =
    "gelu_new, gelu_pytorch_tanh, gelu_fast, gelu_accurate, gelu, gelu_python, quick_gelu, relu, relu6, "
    "leaky_relu, silu, swish, sigmoid, tanh, linear";

double activate(const std::string& name, double v) {
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast" || name == "gelu_accurate")
        return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    if (name == "gelu" || name == "gelu_python") return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    if (name == "quick_gelu") return v / (1.0 + std::exp(-1.702 * v));
    if (name == "relu") return std::max(v, 0.0);
    if (name == "relu6") return std::clamp(v, 0.0, 6.0);
    if (name == "leaky_relu") return v < 0 ? 0.01 * v : v;
    if (name == "silu" || name == "swish") return v / (1.0 + std::exp(-v));
    if (name == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
    if (name == "tanh") return std::tanh(v);
    return v;  // linear
}

bool activation_known(const std::string& name) {
    const std::string list = std::string(", ") + kActivations + ",";
    return !name.empty() && list.find(", " + name + ",") != std::string::npos;
}

// A block's causal self-attention on x [T, D] (ln_1's output) with weights `w`: HeadSplit's
// own engine, split mode on the CPU, recording nothing but the output [T, D].
std::vector<float> attention_output(const std::vector<float>& x, std::int64_t T, const Gpt2Shape& s, const Weights& w) {
    Config c;
    c.tokens = synthetic_tokens(T);
    c.embeddings = x;
    c.d_in = c.d_out = s.n_embd;
    c.heads = s.n_head;
    c.qkv_bias = true;
    c.out_proj = true;
    const Inputs in = make_inputs(c);
    const auto cpu = make_cpu_backend();
    Runner runner(c, in, w, *cpu);
    RunOptions quiet;
    quiet.record_values = false;
    return runner.run(quiet).steps.back().result().data;
}

}  // namespace

Gpt2Shape read_gpt2_config(const std::string& dir) {
    const std::string path = in_dir(dir, "config.json");
    check_readable_file(path, 1 << 20,
                        "--weights takes a Hugging Face GPT-2 folder (config.json, model.safetensors, vocab.json, merges.txt)");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const auto shallow = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) { return depth <= 2; };
    const nlohmann::json doc = nlohmann::json::parse(text.str(), shallow, false);
    if (doc.is_discarded() || !doc.is_object()) throw ConfigError(path + ": not a JSON object; is it GPT-2's config.json?");
    Gpt2Shape s;
    const auto count = [&](const char* key, std::int64_t hi) {
        const auto it = doc.find(key);
        if (it == doc.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > hi)
            throw ConfigError(path + ": " + key + " is missing or not a whole number from 1 to " + std::to_string(hi));
        return it->get<std::int64_t>();
    };
    s.n_embd = count("n_embd", kMaxDim);
    s.n_head = count("n_head", kMaxDim);
    s.n_layer = count("n_layer", 1024);
    s.n_positions = count("n_positions", kMaxTokens);
    s.vocab_size = count("vocab_size", 1 << 24);
    if (const auto eps = doc.find("layer_norm_epsilon"); eps != doc.end()) {
        if (!eps->is_number() || !(eps->get<double>() > 0 && eps->get<double>() < 1))
            throw ConfigError(path + ": layer_norm_epsilon is not a number between 0 and 1");
        s.layer_norm_epsilon = eps->get<double>();
    }
    if (s.n_embd % s.n_head != 0)
        throw ConfigError(path + ": n_head = " + std::to_string(s.n_head) + " does not divide n_embd = " + std::to_string(s.n_embd));
    s.n_inner = 4 * s.n_embd;
    if (const auto it = doc.find("n_inner"); it != doc.end() && !it->is_null()) s.n_inner = count("n_inner", 4 * kMaxDim);
    if (const auto it = doc.find("activation_function"); it != doc.end()) {
        if (!it->is_string() || !activation_known(it->get<std::string>()))
            throw ConfigError(path + ": activation_function " + it->dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) +
                              " is not one HeadSplit runs; use one of " + kActivations);
        s.activation = it->get<std::string>();
    }
    // Attention scaled otherwise than by 1/sqrt(head_dim) is not the attention HeadSplit shows.
    const auto flag = [&](const char* key, bool usual, const char* what) {
        const auto it = doc.find(key);
        if (it == doc.end() || it->is_null()) return;
        if (!it->is_boolean())
            throw ConfigError(path + ": " + key + " is " + it->dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) +
                              ", not true or false");
        if (it->get<bool>() != usual)
            throw ConfigError(path + ": " + key + " is " + (usual ? "false" : "true") + ": " + what +
                              "; HeadSplit runs attention scaled by 1/sqrt(head_dim) only, as GPT-2's own checkpoints are");
    };
    flag("scale_attn_weights", true, "its attention scores are not scaled at all");
    flag("scale_attn_by_inverse_layer_idx", false, "its attention scores are also divided by the layer's number + 1");
    return s;
}

Gpt2Input gpt2_layer_input(const std::string& dir, const std::string& text, std::int64_t layer) {
    Gpt2Input out;
    out.shape = read_gpt2_config(dir);
    const Gpt2Shape& s = out.shape;
    check_layer(s, layer);
    const Gpt2Tokenizer tok = Gpt2Tokenizer::load(in_dir(dir, "vocab.json"), in_dir(dir, "merges.txt"));
    for (const auto& t : tok.encode(text)) {
        if (t.id >= s.vocab_size)
            throw ConfigError(in_dir(dir, "vocab.json") + ": token id " + std::to_string(t.id) + " is past vocab_size " +
                              std::to_string(s.vocab_size) + " of config.json");
        out.ids.push_back(t.id);
        out.pieces.push_back(t.piece);
    }
    const std::int64_t T = static_cast<std::int64_t>(out.ids.size()), D = s.n_embd;
    if (T == 0) throw ConfigError("the text has no tokens; give at least one word, e.g. --text \"the cat sleeps\"");
    if (T > s.n_positions)
        throw ConfigError("the text has " + std::to_string(T) + " tokens, more than the " + std::to_string(s.n_positions) +
                          " positions of this checkpoint; use a shorter text");
    const SafetensorsFile f(in_dir(dir, "model.safetensors"));
    // Token and position embeddings: only the rows of the text's tokens and positions are read
    // (GPT-2 XL's table alone is 50257 x 1600 floats).
    std::vector<std::int64_t> ids(out.ids.begin(), out.ids.end()), positions(static_cast<std::size_t>(T));
    for (std::int64_t t = 0; t < T; ++t) positions[static_cast<std::size_t>(t)] = t;
    std::vector<float> h = f.read_rows(stored_name(f, "wte.weight"), {s.vocab_size, D}, ids);
    const std::vector<float> wpe = f.read_rows(stored_name(f, "wpe.weight"), {s.n_positions, D}, positions);
    for (std::size_t j = 0; j < h.size(); ++j) h[j] += wpe[j];
    // Blocks 0 .. layer-1, one at a time (a block's weights are read when it runs).
    for (std::int64_t i = 0; i < layer; ++i) {
        const std::vector<float> a = layer_norm(h, T, D, tensor(f, block(i, "ln_1.weight"), {D}),
                                                tensor(f, block(i, "ln_1.bias"), {D}), s.layer_norm_epsilon);
        const std::vector<float> attn = attention_output(a, T, s, attention_weights(f, D, i));
        for (std::size_t j = 0; j < h.size(); ++j) h[j] += attn[j];
        const std::vector<float> m = layer_norm(h, T, D, tensor(f, block(i, "ln_2.weight"), {D}),
                                                tensor(f, block(i, "ln_2.bias"), {D}), s.layer_norm_epsilon);
        const std::int64_t inner = s.n_inner;
        std::vector<float> fc = conv1d(m, T, D, tensor(f, block(i, "mlp.c_fc.weight"), {D, inner}),
                                       tensor(f, block(i, "mlp.c_fc.bias"), {inner}), inner);
        for (float& v : fc) v = static_cast<float>(activate(s.activation, v));
        const std::vector<float> mlp = conv1d(fc, T, inner, tensor(f, block(i, "mlp.c_proj.weight"), {inner, D}),
                                              tensor(f, block(i, "mlp.c_proj.bias"), {D}), D);
        for (std::size_t j = 0; j < h.size(); ++j) h[j] += mlp[j];
    }
    out.x = layer_norm(h, T, D, tensor(f, block(layer, "ln_1.weight"), {D}), tensor(f, block(layer, "ln_1.bias"), {D}),
                       s.layer_norm_epsilon);
    return out;
}

Weights gpt2_attention_weights(const std::string& dir, std::int64_t layer) {
    const Gpt2Shape s = read_gpt2_config(dir);
    check_layer(s, layer);
    return attention_weights(SafetensorsFile(in_dir(dir, "model.safetensors")), s.n_embd, layer);
}

Weights load_weights(const Config& c) {
    return c.weights_dir.empty() ? make_weights(c) : gpt2_attention_weights(c.weights_dir, c.layer);
}

Config gpt2_config(const std::string& dir, const std::string& text, std::int64_t layer) {
    const Gpt2Input in = gpt2_layer_input(dir, text, layer);
    Config c;
    c.preset = "gpt2 checkpoint, layer " + std::to_string(layer);
    c.weights_dir = dir;
    c.layer = layer;
    c.tokens = in.pieces;
    c.token_ids = in.ids;
    c.embeddings = in.x;
    c.d_in = c.d_out = in.shape.n_embd;
    c.heads = in.shape.n_head;
    c.layers = in.shape.n_layer;
    c.qkv_bias = true;
    c.out_proj = true;
    return c;
}

}  // namespace headsplit
