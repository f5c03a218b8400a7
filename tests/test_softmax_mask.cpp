// Softmax rows sum to 1; masked entries are -inf before softmax and exactly 0 after.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "headsplit/backends/gl_backend.hpp"
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
        const auto& scores = tr.steps[i - 1].tensors[0].values();
        const auto& weights = s.tensors[0].values();
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
            for (float v : t.values()) REQUIRE(std::isfinite(v));
    for (float w : test::find_step(tr, Op::Softmax)->tensors[0].values()) CHECK(w > 0.0f);
}

TEST_CASE("the CPU's softmax in SIMD lanes: every row length, against a softmax in double", "[softmax]") {
    // Rows of 1 to 41 numbers (every remainder of 4 and 8 lanes, so the tails are met), spread
    // over [-40, 6] with some -inf (a masked key), one row all equal and one with a single
    // finite key. The expectation is e^ of std::exp in double, not the kernel's polynomial.
    auto be = make_cpu_backend();
    Rng rng(11);
    const float ninf = -std::numeric_limits<float>::infinity();
    double worst = 0;
    for (std::int64_t n = 1; n <= 41; ++n)
        for (int kind = 0; kind < 3; ++kind) {
            std::vector<float> x(static_cast<std::size_t>(n));
            for (std::int64_t j = 0; j < n; ++j) {
                x[j] = kind == 1 ? 0.25f : rng.uniform(-40.0f, 6.0f);
                if (kind == 0 && j % 5 == 3) x[j] = ninf;
                if (kind == 2 && j != n / 2) x[j] = ninf;
            }
            if (kind == 0 && n % 5 == 4) x[0] = 1.0f;  // at least one finite key
            const int in = be->create_buffer(n), out = be->create_buffer(n);
            be->write(in, x);
            be->softmax(contiguous(in, {1, n}), contiguous(out, {1, n}));
            std::vector<float> y;
            be->read(out, y);
            double mx = -INFINITY, sum = 0;
            for (float v : x) mx = std::max(mx, static_cast<double>(v));
            for (float v : x) sum += std::exp(static_cast<double>(v) - mx);
            for (std::int64_t j = 0; j < n; ++j) {
                const double want = std::exp(static_cast<double>(x[j]) - mx) / sum;
                INFO("n " << n << " kind " << kind << " j " << j << " x " << x[j]);
                // Relative: the polynomial's 2e-7 and the sum's rounding, plus the float
                // subtraction x - max, off by up to half an ulp of the difference.
                const double tol = want * (1e-6 + 6e-8 * std::fabs(x[j] - mx));
                if (x[j] == ninf) REQUIRE(y[j] == 0.0f);
                else REQUIRE(std::fabs(y[j] - want) <= tol);
                worst = std::max(worst, std::fabs(y[j] - want) / std::max(want, 1e-30));
            }
            be->release_buffers();
        }
    CHECK(worst > 0);  // the polynomial is not exact: the comparison sees it
}

TEST_CASE("a CPU trace makes its score grids when first read, as the GL backend computed them", "[softmax][gl]") {
    // 4 heads x 70 x 70: the scores, mask, scale and softmax steps are left to GridValues on
    // the CPU (the run takes the one pass) and read back step by step on GL.
    const Mode mode = GENERATE(Mode::Split, Mode::Fused);
    Config c;
    c.mode = mode;
    c.tokens = synthetic_tokens(70);
    c.d_in = 12;
    c.d_out = 32;
    c.heads = 4;
    const Trace cpu = test::run_cpu(c);
    c.backend = BackendKind::Gl;
    auto gl_be = make_gl_backend();
    const Trace gl = run(c, make_inputs(c), make_weights(c), *gl_be);
    REQUIRE(test::op_list(cpu) == test::op_list(gl));
    int deferred = 0;
    for (std::size_t i = 0; i < cpu.steps.size(); ++i)
        for (std::size_t t = 0; t < cpu.steps[i].tensors.size(); ++t) {
            const TensorRecord& mine = cpu.steps[i].tensors[t];
            const TensorRecord& theirs = gl.steps[i].tensors[t];
            INFO("step " << i << " " << op_name(cpu.steps[i].op) << " " << mine.name);
            if (mine.data.empty()) {
                REQUIRE(mine.deferred);
                ++deferred;
            }
            CHECK_FALSE(theirs.data.empty());
            REQUIRE(static_cast<std::int64_t>(mine.values().size()) == numel(mine.shape));
            CHECK(test::max_abs_diff(mine.values(), theirs.values()) <= 1e-4);
        }
    CHECK(deferred == 4);  // scores, mask, scale, softmax
}

