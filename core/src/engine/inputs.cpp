#include "headsplit/engine/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "headsplit/base/slices.hpp"

namespace headsplit {

std::uint64_t Rng::next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float Rng::next_unit() {
    return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f);
}

std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (unsigned char ch : s) {
        h ^= ch;
        h *= 0x100000001B3ull;
    }
    return h;
}

namespace {

// Distinct streams for each tensor, so that e.g. turning on the bias does not shift W_out.
enum Stream : std::uint64_t { kQuery = 1, kKey, kValue, kOut, kBiasQ, kBiasK, kBiasV, kBiasOut, kDropout, kDout };

std::vector<float> fill(std::uint64_t seed, Stream stream, std::int64_t n, float bound) {
    Rng rng(seed * 0x100000001B3ull + stream * 0x9E3779B97F4A7C15ull);
    std::vector<float> v;
    v.reserve(static_cast<std::size_t>(n));
    while (v.size() < static_cast<std::size_t>(n)) {  // gpt2-small's W_query: 589,824 values
        const std::size_t block = std::min(static_cast<std::size_t>(n) - v.size(), kSliceFloats);
        for (std::size_t i = 0; i < block; ++i) v.push_back(rng.uniform(-bound, bound));
        slice_point();
    }
    return v;
}

// The gradient arriving at the output, [B, T, D_out]: uniform in [-1, 1) from the seed, or all
// ones (the gradient of output.sum()); none without the backward pass.
std::vector<float> make_dout(const Config& c) {
    if (!c.backward) return {};
    const std::int64_t n = c.batch * c.num_tokens() * c.d_out;
    if (c.dout_ones) return std::vector<float>(static_cast<std::size_t>(n), 1.0f);
    return fill(c.seed, kDout, n, 1.0f);
}

}  // namespace

Inputs make_inputs(const Config& c) {
    Inputs in;
    in.dout = make_dout(c);
    if (!c.embeddings.empty()) {
        in.x = c.embeddings;
        return in;
    }
    const auto embed = [&](const std::string& token, std::int64_t width, std::vector<float>& out) {
        Rng rng(c.seed ^ fnv1a(token));
        for (std::int64_t i = 0; i < width; ++i) out.push_back(rng.uniform(-1.0f, 1.0f));
    };
    const std::int64_t T = c.num_tokens(), S = c.num_keys();
    in.x.reserve(static_cast<std::size_t>(c.batch * T * c.d_in));
    for (std::int64_t b = 0; b < c.batch; ++b)
        for (std::int64_t t = 0; t < T; ++t) embed(c.token_at(b, t), c.d_in, in.x);
    if (c.cross())
        for (std::int64_t b = 0; b < c.batch; ++b)
            for (const std::string& token : c.key_tokens(b)) embed(token, c.context_dim(), in.context);
    if (c.padded())
        for (std::int64_t b = 0; b < c.batch; ++b)
            for (std::int64_t j = 0; j < S; ++j) in.key_padding_mask.push_back(j >= c.key_length(b) ? 1.0f : 0.0f);
    return in;
}

Weights make_weights(const Config& c) {
    if (!c.weights_dir.empty())
        throw std::logic_error("make_weights() makes seeded weights; those of the checkpoint in " + c.weights_dir +
                               " are load_weights()'s (model/checkpoint.hpp)");
    Weights w;
    const float in_bound = 1.0f / std::sqrt(static_cast<float>(c.d_in));
    const float kv_bound = 1.0f / std::sqrt(static_cast<float>(c.key_dim()));
    const std::int64_t kv = c.kv_width();
    w.w_query = fill(c.seed, kQuery, c.d_out * c.d_in, in_bound);
    w.w_key = fill(c.seed, kKey, kv * c.key_dim(), kv_bound);
    w.w_value = fill(c.seed, kValue, kv * c.key_dim(), kv_bound);
    if (c.qkv_bias) {
        w.b_query = fill(c.seed, kBiasQ, c.d_out, in_bound);
        w.b_key = fill(c.seed, kBiasK, kv, kv_bound);
        w.b_value = fill(c.seed, kBiasV, kv, kv_bound);
    }
    if (c.out_proj) {
        const float out_bound = 1.0f / std::sqrt(static_cast<float>(c.d_out));
        w.w_out = fill(c.seed, kOut, c.d_out * c.d_out, out_bound);
        w.b_out = fill(c.seed, kBiasOut, c.d_out, out_bound);
    }
    return w;
}

std::vector<float> make_dropout_mask(std::uint64_t seed, std::int64_t n, double p) {
    Rng rng(seed * 0x100000001B3ull + kDropout * 0x9E3779B97F4A7C15ull);
    std::vector<float> keep(static_cast<std::size_t>(n));
    for (auto& k : keep) k = rng.next_unit() >= static_cast<float>(p) ? 1.0f : 0.0f;
    return keep;
}

const std::vector<float>* Weights::find(const std::string& name) const {
    if (name == "w_query") return &w_query;
    if (name == "w_key") return &w_key;
    if (name == "w_value") return &w_value;
    if (name == "b_query") return &b_query;
    if (name == "b_key") return &b_key;
    if (name == "b_value") return &b_value;
    if (name == "w_out") return &w_out;
    if (name == "b_out") return &b_out;
    return nullptr;
}

}  // namespace headsplit
