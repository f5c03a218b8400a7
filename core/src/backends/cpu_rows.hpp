#pragma once
// The CPU backend's passes along one row of scores (the softmax's and flash's), in SIMD
// registers: a row's max, its shifted exponentials and their sum, a scaling. Written once over
// GCC's vector types and compiled twice on x86-64, for the baseline (SSE2, 4 floats) and for
// AVX2 + FMA (8 floats), the second chosen when the processor has it; in the page, wasm SIMD
// (4 floats). A plain loop gives no such code: GCC keeps a float sum or max in order (one
// addition after another) unless -ffast-math lets it reorder, which the engine never uses.
// The sums are therefore taken in lanes and then added up: the same numbers to rounding.
#include <cstdint>

namespace headsplit::cpu {

// The largest of x[0 .. n); -inf when n == 0. A NaN in x may or may not win.
float row_max(const float* x, std::int64_t n);

// y[j] = e^(x[j] - shift) for j < n, and their sum. x may be y. -inf (a masked score) gives
// exactly 0; so does anything whose exponent is below -87.3. The exponent is expected to be at
// most 0 (scores minus their max). e^ as exp_approx below. (No scale is taken here: a scaled
// score must be rounded before the subtraction, as the scale step stores it, and the AVX2
// copy would fuse x * scale - shift into one rounding.)
float exp_sum(const float* x, float* y, std::int64_t n, float shift);

// y[j] = x[j] * factor for j < n (x may be y).
void scale_row(const float* x, float* y, std::int64_t n, float factor);

// e^x for one float by the same arithmetic as exp_sum's lanes: x = k ln 2 + f with |f| <=
// ln 2 / 2, e^f by its degree-6 Taylor polynomial (relative error under 2e-7 there), 2^k put
// in the exponent bits. For a single number (flash's rescale factor).
float exp_approx(float x);

}  // namespace headsplit::cpu
