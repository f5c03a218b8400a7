// Softmax rows sum to 1; masked entries are -inf before softmax and exactly 0 after.
#include <catch2/catch.hpp>

#include <cmath>

#include "helpers.hpp"

using namespace headsplit;

TEST_CASE("attention weights: rows sum to 1 and the future is -inf then exactly 0", "[softmax]") {
    const auto mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const std::int64_t T = GENERATE(1, 3, 17);
    const bool scale_first = GENERATE(false, true);
    Config c;
    c.mode = mode;
    c.tokens = synthetic_tokens(T);
    c.d_in = 8;
    c.d_out = 12;
    c.heads = 4;
    c.scale_first = scale_first;
    c.seed = 7;
    const Trace tr = test::run_cpu(c);
    INFO("mode " << mode_name(mode) << " T " << T << " scale_first " << scale_first);
    int softmax_steps = 0;
    for (std::size_t i = 0; i < tr.steps.size(); ++i) {
        const Step& s = tr.steps[i];
        if (s.op != Op::Softmax) continue;
        ++softmax_steps;
        // The scores that went in: the step before softmax (mask or scale, whichever ran last).
        const auto& scores = tr.steps[i - 1].tensors[0].data;
        const auto& weights = s.tensors[0].data;
        REQUIRE(scores.size() == weights.size());
        for (std::size_t r = 0; r < weights.size() / T; ++r) {
            const std::int64_t row = r % T;  // token index of this row
            double sum = 0;
            for (std::int64_t j = 0; j < T; ++j) {
                const float sc = scores[r * T + j], wt = weights[r * T + j];
                REQUIRE_FALSE(std::isnan(wt));
                if (j > row) {
                    CHECK(sc == -INFINITY);
                    CHECK(wt == 0.0f);
                } else {
                    CHECK(std::isfinite(sc));
                    CHECK(wt > 0.0f);
                }
                sum += wt;
            }
            CHECK(sum == Approx(1.0).margin(1e-6));
        }
    }
    CHECK(softmax_steps == (mode == Mode::Loop ? 4 : 1));
}

TEST_CASE("without the causal mask nothing is -inf and every weight is positive", "[softmax]") {
    Config c;
    c.causal = false;
    const Trace tr = test::run_cpu(c);
    for (const auto& s : tr.steps)
        for (const auto& t : s.tensors)
            for (float v : t.data) REQUIRE(std::isfinite(v));
    for (float w : test::find_step(tr, Op::Softmax)->tensors[0].data) CHECK(w > 0.0f);
}
