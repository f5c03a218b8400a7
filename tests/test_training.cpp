// The tiny model's training (issue 67): its tasks, Adam by hand, the runs that must learn,
// determinism, and what is refused. Gradients and Adam against PyTorch: oracle_train.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/training/trainer.hpp"

using namespace headsplit;

namespace {

// The best score of layer `layer`'s heads.
double best_head(const Probe& p, int layer) {
    double best = 0;
    for (const HeadReport& h : p.heads)
        if (h.name.rfind("L" + std::to_string(layer) + "H", 0) == 0) best = std::max(best, h.score);
    return best;
}

}  // namespace

TEST_CASE("each task's targets follow from its sequence", "[training]") {
    Rng rng(7);
    const TaskBatch copy = make_batch(Task::Copy, 4, rng);
    REQUIRE(copy.tokens == 17);
    for (std::int64_t b = 0; b < 4; ++b) {
        CHECK(copy.id(b, 8) == 10);  // the separator
        for (std::int64_t p = 0; p < 8; ++p) CHECK(copy.target(b, p) == -1);
        for (std::int64_t i = 0; i < 8; ++i) CHECK(copy.target(b, 8 + i) == copy.id(b, i));
        CHECK(copy.target(b, 16) == -1);
    }
    const TaskBatch rev = make_batch(Task::Reverse, 2, rng);
    for (std::int64_t i = 0; i < 8; ++i) CHECK(rev.target(0, 8 + i) == rev.id(0, 7 - i));
    const TaskBatch ind = make_batch(Task::Induction, 16, rng);
    REQUIRE(ind.lag.size() == 16);
    for (std::int64_t b = 0; b < 16; ++b) {
        const int n = ind.lag[static_cast<std::size_t>(b)];
        CHECK(n >= 5);
        CHECK(n <= 11);
        int counted = 0;
        for (std::int64_t p = 0; p < ind.tokens; ++p) {
            if (ind.target(b, p) < 0) continue;
            ++counted;
            CHECK(ind.target(b, p) == ind.id(b, p + 1));
            CHECK(ind.id(b, p + 1) == ind.id(b, p + 1 - n));  // seen n tokens before
        }
        CHECK(counted == n - 1);
    }
    const TaskBatch sort = make_batch(Task::Sort, 3, rng);
    for (std::int64_t b = 0; b < 3; ++b)
        for (std::int64_t p = 5; p + 1 < 11; ++p) {
            CHECK(sort.target(b, p) <= sort.target(b, p + 1));
            CHECK(sort.target(b, p) == sort.id(b, p + 1));
        }
}

TEST_CASE("a head's score is its weight where the task needs it", "[training]") {
    Rng rng(3);
    const TaskBatch copy = make_batch(Task::Copy, 2, rng);
    const std::int64_t T = copy.tokens, H = 2;
    // Head 0 puts all of each row on the source position; head 1 spreads rows evenly.
    std::vector<float> w(static_cast<std::size_t>(2 * H * T * T), 0.0f);
    for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t i = 0; i < T; ++i) {
            const std::int64_t src = i >= 8 && i < 16 ? i - 8 : 0;
            w[static_cast<std::size_t>(((b * H + 0) * T + i) * T + src)] = 1.0f;
            for (std::int64_t j = 0; j <= i; ++j)
                w[static_cast<std::size_t>(((b * H + 1) * T + i) * T + j)] = 1.0f / static_cast<float>(i + 1);
        }
    CHECK(head_score(Task::Copy, copy, 0, H, 0, w) == Approx(1.0));
    // Rows 8..15 give 1/(p+1) each: the mean of 1/9 .. 1/16.
    double even = 0;
    for (int p = 8; p < 16; ++p) even += 1.0 / (p + 1);
    CHECK(head_score(Task::Copy, copy, 0, H, 1, w) == Approx(even / 8));
    CHECK(head_score(Task::Reverse, copy, 0, H, 0, w) < 0.2);  // the copy's positions are not the reverse's
}