TEST_CASE("the one-pass mask, scale and softmax equals the four steps, on both backends", "[softmax][fused]") {
    // Scores [2, 3, 4, 6] (two sentences, three heads, 4 queries against 6 keys, the second
    // sentence's last two keys padded), and a [2, 5, 5] loop-mode grid; causal or not.
    const bool gl = GENERATE(false, true);
    const bool causal = GENERATE(false, true);
    std::unique_ptr<Backend> be = gl ? make_gl_backend() : make_cpu_backend();
    for (const Shape& shape : {Shape{2, 3, 4, 6}, Shape{2, 5, 5}}) {
        INFO((gl ? "gl " : "cpu ") << shape_str(shape) << " causal " << causal);
        const std::int64_t n = numel(shape), S = shape.back();
        std::vector<float> values(static_cast<std::size_t>(n));
        Rng rng(11);
        for (float& v : values) v = rng.uniform(-3.0f, 3.0f);
        std::vector<float> mask(static_cast<std::size_t>(2 * S), 0.0f);
        mask[static_cast<std::size_t>(2 * S - 1)] = mask[static_cast<std::size_t>(2 * S - 2)] = 1.0f;
        const int a = be->create_buffer(n), b = be->create_buffer(n), m = be->create_buffer(2 * S);
        const int fused_out = be->create_buffer(n);
        be->write(a, values);
        be->write(b, values);
        be->write(m, mask);
        const TensorDesc km = contiguous(m, {2, S});
        // The steps one by one on a, then the fused pass reading b.
        if (causal) be->causal_mask(contiguous(a, shape));
        be->masked_fill(contiguous(a, shape), km);
        be->scale(contiguous(a, shape), 0.5f);
        const int steps_out = be->create_buffer(n);
        be->softmax(contiguous(a, shape), contiguous(steps_out, shape));
        be->masked_softmax(contiguous(b, shape), contiguous(fused_out, shape), 0.5f, causal, &km);
        be->finish();
        std::vector<float> want, got, scores_after;
        be->read(steps_out, want);
        be->read(fused_out, got);
        be->read(b, scores_after);
        CHECK(test::max_abs_diff(want, got) <= 1e-6);
        CHECK(scores_after == values);  // the fused pass only reads the scores
        std::int64_t zeros = 0;
        for (float v : got) zeros += v == 0.0f;
        CHECK(zeros >= 2 * (n / (2 * S)) / 2);  // the padded keys of the second sentence at least
        be->release_buffers();
    }
}

TEST_CASE("skipping the work above the diagonal changes no number that is read", "[softmax][fused][causal]") {
    // Q K^T and weights @ V over three row blocks (T = 300): the scores on and below the
    // diagonal and the whole context equal the full matmul's; then whole passes recording
    // nothing (where the skip is taken) equal recorded ones (where it is not).
    auto be = make_cpu_backend();
    const std::int64_t T = 300, hd = 8;
    Rng rng(5);
    std::vector<float> q(static_cast<std::size_t>(2 * T * hd)), w(static_cast<std::size_t>(2 * T * T));
    for (float& v : q) v = rng.uniform(-1.0f, 1.0f);
    for (std::int64_t g = 0; g < 2; ++g)
        for (std::int64_t i = 0; i < T; ++i)
            for (std::int64_t j = 0; j < T; ++j)
                w[static_cast<std::size_t>((g * T + i) * T + j)] = j <= i ? rng.uniform(0.0f, 1.0f) : 0.0f;
    const int qb = be->create_buffer(2 * T * hd), wb = be->create_buffer(2 * T * T);
    be->write(qb, q);
    be->write(wb, w);
    const TensorDesc Q = contiguous(qb, {2, T, hd}), W = contiguous(wb, {2, T, T});
    const int full_s = be->create_buffer(2 * T * T), skip_s = be->create_buffer(2 * T * T);
    const int full_c = be->create_buffer(2 * T * hd), skip_c = be->create_buffer(2 * T * hd);
    be->matmul(Q, Q, true, nullptr, contiguous(full_s, {2, T, T}));
    be->causal_matmul(Q, Q, true, contiguous(skip_s, {2, T, T}), true);
    be->matmul(W, Q, false, nullptr, contiguous(full_c, {2, T, hd}));
    be->causal_matmul(W, Q, false, contiguous(skip_c, {2, T, hd}), false);
    std::vector<float> fs, ss, fc, sc;
    be->read(full_s, fs);
    be->read(skip_s, ss);
    be->read(full_c, fc);
    be->read(skip_c, sc);
    double worst = 0;
    std::int64_t untouched = 0;
    for (std::int64_t g = 0; g < 2; ++g)
        for (std::int64_t i = 0; i < T; ++i)
            for (std::int64_t j = 0; j < T; ++j) {
                const std::size_t at = static_cast<std::size_t>((g * T + i) * T + j);
                if (j <= i) worst = std::max(worst, static_cast<double>(std::fabs(fs[at] - ss[at])));
                else untouched += ss[at] == 0.0f;  // a fresh buffer: 0 where nothing was computed
            }
    CHECK(worst <= 1e-5);
    CHECK(untouched > T * T / 4);  // the skip was taken: most of the upper triangle never written
    CHECK(test::max_abs_diff(fc, sc) <= 1e-5);

    for (Mode mode : {Mode::Split, Mode::Loop}) {
        Config c;
        c.tokens = synthetic_tokens(T);
        c.d_in = c.d_out = 16;
        c.heads = 2;
        c.mode = mode;
        const Inputs in = make_inputs(c);
        const Weights wt = make_weights(c);
        Runner r(c, in, wt, *be);
        RunOptions quiet;
        quiet.record_values = false;
        const Trace fast = r.run(quiet), full = r.run();
        INFO(mode_name(mode));
        CHECK(test::max_abs_diff(fast.steps.back().result().values(), full.steps.back().result().values()) <= 1e-5);
    }
}
