// loop, split and fused compute the same function: same weights, same attention, same
// output, on generated shapes.
#include <catch2/catch.hpp>

#include "helpers.hpp"

using namespace headsplit;
using headsplit::test::Case;
using headsplit::test::config_of;

namespace {

// The layer's result: output, or the merged context when there is no output projection.
const std::vector<float>& result(const Trace& tr) { return tr.steps.back().tensors.back().values(); }

// The attention weights actually used for the context (after dropout, when there is some).
const TensorRecord& used_weights(const Trace& tr, int head) {
    const Step* d = test::find_step(tr, Op::Dropout, head);
    return d ? *d->find("attn_weights") : test::find_step(tr, Op::Softmax, head)->tensors[0];
}

}  // namespace

TEST_CASE("loop and split and fused agree within 1e-5", "[modes]") {
    // 24 shapes: T = 1, 3, 17, 65; heads = 1 and heads = D_out; D_in != D_out; every switch.
    const Case k = GENERATE(values<Case>({
        {3, 6, 6, 2},
        {1, 6, 6, 2},
        {3, 6, 6, 1},
        {3, 6, 6, 6},
        {3, 6, 6, 3},
        {6, 3, 6, 3},
        {17, 5, 20, 4},
        {17, 20, 5, 5},
        {65, 16, 64, 8},
        {65, 33, 17, 17},
        {2, 1, 1, 1},
        {1, 7, 12, 12},
        {4, 6, 6, 2, false},
        {5, 8, 8, 4, true, 0.25},
        {5, 8, 8, 2, false, 0.5},
        {3, 6, 6, 2, true, 0.0, true},
        {9, 10, 12, 3, true, 0.1, true, false},
        {3, 6, 6, 2, true, 0.0, false, false},
        {7, 12, 12, 4, true, 0.0, false, true, true},
        {7, 12, 12, 4, false, 0.0, true, true, true},
        {17, 768, 768, 12},
        {3, 64, 96, 96},
        {33, 24, 48, 1, true, 0.3, true, true, true},
        {12, 40, 60, 15},
    }));
    INFO(k);
    const Trace loop = test::run_cpu(config_of(k, Mode::Loop));
    const Trace split = test::run_cpu(config_of(k, Mode::Split));
    const Trace fused = test::run_cpu(config_of(k, Mode::Fused));

    // Why 1e-5: the three modes run the same products in float32; only how BLAS blocks the
    // sums differs, which moves the last bit or two of values of order 1.
    const double tol = 1e-5;
    CHECK(test::max_abs_diff(result(loop), result(split)) <= tol);
    CHECK(test::max_abs_diff(result(fused), result(split)) <= tol);

    // Every head's attention weights and context, loop head by head against the batched modes.
    const TensorRecord& split_w = used_weights(split, -1);
    const TensorRecord& fused_w = used_weights(fused, -1);
    const TensorRecord& split_ctx = test::find_step(split, Op::Context)->tensors[0];
    const TensorRecord& fused_ctx = test::find_step(fused, Op::Context)->tensors[0];
    CHECK(test::max_abs_diff(split_w.values(), fused_w.values()) <= tol);
    CHECK(test::max_abs_diff(split_ctx.values(), fused_ctx.values()) <= tol);
    for (int h = 0; h < k.heads; ++h) {
        INFO("head " << h);
        CHECK(test::max_abs_diff(used_weights(loop, h).values(), test::head_block(split_w, h)) <= tol);
        CHECK(test::max_abs_diff(test::find_step(loop, Op::Context, h)->tensors[0].values(),
                                 test::head_block(split_ctx, h)) <= tol);
    }

    // The lesson in numbers: 3 x heads projection matmuls, 3, and 1.
    auto projections = [](const Trace& tr) {
        std::int64_t n = 0;
        for (const auto& s : tr.steps) n += s.op == Op::Project ? s.matmuls : 0;
        return n;
    };
    CHECK(projections(loop) == 3 * k.heads);
    CHECK(projections(split) == 3);
    CHECK(projections(fused) == 1);
}
