// Flash's attention alone on the GL backend against split's: one flash_attention call over
// gpt2-small's shapes (12 heads of 64, causal, T rows) against split's Q @ K^T, masked
// softmax and P @ V, alternating, medians and minimums of RUNS, and the largest difference of
// their outputs. A benchmark for docs/benchmarks.md, not a test. From the source tree, after make:
//
//   g++ -O2 -std=c++17 -Icore/include tools/gl_flash_bench.cpp build/core/libheadsplit_core.a
//       -lepoxy -lEGL -lopenblas -licuuc -licui18n -lpthread -o /tmp/gl_flash_bench   (one line)
//   /tmp/gl_flash_bench [T=512] [RUNS=9]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "headsplit/backends/gl_backend.hpp"

using namespace headsplit;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    const std::int64_t T = argc > 1 ? std::atoll(argv[1]) : 512, H = 12, hd = 64;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 9;
    const auto be = make_gl_backend();
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto filled = [&](std::int64_t n) {
        const int b = be->create_buffer(n);
        std::vector<float> v(static_cast<std::size_t>(n));
        for (float& x : v) x = normal(rng);
        be->write(b, v);
        return b;
    };
    const std::int64_t n = H * T * hd;
    const auto heads = [&](int buffer) { return TensorDesc{buffer, 0, {1, H, T, hd}, {n, T * hd, hd, 1}}; };
    const auto grid = [&](int buffer) { return TensorDesc{buffer, 0, {1, H, T, T}, {H * T * T, T * T, T, 1}}; };
    const auto rows = [&](int buffer) { return TensorDesc{buffer, 0, {1, H, T}, {H * T, T, 1}}; };
    const TensorDesc q = heads(filled(n)), k = heads(filled(n)), v = heads(filled(n));
    const TensorDesc acc = heads(filled(n)), context = heads(filled(n));
    const TensorDesc scores = grid(filled(H * T * T)), weights = grid(filled(H * T * T));
    FlashArgs f;
    f.q = q, f.k = k, f.v = v, f.acc = acc;
    f.m = rows(filled(H * T)), f.l = rows(filled(H * T));
    f.factor = 0.125f, f.causal = f.normalize = true, f.block = 64;
    f.q_end = f.k_end = T;
    std::vector<double> flash, split;
    const auto ms = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
    };
    for (int r = 0; r <= runs; ++r) {  // run 0 warms up
        const auto t0 = Clock::now();
        be->flash_attention(f);
        be->finish();
        const auto t1 = Clock::now();
        be->causal_matmul(q, k, true, scores, true);
        be->masked_softmax(scores, weights, f.factor, true, nullptr);
        be->causal_matmul(weights, v, false, context, false);
        be->finish();
        const auto t2 = Clock::now();
        if (r == 0) continue;
        flash.push_back(ms(t0, t1));
        split.push_back(ms(t1, t2));
    }
    std::sort(flash.begin(), flash.end());
    std::sort(split.begin(), split.end());
    std::vector<float> a, c;
    be->read(acc.buffer, a);
    be->read(context.buffer, c);
    double diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(a[i] - c[i])));
    std::printf("%s\nT = %lld: flash median %.1f ms (min %.1f), split's attention median %.1f ms (min %.1f), "
                "flash / split %.2f; largest difference %.2g\n",
                gl_renderer().c_str(), static_cast<long long>(T), flash[flash.size() / 2], flash[0],
                split[split.size() / 2], split[0], flash[flash.size() / 2] / split[split.size() / 2], diff);
    return 0;
}
