#include "cpu_rows.hpp"

#include <cstring>
#include <limits>

namespace headsplit::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kFloor = -87.3f;  // below this e^x is under float's smallest normal: 0

// W floats in one register (GCC's and clang's vector types; arithmetic is lane by lane), and
// W 32-bit integers for the masks that comparisons give and for the exponent bits.
template <int W>
struct Lanes {
    typedef float F __attribute__((vector_size(4 * W)));
    typedef std::int32_t I __attribute__((vector_size(4 * W)));
    typedef std::uint32_t U __attribute__((vector_size(4 * W)));
};

// Helpers take their vectors by reference, so no vector crosses a call in registers: the
// baseline copy never passes an 8-float vector (whose calling convention needs AVX).
template <class To, class From>
inline __attribute__((always_inline)) void bits(const From& from, To& to) {
    static_assert(sizeof(To) == sizeof(From), "same width");
    std::memcpy(&to, &from, sizeof to);
}

// where mask: a, else b (mask lanes are all ones or all zeros, as comparisons give).
template <int W>
inline __attribute__((always_inline)) void select(const typename Lanes<W>::I& mask, const typename Lanes<W>::F& a,
                                                  const typename Lanes<W>::F& b, typename Lanes<W>::F& out) {
    typename Lanes<W>::I ai, bi;
    bits(a, ai);
    bits(b, bi);
    const typename Lanes<W>::I r = (mask & ai) | (~mask & bi);
    bits(r, out);
}

// e^x in every lane (exp_approx's arithmetic).
template <int W>
inline __attribute__((always_inline)) void exp_lanes(const typename Lanes<W>::F& x, typename Lanes<W>::F& y) {
    using F = typename Lanes<W>::F;
    using I = typename Lanes<W>::I;
    using U = typename Lanes<W>::U;
    const F floor = F{} + kFloor;
    const I low_lanes = x < floor;  // all ones where x is below the floor (or -inf)
    F xi;
    select<W>(low_lanes, floor, x, xi);
    constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
    const F shifted = xi * 1.44269504f + kRound;
    const F k = shifted - kRound;  // round(x / ln 2)
    const F f = (xi - k * 0.693145751953125f) - k * 1.428606765330187e-06f;
    F p = F{} + 1.0f / 720;
    p = p * f + 1.0f / 120;
    p = p * f + 1.0f / 24;
    p = p * f + 1.0f / 6;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    // 2^k from the integer in `shifted`'s low bits, in unsigned arithmetic (a NaN stays a NaN).
    U low;
    bits(shifted, low);
    const U e = (low - 0x4B400000u + 127u) << 23;
    F two_k;
    bits(e, two_k);
    const F value = p * two_k;
    select<W>(low_lanes, F{}, value, y);
}

template <int W>
inline __attribute__((always_inline)) float max_of(const float* x, std::int64_t n) {
    using F = typename Lanes<W>::F;
    F acc = F{} + kNegInf;
    std::int64_t j = 0;
    for (; j + W <= n; j += W) {
        F v;
        std::memcpy(&v, x + j, sizeof v);
        select<W>(acc < v, v, acc, acc);
    }
    float m = kNegInf;
    for (int i = 0; i < W; ++i) m = acc[i] > m ? acc[i] : m;
    for (; j < n; ++j) m = x[j] > m ? x[j] : m;
    return m;
}

template <int W>
inline __attribute__((always_inline)) float exp_sum_of(const float* x, float* y, std::int64_t n, float shift) {
    using F = typename Lanes<W>::F;
    F sum = F{};
    std::int64_t j = 0;
    for (; j + W <= n; j += W) {
        F v;
        std::memcpy(&v, x + j, sizeof v);
        v = v - shift;
        exp_lanes<W>(v, v);
        std::memcpy(y + j, &v, sizeof v);
        sum += v;
    }
    if (j < n) {  // the last n - j: the lanes beyond them hold -inf, whose e^ is 0
        float tail[W];
        for (int i = 0; i < W; ++i) tail[i] = j + i < n ? x[j + i] - shift : kNegInf;
        F v;
        std::memcpy(&v, tail, sizeof v);
        exp_lanes<W>(v, v);
        std::memcpy(tail, &v, sizeof v);
        for (std::int64_t i = 0; j + i < n; ++i) y[j + i] = tail[i];
        sum += v;
    }
    float total = 0;
    for (int i = 0; i < W; ++i) total += sum[i];
    return total;
}

template <int W>
inline __attribute__((always_inline)) void scale_of(const float* x, float* y, std::int64_t n, float factor) {
    using F = typename Lanes<W>::F;
    std::int64_t j = 0;
    for (; j + W <= n; j += W) {
        F v;
        std::memcpy(&v, x + j, sizeof v);
        v *= factor;
        std::memcpy(y + j, &v, sizeof v);
    }
    for (; j < n; ++j) y[j] = x[j] * factor;
}

struct Kernels {
    float (*max)(const float*, std::int64_t);
    float (*exp_sum)(const float*, float*, std::int64_t, float);
    void (*scale)(const float*, float*, std::int64_t, float);
};

float max4(const float* x, std::int64_t n) { return max_of<4>(x, n); }
float exp_sum4(const float* x, float* y, std::int64_t n, float t) { return exp_sum_of<4>(x, y, n, t); }
void scale4(const float* x, float* y, std::int64_t n, float f) { scale_of<4>(x, y, n, f); }

#if defined(__x86_64__) && defined(__GNUC__)
#define HEADSPLIT_AVX2 __attribute__((target("avx2,fma")))
HEADSPLIT_AVX2 float max8(const float* x, std::int64_t n) { return max_of<8>(x, n); }
HEADSPLIT_AVX2 float exp_sum8(const float* x, float* y, std::int64_t n, float t) { return exp_sum_of<8>(x, y, n, t); }
HEADSPLIT_AVX2 void scale8(const float* x, float* y, std::int64_t n, float f) { scale_of<8>(x, y, n, f); }
#endif

Kernels choose() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {max8, exp_sum8, scale8};
#endif
    return {max4, exp_sum4, scale4};
}

const Kernels& kernels() {
    static const Kernels k = choose();
    return k;
}

}  // namespace

float row_max(const float* x, std::int64_t n) { return kernels().max(x, n); }

float exp_sum(const float* x, float* y, std::int64_t n, float shift) { return kernels().exp_sum(x, y, n, shift); }

void scale_row(const float* x, float* y, std::int64_t n, float factor) { kernels().scale(x, y, n, factor); }

float exp_approx(float x) {
    float y;
    exp_sum_of<4>(&x, &y, 1, 0.0f);
    return y;
}

}  // namespace headsplit::cpu
