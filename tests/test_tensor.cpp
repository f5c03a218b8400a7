// Views, transposes and chunks: metadata only, as PyTorch computes it.
#include <catch2/catch.hpp>

#include <cmath>

#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/base/tensor.hpp"

using namespace headsplit;

TEST_CASE("view splits and merges dims without moving data", "[tensor]") {
    const TensorDesc x = contiguous(0, {1, 3, 6});
    const TensorDesc v = view(x, {1, 3, 2, 3});
    CHECK(v.strides == Shape{18, 6, 3, 1});
    const TensorDesc t = transpose(v, 1, 2);
    CHECK(t.shape == Shape{1, 2, 3, 3});
    CHECK(t.strides == Shape{18, 3, 6, 1});
    CHECK_FALSE(t.is_contiguous());
    // The transposed tensor cannot be flattened back without a copy (PyTorch refuses too).
    CHECK_NOTHROW(view(transpose(t, 1, 2), {1, 3, 6}));  // transposing back restores a contiguous layout
    CHECK_THROWS_AS(view(t, {1, 2, 9}), std::invalid_argument);
    CHECK_THROWS_AS(view(x, {1, 3, 4}), std::invalid_argument);
}

TEST_CASE("views of a chunk of qkv keep the chunk's row stride", "[tensor]") {
    const TensorDesc qkv = contiguous(0, {1, 3, 18});
    const TensorDesc k = narrow_last(qkv, 6, 6);
    CHECK(k.offset == 6);
    CHECK(k.strides == Shape{54, 18, 1});
    const TensorDesc kv = view(k, {1, 3, 2, 3});
    CHECK(kv.strides == Shape{54, 18, 3, 1});
    CHECK_THROWS_AS(narrow_last(qkv, 15, 6), std::invalid_argument);
}

TEST_CASE("gather reads a strided tensor in its own row-major order", "[tensor]") {
    std::vector<float> buf(18);
    for (int i = 0; i < 18; ++i) buf[i] = static_cast<float>(i);
    const TensorDesc t = transpose(view(contiguous(0, {1, 3, 6}), {1, 3, 2, 3}), 1, 2);
    const std::vector<float> expect = {0, 1, 2, 6, 7, 8, 12, 13, 14, 3, 4, 5, 9, 10, 11, 15, 16, 17};
    CHECK(gather(buf, t) == expect);
}

TEST_CASE("the generator is SplitMix64 and gives the same numbers everywhere", "[inputs]") {
    // Reference outputs of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
    Rng rng(0);
    CHECK(rng.next_u64() == 0xE220A8397B1DCDAFull);
    CHECK(rng.next_u64() == 0x6E789E6AA1B965F4ull);
    CHECK(rng.next_u64() == 0x06C45D188009454Full);
}

TEST_CASE("inputs depend on seed and token text only", "[inputs]") {
    Config c;
    c.tokens = {"the", "cat", "sat", "on", "the", "mat"};
    const Inputs a = make_inputs(c);
    // A repeated word gets the same embedding row.
    CHECK(std::vector<float>(a.x.begin(), a.x.begin() + 6) == std::vector<float>(a.x.begin() + 24, a.x.begin() + 30));
    for (float v : a.x) CHECK((v >= -1.0f && v < 1.0f));
    CHECK(make_inputs(c).x == a.x);
    c.seed = 1;
    CHECK(make_inputs(c).x != a.x);
    const Weights w = make_weights(c);
    const float bound = 1.0f / std::sqrt(6.0f);
    for (float v : w.w_query) CHECK((v >= -bound && v < bound));
    CHECK(w.w_query != w.w_key);
    CHECK(make_weights(c).w_value == w.w_value);
}

TEST_CASE("unravel and element_offset: the one index arithmetic", "[tensor]") {
    // 7 = 0*18 + 1*6 + 0*3 + 1 in [1, 3, 2, 3], worked by hand.
    CHECK(unravel({1, 3, 2, 3}, 7) == Shape{0, 1, 0, 1});
    CHECK(unravel({4}, 3) == Shape{3});
    // The transposed view [1, 2, 3, 3] of a contiguous [1, 3, 2, 3] (strides 18, 3, 6, 1):
    // element (0, 1, 2, 0) sits at 2*6 + 1*3 = 15.
    const Shape shape{1, 2, 3, 3}, strides{18, 3, 6, 1};
    CHECK(element_offset(shape, strides, 0, 1 * 9 + 2 * 3 + 0) == 15);
    CHECK(element_offset(shape, strides, 5, 0) == 5);
}

TEST_CASE("gather's row copies equal an element-by-element read for every layout the engine makes", "[tensor]") {
    // A buffer of distinct numbers; views of it as the engine makes them: contiguous, transposed,
    // a chunk of qkv, a window of the KV cache, an expand with stride 0, a narrowed row of x.
    std::vector<float> buf(2 * 3 * 4 * 5);
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i) * 0.5f - 7.0f;
    const TensorDesc base = contiguous(0, {2, 3, 4, 5});
    std::vector<TensorDesc> views{
        base,
        transpose(base, 1, 2),
        transpose(base, 2, 3),
        narrow_last(view(base, {6, 20}), 5, 10),
        TensorDesc{0, 5, {2, 3, 2, 5}, {60, 20, 5, 1}},    // cache[:, :, 1:3]
        TensorDesc{0, 0, {2, 3, 2, 4, 5}, {60, 20, 0, 5, 1}},  // expand of a [2, 3, 4, 5] along a new axis
        TensorDesc{0, 10, {2, 1, 5}, {60, 5, 1}},            // x[:, 2:3] of [2, 12, 5]
    };
    for (const TensorDesc& t : views) {
        INFO(shape_str(t.shape) << " strides " << shape_str(t.strides) << " offset " << t.offset);
        std::vector<float> by_element;
        for (std::int64_t i = 0; i < t.numel(); ++i)
            by_element.push_back(buf[static_cast<std::size_t>(element_offset(t.shape, t.strides, t.offset, i))]);
        CHECK(gather(buf, t) == by_element);
    }
    // A window reaching past the buffer is refused, not read.
    CHECK_THROWS_AS(gather(buf, TensorDesc{0, 100, {2, 20}, {20, 1}}), std::out_of_range);
}
