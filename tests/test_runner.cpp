// The Runner the bench times: trace on and trace off give identical outputs, later runs
// allocate nothing, and the projections stage stops after Q, K, V.
#include <catch2/catch.hpp>

#include "headsplit/backends/gl_backend.hpp"
#include "helpers.hpp"

using namespace headsplit;

TEST_CASE("trace on and trace off give identical outputs", "[runner]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const bool gl = GENERATE(false, true);
    Config c;
    c.mode = mode;
    c.tokens = synthetic_tokens(17);
    c.d_in = 24;
    c.d_out = 36;
    c.heads = 6;
    c.dropout = 0.1;
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    std::unique_ptr<Backend> backend = gl ? make_gl_backend() : make_cpu_backend();
    Runner runner(c, in, w, *backend);
    const Trace on = runner.run();
    const Trace off = runner.run({false, false});
    const Trace on_again = runner.run();
    INFO(mode_name(mode) << (gl ? " gl" : " cpu"));
    REQUIRE(test::op_list(off) == test::op_list(on));
    CHECK(off.steps.back().tensors.back().values() == on.steps.back().tensors.back().values());
    CHECK(on_again.steps.back().tensors.back().values() == on.steps.back().tensors.back().values());
    // Off records no values but the output's.
    for (std::size_t s = 0; s + 1 < off.steps.size(); ++s)
        for (const auto& t : off.steps[s].tensors) CHECK(t.values().empty());
    CHECK(off.weights.w_query.empty());
    // The second and third runs allocate nothing.
    std::int64_t created = 0;
    for (const Trace* t : {&off, &on_again})
        for (const auto& s : t->steps) created += s.stats.buffers_created;
    CHECK(created == 0);
}

TEST_CASE("the projections stage stops after Q, K and V", "[runner]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    Config c;
    c.mode = mode;
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    auto backend = make_cpu_backend();
    const Trace full = run(c, in, w, *backend);
    Runner runner(c, in, w, *backend);
    const Trace proj = runner.run({true, true});
    std::int64_t matmuls = 0;
    for (const Step& s : proj.steps) {
        CHECK((s.op == Op::Input || s.op == Op::Project || s.op == Op::Split));
        matmuls += s.matmuls;
    }
    CHECK(matmuls == (mode == Mode::Loop ? 6 : mode == Mode::Split ? 3 : 1));
    // The same queries as the full pass.
    const Step* fq = test::find_step(full, Op::Project, mode == Mode::Loop ? 1 : -1);
    const Step* pq = test::find_step(proj, Op::Project, mode == Mode::Loop ? 1 : -1);
    CHECK(fq->tensors[0].values() == pq->tensors[0].values());
}

TEST_CASE("the loop mode uploads its weights once for all heads", "[runner]") {
    // Each head multiplies by a window on the same weight buffers: loop mode holds what
    // split mode holds (the same weights, Q/K/V split into head-sized pieces).
    Config c;
    c.tokens = synthetic_tokens(16);
    c.d_in = c.d_out = 64;
    c.heads = 8;
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    auto held_after_projections = [&](Mode mode) {
        c.mode = mode;
        auto backend = make_cpu_backend();
        Runner runner(c, in, w, *backend);
        runner.run({false, true});
        return backend->held_bytes();
    };
    const std::int64_t split = held_after_projections(Mode::Split);
    CHECK(split > 3 * 64 * 64 * 4);
    CHECK(held_after_projections(Mode::Loop) == split);
}