TEST_CASE("Adam's first step moves each weight by lr against its gradient's sign", "[training]") {
    // m = 0.1 g, v = 0.001 g^2: m / (1 - 0.9) over sqrt(v / (1 - 0.999)) = g / |g|.
    Adam adam;
    adam.lr = 0.01;
    std::vector<float> p{1.0f, -2.0f, 0.5f}, g{3.0f, -0.25f, 0.0f};
    adam.update({&p}, {&g});
    CHECK(p[0] == Approx(0.99).epsilon(1e-6));
    CHECK(p[1] == Approx(-1.99).epsilon(1e-6));
    CHECK(p[2] == 0.5f);  // no gradient, no move
    // Second step with the same gradient: m = 0.19 g, v = 0.001999 g^2, corrected to g and g^2.
    adam.update({&p}, {&g});
    CHECK(p[0] == Approx(0.98).epsilon(1e-6));
}

TEST_CASE("copy reaches its accuracy and its head within 200 steps", "[training]") {
    auto cpu = make_cpu_backend();
    TrainConfig c;
    c.task = Task::Copy;
    Trainer t(c, *cpu);
    StepResult r;
    for (int s = 0; s < 200; ++s) r = t.step();
    const Probe p = t.probe();
    CHECK(p.result.accuracy >= 0.99);
    CHECK(best_head(p, 0) >= 0.8);
    CHECK(p.result.loss < 0.05);
}

TEST_CASE("induction grows a previous-token head and an induction head within 800 steps", "[training][slow]") {
    auto cpu = make_cpu_backend();
    for (std::uint64_t seed : {1, 2, 3}) {
        TrainConfig c;
        c.task = Task::Induction;
        c.seed = seed;
        Trainer t(c, *cpu);
        Probe p;
        for (int s = 1; s <= 800; ++s) {
            t.step();
            if (s % 100 != 0) continue;
            p = t.probe();
            if (best_head(p, 0) >= 0.7 && best_head(p, 1) >= 0.8) break;
        }
        INFO("seed " << seed << " after " << t.steps_done() << " steps");
        CHECK(best_head(p, 0) >= 0.7);  // a previous-token head in layer 0
        CHECK(best_head(p, 1) >= 0.8);  // an induction head in layer 1
        CHECK(p.result.accuracy >= 0.8);
    }
}

TEST_CASE("the same seed gives the same losses; another seed others", "[training]") {
    auto cpu = make_cpu_backend();
    TrainConfig c;
    c.task = Task::Reverse;
    c.steps = 15;
    const auto losses = [&](std::uint64_t seed) {
        c.seed = seed;
        Trainer t(c, *cpu);
        std::vector<double> out;
        for (int s = 0; s < 15; ++s) out.push_back(t.step().loss);
        return out;
    };
    const std::vector<double> a = losses(4);
    CHECK(losses(4) == a);
    CHECK(losses(5) != a);
}

TEST_CASE("heads started alike stay alike", "[training]") {
    auto cpu = make_cpu_backend();
    TrainConfig c;
    c.task = Task::Copy;
    c.identical_heads = true;
    Trainer t(c, *cpu);
    for (int s = 0; s < 30; ++s) t.step();
    const Probe p = t.probe();
    CHECK(p.heads[0].score == Approx(p.heads[1].score).epsilon(1e-5));
    const std::vector<float>& wq = t.model().attention[0].w_query;
    const std::size_t block = wq.size() / 2;
    double diff = 0;
    for (std::size_t i = 0; i < block; ++i) diff = std::max(diff, static_cast<double>(std::fabs(wq[i] - wq[block + i])));
    CHECK(diff < 1e-5);
}

TEST_CASE("a step that overflows stops with one line and keeps the model", "[training]") {
    auto cpu = make_cpu_backend();
    TrainConfig c;
    c.task = Task::Copy;
    Trainer t(c, *cpu);
    t.step();
    std::vector<float> huge = t.model().embed;
    for (float& v : huge) v = v * 1e36f;
    t.set_parameter("embed", huge);
    const std::vector<float> before = t.model().attention[0].w_query;
    try {
        t.step();
        FAIL("an overflowing step trained on");
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        CHECK(what.find('\n') == std::string::npos);
        CHECK(what.find("not finite") != std::string::npos);
    }
    CHECK(t.model().attention[0].w_query == before);
    CHECK(t.steps_done() == 1);
}

