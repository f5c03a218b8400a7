// A 2-token example small enough to check on paper.
#include <catch2/catch.hpp>

#include <cmath>

#include "helpers.hpp"

using namespace headsplit;

TEST_CASE("two tokens and one head worked out by hand", "[handworked]") {
    Config c;
    c.tokens = {"a", "b"};
    c.d_in = 2;
    c.d_out = 2;
    c.heads = 1;  // head_dim = 2
    Inputs in;
    in.x = {1, 0,   // "a"
            0, 1};  // "b"
    Weights w;
    // nn.Linear layout [out, in]: y = x @ W^T. Identity queries and keys, so q = k = x.
    w.w_query = {1, 0, 0, 1};
    w.w_key = {1, 0, 0, 1};
    // values: v_a = W[:, 0] = (1, 3), v_b = W[:, 1] = (2, 4).
    w.w_value = {1, 2, 3, 4};
    // output: swap the two features, then add (0.5, -0.5).
    w.w_out = {0, 1, 1, 0};
    w.b_out = {0.5f, -0.5f};

    auto backend = make_cpu_backend();
    const Trace tr = run(c, in, w, *backend);
    auto data = [&](Op op, const char* name) { return test::find_step(tr, op)->find(name)->values(); };
    const float inf = INFINITY;

    // scores = q @ k^T = I.
    CHECK(data(Op::Scores, "attn_scores") == std::vector<float>{1, 0, 0, 1});
    // Causal mask: "a" may not see "b".
    CHECK(data(Op::Mask, "attn_scores") == std::vector<float>{1, -inf, 0, 1});
    // Divide by sqrt(2): 1 / 1.41421 = 0.70711.
    const auto scaled = data(Op::Scale, "attn_scores");
    CHECK(scaled[0] == Approx(0.7071068f));
    CHECK(scaled[1] == -inf);
    CHECK(scaled[2] == 0.0f);
    CHECK(scaled[3] == Approx(0.7071068f));
    // Row "a" keeps all its weight on itself; row "b": e^0 : e^0.70711 = 1 : 2.02811, so
    // 1 / 3.02811 = 0.33024 and 2.02811 / 3.02811 = 0.66976.
    const auto weights = data(Op::Softmax, "attn_weights");
    CHECK(weights[0] == 1.0f);
    CHECK(weights[1] == 0.0f);
    CHECK(weights[2] == Approx(0.3302385f).epsilon(1e-6));
    CHECK(weights[3] == Approx(0.6697615f).epsilon(1e-6));
    // context: "a" -> v_a = (1, 3); "b" -> 0.33024 (1, 3) + 0.66976 (2, 4) = (1.66976, 3.66976).
    const auto ctx = data(Op::Merge, "context_vec");
    CHECK(ctx[0] == Approx(1.0f));
    CHECK(ctx[1] == Approx(3.0f));
    CHECK(ctx[2] == Approx(1.6697615f).epsilon(1e-6));
    CHECK(ctx[3] == Approx(3.6697615f).epsilon(1e-6));
    // output: swapped plus bias: (3.5, 0.5) and (4.16976, 1.16976).
    const auto out = data(Op::OutProj, "output");
    CHECK(out[0] == Approx(3.5f));
    CHECK(out[1] == Approx(0.5f));
    CHECK(out[2] == Approx(4.1697615f).epsilon(1e-6));
    CHECK(out[3] == Approx(1.1697615f).epsilon(1e-6));
    // FLOPs: 3 projections of 2x2x2 (16 each), scores and context 2x2x2 (16 each), out 16.
    double flops = 0;
    for (const auto& s : tr.steps) flops += s.flops;
    CHECK(flops == 3 * 16 + 16 + 16 + 16);
}