TEST_CASE("bad training settings are refused in one line naming them", "[training]") {
    const auto refused = [](TrainConfig c, const std::string& want) {
        try {
            validate(with_defaults(c));
            FAIL("accepted: " << want);
        } catch (const ConfigError& e) {
            CHECK_THAT(e.what(), Catch::Contains(want));
        }
    };
    TrainConfig c;
    TrainConfig bad = c;
    bad.lr = -1;
    refused(bad, "--lr -1");
    bad.lr = std::numeric_limits<double>::quiet_NaN();
    refused(bad, "--lr nan");
    bad = c;
    bad.heads = 3;
    refused(bad, "--heads 3 does not divide --d-model 32");
    bad = c;
    bad.batch = 4096;
    bad.d_model = 1024;
    bad.memory_budget = 64 << 20;
    refused(bad, "over the memory budget");
    bad = c;
    bad.mode = Mode::Flash;
    refused(bad, "--mode flash");
    CHECK_THROWS_AS(parse_task("copyy"), ConfigError);
}

TEST_CASE("the loss cliff is where the curve falls the most", "[training]") {
    // 3.0 for 100 steps, a fall to 0.5 over steps 101 to 110, then 0.5.
    std::vector<double> curve;
    for (int i = 0; i < 100; ++i) curve.push_back(3.0);
    for (int i = 0; i < 10; ++i) curve.push_back(3.0 - 0.25 * (i + 1));
    for (int i = 0; i < 100; ++i) curve.push_back(0.5);
    const std::int64_t cliff = loss_cliff(curve, 20);
    CHECK(cliff >= 101);
    CHECK(cliff <= 110);
    CHECK(loss_cliff(std::vector<double>(200, 2.0), 20) == 0);      // flat: none
    CHECK(loss_cliff(std::vector<double>(30, 2.0), 20) == 0);       // too short to say
    std::vector<double> slow;
    for (int i = 0; i < 200; ++i) slow.push_back(3.0 - 0.001 * i);  // a slope, no cliff
    CHECK(loss_cliff(slow, 20) == 0);
}

TEST_CASE("the scores' scale: 1/sqrt(head_dim), 1/head_dim or none", "[training]") {
    Config c;
    c.d_out = 32;
    c.heads = 2;  // head_dim 16
    CHECK(c.scale_factor() == 0.25f);
    c.scale = Scale::HeadDim;
    CHECK(c.scale_factor() == 0.0625f);
    c.scale = Scale::None;
    CHECK(c.scale_factor() == 1.0f);
    CHECK(std::string(scale_name(Scale::HeadDim)) == "head_dim");
}

TEST_CASE("an ablated head writes nothing from its step on, and the loss jumps", "[training]") {
    auto cpu = make_cpu_backend();
    TrainConfig c;
    c.task = Task::Copy;
    c.ablate_at = 41, c.ablate_layer = 0, c.ablate_head = 1;
    Trainer t(c, *cpu);
    double before = 0, after = 0;
    for (int s = 1; s <= 60; ++s) {
        const double loss = t.step().loss;
        if (s == 40) before = loss;
        if (s == 41) after = loss;
    }
    CHECK(after > before);  // the head the copy used is gone
    const std::vector<float>& w = t.model().attention[0].w_out;
    const std::int64_t d = 32, hd = 16;
    double ablated = 0, kept = 0;
    for (std::int64_t r = 0; r < d; ++r)
        for (std::int64_t j = 0; j < d; ++j)
            (j >= hd ? ablated : kept) += std::fabs(w[static_cast<std::size_t>(r * d + j)]);
    CHECK(ablated == 0.0);
    CHECK(kept > 0.0);
}
