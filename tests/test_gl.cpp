// The GL backend against the CPU backend (its oracle): every tensor of every step of every
// mode, plus each matmul kernel against a plain triple loop, and a broken shader.
// These run for real on Mesa llvmpipe (GL 4.5, headless through EGL); nothing is skipped.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>

#include "headsplit/backends/gl_backend.hpp"
#include "cli/gl_faults_env.hpp"
#include "headsplit/model/presets.hpp"
#include "helpers.hpp"

using namespace headsplit;

namespace {

// One headless context for the whole file (creating one costs ~50 ms on llvmpipe).
Backend& gl_backend(MatmulKernel kernel = MatmulKernel::Blocked) {
    static std::unique_ptr<Backend> blocked = make_gl_backend({MatmulKernel::Blocked, true});
    static std::unique_ptr<Backend> plain = make_gl_backend({MatmulKernel::Plain, true});
    static std::unique_ptr<Backend> tiled = make_gl_backend({MatmulKernel::Tiled, true});
    return kernel == MatmulKernel::Plain ? *plain : kernel == MatmulKernel::Tiled ? *tiled : *blocked;
}

// The tiled kernel copying whole slices with vec4 loads (GlOptions::tiled_vec4).
Backend& tiled_vec4_backend() {
    static std::unique_ptr<Backend> vec4 = make_gl_backend({MatmulKernel::Tiled, true, true});
    return *vec4;
}

// Runs a case on the CPU and on GL with `kernel`; every tensor of every step must agree.
void every_step_like_the_cpu(const test::Case& k, Mode mode, MatmulKernel kernel) {
    Config c = test::config_of(k, mode);
    INFO(k << " mode=" << mode_name(mode) << " kernel=" << matmul_kernel_name(kernel));

    const Trace cpu = test::run_cpu(c);
    c.backend = BackendKind::Gl;
    const Trace gl = run(c, make_inputs(c), make_weights(c), gl_backend(kernel));
    REQUIRE(test::op_list(gl) == test::op_list(cpu));
    for (std::size_t s = 0; s < cpu.steps.size(); ++s) {
        const Step& a = cpu.steps[s];
        const Step& b = gl.steps[s];
        REQUIRE(a.tensors.size() == b.tensors.size());
        CHECK(a.matmuls == b.matmuls);
        for (std::size_t t = 0; t < a.tensors.size(); ++t) {
            const TensorRecord& x = a.tensors[t];
            const TensorRecord& y = b.tensors[t];
            INFO("step " << s << " " << op_name(a.op) << " head " << a.head << " tensor " << x.name);
            CHECK(y.name == x.name);
            CHECK(y.shape == x.shape);
            CHECK(y.strides == x.strides);
            CHECK(y.storage == x.storage);
            // Same -inf positions and no NaN (max_abs_diff is +inf otherwise). 1e-4: float32
            // sums of up to 768 products, added in another order by the shaders than by
            // OpenBLAS, and llvmpipe's exp, differ from the CPU's in the last few bits.
            const double diff = test::max_abs_diff(x.values(), y.values());
            CHECK(diff <= 1e-4);
        }
    }
    // What ran where: the GL trace counts dispatches and workgroups for computed steps.
    const Step* scores = test::find_step(gl, Op::Scores, mode == Mode::Loop ? 0 : -1);
    REQUIRE(scores);
    CHECK(scores->stats.dispatches == 1);
    CHECK(scores->stats.workgroups >= 1);
}

}  // namespace

TEST_CASE("GL matches the CPU at every step of every mode", "[gl]") {
    // 21 shapes: T = 1, 3, 17, 65 (no tile multiple), D_out = 6, 20, 768 with 12 heads,
    // heads = 1 and heads = D_out, every switch.
    const test::Case k = GENERATE(values<test::Case>({
        {3, 6, 6, 2},
        {1, 6, 6, 2},
        {17, 6, 6, 3},
        {65, 6, 6, 6},
        {3, 6, 20, 4},
        {17, 20, 20, 1},
        {65, 20, 20, 20},
        {1, 768, 768, 12},
        {17, 768, 768, 12},
        {65, 768, 768, 12},
        {3, 3, 6, 3},
        {5, 7, 12, 12, false},
        {9, 10, 12, 3, true, 0.2},
        {9, 10, 12, 3, false, 0.5, true},
        {17, 33, 20, 5, true, 0.0, true, false},
        {17, 33, 20, 5, true, 0.0, false, true, true},
        {65, 17, 6, 2, false, 0.1, true, true, true},
        {2, 1, 1, 1},
        {33, 64, 96, 96},
        {4, 8, 8, 8, true, 0.3},
        {128, 64, 64, 4},
    }));
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    every_step_like_the_cpu(k, mode, MatmulKernel::Blocked);
}

TEST_CASE("the tiled GL kernel (a GPU's) runs the whole forward like the CPU", "[gl]") {
    // T = 130 and 3 x D_out = 192 span two of its 128 x 128 tiles with partial edges; K = 33
    // and 20 end in a partial slice of 8; the loop mode's per-head products are 17 x 5.
    const test::Case k = GENERATE(values<test::Case>({
        {130, 64, 64, 4},
        {17, 33, 20, 5, true, 0.0, false, true, true},
        {65, 768, 768, 12},
    }));
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    every_step_like_the_cpu(k, mode, MatmulKernel::Tiled);
}

namespace {

// C = A @ B (+ bias) by the book, in double.
std::vector<float> triple_loop(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>* bias,
                               std::int64_t M, std::int64_t K, std::int64_t N, bool b_transposed) {
    std::vector<float> c(static_cast<std::size_t>(M * N));
    for (std::int64_t m = 0; m < M; ++m)
        for (std::int64_t n = 0; n < N; ++n) {
            double acc = bias ? (*bias)[n] : 0.0;
            for (std::int64_t k = 0; k < K; ++k)
                acc += static_cast<double>(a[m * K + k]) * (b_transposed ? b[n * K + k] : b[k * N + n]);
            c[m * N + n] = static_cast<float>(acc);
        }
    return c;
}

std::vector<float> random_values(std::int64_t n, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = rng.uniform(-1.0f, 1.0f);
    return v;
}

}  // namespace

TEST_CASE("each GL matmul kernel against a triple loop on odd sizes", "[gl][matmul]") {
    const MatmulKernel kernel = GENERATE(MatmulKernel::Plain, MatmulKernel::Blocked, MatmulKernel::Tiled);
    const auto mkn = GENERATE(std::array<std::int64_t, 3>{1, 1, 1}, std::array<std::int64_t, 3>{3, 5, 7},
                              std::array<std::int64_t, 3>{65, 33, 17}, std::array<std::int64_t, 3>{4, 8, 32},
                              std::array<std::int64_t, 3>{33, 1, 65}, std::array<std::int64_t, 3>{65, 36, 17},
                              std::array<std::int64_t, 3>{130, 21, 257});
    // K = 8 and 36 with b^T take the vec4 row-dot path of the blocked kernel (edges included);
    // the other sizes take the scalar 4 x 4 path. 130 x 257 spans 2 x 3 of the tiled
    // kernel's 128 x 128 tiles, with partial ones at both edges, and K = 21 a partial slice.
    const bool b_transposed = GENERATE(false, true);
    const bool with_bias = GENERATE(false, true);
    const auto [M, K, N] = mkn;
    INFO(matmul_kernel_name(kernel) << " M=" << M << " K=" << K << " N=" << N << " b^T=" << b_transposed
                                    << " bias=" << with_bias);
    Backend& gl = gl_backend(kernel);
    gl.release_buffers();
    const auto a = random_values(M * K, 1), b = random_values(K * N, 2), bias = random_values(N, 3);
    const int ab = gl.create_buffer(M * K), bb = gl.create_buffer(K * N), cb = gl.create_buffer(M * N),
              biasb = gl.create_buffer(N);
    gl.write(ab, a);
    gl.write(bb, b);
    gl.write(biasb, bias);
    const TensorDesc bias_t = contiguous(biasb, {N});
    gl.matmul(contiguous(ab, {M, K}), contiguous(bb, b_transposed ? Shape{N, K} : Shape{K, N}), b_transposed,
              with_bias ? &bias_t : nullptr, contiguous(cb, {M, N}));
    std::vector<float> c;
    gl.read(cb, c);
    // 1e-5 relative to K: float32 accumulation of K products of values in [-1, 1].
    CHECK(test::max_abs_diff(c, triple_loop(a, b, with_bias ? &bias : nullptr, M, K, N, b_transposed)) <=
          1e-6 * static_cast<double>(K) + 1e-6);
}

TEST_CASE("the tiled kernel's vec4 copy: whole tiles, edges, a tail slice, offsets", "[gl][matmul]") {
    // matmul_tiled.comp built with TILED_VEC4 copies the slices of a tile that lies inside C
    // with vec4 loads when both operands run along k on vec4 boundaries. 256 x 40 x 384: 2 x 3
    // whole tiles, 5 whole slices. 260 x 44 x 300: whole and partial tiles, and a last slice
    // of 4 k's that goes the scalar way. b not transposed (B along n) and an A starting at
    // element 1 (rows off the vec4 grid) must take the scalar copy and agree as well; an A
    // starting at element 4 is still aligned.
    const auto mkn = GENERATE(std::array<std::int64_t, 3>{256, 40, 384}, std::array<std::int64_t, 3>{260, 44, 300},
                              std::array<std::int64_t, 3>{128, 8, 128}, std::array<std::int64_t, 3>{130, 21, 257});
    const bool b_transposed = GENERATE(false, true);
    const std::int64_t a_offset = GENERATE(0, 1, 4);
    const auto [M, K, N] = mkn;
    INFO("M=" << M << " K=" << K << " N=" << N << " b^T=" << b_transposed << " A at " << a_offset);
    Backend& gl = tiled_vec4_backend();
    gl.release_buffers();
    const auto a = random_values(M * K, 11), b = random_values(K * N, 12), bias = random_values(N, 13);
    std::vector<float> a_at(static_cast<std::size_t>(a_offset), 99.0f);  // what lies before A must not be read
    a_at.insert(a_at.end(), a.begin(), a.end());
    const int ab = gl.create_buffer(a_offset + M * K), bb = gl.create_buffer(K * N), cb = gl.create_buffer(M * N),
              biasb = gl.create_buffer(N);
    gl.write(ab, a_at);
    gl.write(bb, b);
    gl.write(biasb, bias);
    const TensorDesc bias_t = contiguous(biasb, {N});
    gl.matmul(contiguous(ab, {M, K}, a_offset), contiguous(bb, b_transposed ? Shape{N, K} : Shape{K, N}), b_transposed,
              &bias_t, contiguous(cb, {M, N}));
    std::vector<float> c;
    gl.read(cb, c);
    CHECK(test::max_abs_diff(c, triple_loop(a, b, &bias, M, K, N, b_transposed)) <= 1e-6 * static_cast<double>(K) + 1e-6);
}

TEST_CASE("each GL matmul kernel reads an A that is contiguous along M, in place", "[gl][matmul]") {
    // A = At^T with At a [K, M] buffer: A's k stride is M, so the tiled kernel copies its
    // slices walking along m instead of k. 150 x 40 x 70: two tile rows, a partial slice.
    const MatmulKernel kernel = GENERATE(MatmulKernel::Plain, MatmulKernel::Blocked, MatmulKernel::Tiled);
    const std::int64_t M = 150, K = 40, N = 70;
    Backend& gl = gl_backend(kernel);
    gl.release_buffers();
    const auto at = random_values(K * M, 6), b = random_values(K * N, 7);
    const int atb = gl.create_buffer(K * M), bb = gl.create_buffer(K * N), cb = gl.create_buffer(M * N);
    gl.write(atb, at);
    gl.write(bb, b);
    gl.matmul(transpose(contiguous(atb, {K, M}), 0, 1), contiguous(bb, {K, N}), false, nullptr, contiguous(cb, {M, N}));
    std::vector<float> c;
    gl.read(cb, c);
    std::vector<float> a(static_cast<std::size_t>(M * K));
    for (std::int64_t m = 0; m < M; ++m)
        for (std::int64_t k = 0; k < K; ++k) a[m * K + k] = at[k * M + m];
    INFO(matmul_kernel_name(kernel));
    CHECK(test::max_abs_diff(c, triple_loop(a, b, nullptr, M, K, N, false)) <= 1e-5);
}

namespace {

// scores = Q @ K^T for all heads at once, Q and K being [1, T, H, hd] buffers viewed as
// [1, H, T, hd] (strides swapped, no copy): the case the split mode relies on. Against a
// double-precision loop.
void scores_of_transposed_heads(Backend& gl, std::int64_t T, std::int64_t H, std::int64_t hd) {
    const std::int64_t D = H * hd;
    gl.release_buffers();
    const auto q = random_values(T * D, 4), k = random_values(T * D, 5);
    const int qb = gl.create_buffer(T * D), kb = gl.create_buffer(T * D), sb = gl.create_buffer(H * T * T);
    gl.write(qb, q);
    gl.write(kb, k);
    const TensorDesc qh = transpose(view(contiguous(qb, {1, T, D}), {1, T, H, hd}), 1, 2);
    const TensorDesc kh = transpose(view(contiguous(kb, {1, T, D}), {1, T, H, hd}), 1, 2);
    gl.matmul(qh, kh, true, nullptr, contiguous(sb, {1, H, T, T}));
    std::vector<float> s;
    gl.read(sb, s);
    double worst = 0;
    for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = 0; i < T; ++i)
            for (std::int64_t j = 0; j < T; ++j) {
                double dot = 0;
                for (std::int64_t d = 0; d < hd; ++d) dot += double(q[i * D + h * hd + d]) * k[j * D + h * hd + d];
                worst = std::max(worst, std::fabs(dot - s[(h * T + i) * T + j]));
            }
    CHECK(worst <= 1e-5);
}

}  // namespace

TEST_CASE("GL batched matmul reads transposed heads in place", "[gl][matmul]") {
    const MatmulKernel kernel = GENERATE(MatmulKernel::Plain, MatmulKernel::Blocked, MatmulKernel::Tiled);
    INFO(matmul_kernel_name(kernel));
    scores_of_transposed_heads(gl_backend(kernel), 17, 3, 5);
}

TEST_CASE("the tiled kernel's vec4 copy reads transposed heads in place", "[gl][matmul]") {
    // Rows H * hd apart, head h at h * hd: with hd = 8 every row starts on a vec4, and T = 130
    // makes the first tile of each head whole.
    scores_of_transposed_heads(tiled_vec4_backend(), 130, 3, 8);
}

namespace {

// Sets an environment variable for one scope, whatever way the scope is left.
struct ScopedEnv {
    ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
    ~ScopedEnv() { ::unsetenv(name_); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    const char* name_;
};

}  // namespace

TEST_CASE("the environment names the GL faults the command line's tests inject", "[gl][failure]") {
    CHECK(app::gl_faults_from_env().break_shader.empty());
    CHECK(app::gl_faults_from_env().fail_dispatch.empty());
    CHECK_FALSE(app::gl_faults_from_env().vec4_probe);
    const ScopedEnv broken("HEADSPLIT_GL_BREAK_SHADER", "attn_rows.comp");
    const ScopedEnv failing("HEADSPLIT_GL_FAIL_DISPATCH", "softmax");
    const ScopedEnv probe("HEADSPLIT_GL_VEC4_PROBE", "1");
    const GlFaults f = app::gl_faults_from_env();
    CHECK(f.break_shader == "attn_rows.comp");
    CHECK(f.fail_dispatch == "softmax");
    CHECK(f.vec4_probe);
}

TEST_CASE("the tiled kernel's vec4 copy runs where it should and nowhere else", "[gl][matmul]") {
    // The vec4 copy and the scalar one give the same product, so the products alone cannot say
    // which ran. With GlFaults::vec4_probe the vec4 copy loads zeros: 260 x 44 x 300 has
    // 2 x 2 whole tiles, whose 5 whole slices (k < 40) must then drop out of C, leaving the
    // last 4 k's (copied the scalar way), while the partial tiles (rows >= 256 or columns >=
    // 256) keep the whole product. An A off the vec4 grid (at element 1) takes no vec4 copy.
    const std::int64_t M = 260, K = 44, N = 300, tail = 40;
    GlFaults probe;
    probe.vec4_probe = true;
    const std::unique_ptr<Backend> gl = make_gl_backend({MatmulKernel::Tiled, true, true, &probe});
    const auto a = random_values(M * K, 21), b = random_values(N * K, 22);
    for (const std::int64_t offset : {0, 1}) {
        INFO("A at element " << offset);
        std::vector<float> a_at(static_cast<std::size_t>(offset), 0.0f);
        a_at.insert(a_at.end(), a.begin(), a.end());
        gl->release_buffers();
        const int ab = gl->create_buffer(offset + M * K), bb = gl->create_buffer(N * K), cb = gl->create_buffer(M * N);
        gl->write(ab, a_at);
        gl->write(bb, b);
        gl->matmul(contiguous(ab, {M, K}, offset), contiguous(bb, {N, K}), true, nullptr, contiguous(cb, {M, N}));
        std::vector<float> c;
        gl->read(cb, c);
        double worst = 0;
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                const bool vec4 = offset == 0 && m < 256 && n < 256;
                double want = 0;
                for (std::int64_t k = vec4 ? tail : 0; k < K; ++k) want += double(a[m * K + k]) * b[n * K + k];
                worst = std::max(worst, std::fabs(want - c[static_cast<std::size_t>(m * N + n)]));
            }
        CHECK(worst <= 1e-5);
    }
}

TEST_CASE("a shader that fails to compile is reported, not crashed on", "[gl][failure]") {
    // flash_chunk.comp: compiled for a head size, with lines put in front (#line keeps its own).
    const char* shader = GENERATE("matmul_blocked.comp", "attn_rows.comp", "flash_chunk.comp");
    INFO(shader);
    try {
        GlFaults broken;
        broken.break_shader = shader;
        GlOptions options;
        options.faults = &broken;
        make_gl_backend(options);
        FAIL("the broken shader compiled");
    } catch (const GlError& e) {
        const std::string msg = e.what();
        CHECK(e.kind == GlError::Kind::Shader);
        CHECK_THAT(msg, Catch::Matchers::StartsWith(std::string("shader ") + shader + " failed to compile at " + shader +
                                                    " line "));
        CHECK_THAT(msg, Catch::Matchers::Contains("error"));  // the driver's own log follows
        CHECK(msg.find('\n') == std::string::npos);
    }
    // The next backend compiles normally.
    CHECK_NOTHROW(make_gl_backend());
}

TEST_CASE("GL buffers are created once per configuration and reused across runs", "[gl]") {
    Config c = config_from_preset("gpt2-small");
    c.backend = BackendKind::Gl;
    // Flash on llvmpipe copies K and V into buffers of the backend's own (flash_by_chunks),
    // which the second run finds again: recording nothing, every tile runs by chunks.
    c.mode = GENERATE(Mode::Split, Mode::Flash);
    c.set_sentences({synthetic_tokens(300)});
    INFO("mode " << mode_name(c.mode));
    const CheckedConfig ck = check_config(c, kNoWords);
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    RunOptions quiet;
    quiet.record_values = c.mode != Mode::Flash;
    auto created = [](const Trace& tr) {
        std::int64_t n = 0;
        for (const auto& s : tr.steps) n += s.stats.buffers_created;
        return n;
    };
    auto gl = make_gl_backend();
    // While a run's buffers are handed out, what the backend holds beyond them grows by its
    // own working copies only (flash's K and V), which the memory estimate counts.
    const std::int64_t kept_before = gl->held_bytes() - gl->used_bytes();
    std::int64_t own = 0;
    const Trace first = [&] {
        Runner r(ck, in, w, *gl);
        Trace tr = r.run(quiet);
        own = gl->held_bytes() - gl->used_bytes() - kept_before;
        return tr;
    }();
    CHECK(static_cast<double>(own) <= ck.memory.working_bytes);
    if (c.mode == Mode::Flash) CHECK(own > 0);
    else CHECK(own == 0);
    const std::int64_t held = gl->held_bytes();
    const Trace second = Runner(ck, in, w, *gl).run(quiet);
    CHECK(created(first) > 0);   // Q, K, V, scores, weights, context, merged, output
    CHECK(created(second) == 0);
    CHECK(gl->held_bytes() == held);
    CHECK(test::max_abs_diff(first.steps.back().tensors.back().values(), second.steps.back().tensors.back().values()) ==
          0.0);
}

TEST_CASE("GL buffers kept for reuse stay bounded while the sizes wander", "[gl]") {
    // The visualizer changes D_out and T many times a minute: the pool must not keep every
    // size it ever saw.
    auto gl = make_gl_backend();
    auto run_size = [&](std::int64_t d_out, int tokens) {
        Config c;
        c.backend = BackendKind::Gl;
        c.d_in = c.d_out = d_out;
        c.heads = 2;
        c.tokens = synthetic_tokens(tokens);
        c.embeddings.clear();
        run(c, make_inputs(c), make_weights(c), *gl);
    };
    run_size(64, 16);
    const std::int64_t one = gl->held_bytes();
    CHECK(one > 0);
    for (int i = 0; i < 40; ++i) run_size(2 * (1 + i % 20), 1 + i % 16);
    run_size(64, 16);
    // The last run's buffers plus at most the previous run's in the pool.
    CHECK(gl->held_bytes() <= 2 * one);
}

TEST_CASE("GL works in a context that is already current", "[gl]") {
    // The visualizer makes its window's context current and hands it over; here the first
    // backend's headless context plays that part.
    auto owner = make_gl_backend({MatmulKernel::Blocked, true});
    auto guest = make_gl_backend({MatmulKernel::Blocked, false});
    Config c;
    c.backend = BackendKind::Gl;
    const Trace on_guest = run(c, make_inputs(c), make_weights(c), *guest);
    const Trace on_cpu = test::run_cpu(Config{});
    CHECK(test::max_abs_diff(on_guest.steps.back().tensors[0].values(), on_cpu.steps.back().tensors[0].values()) <= 1e-5);
}

TEST_CASE("a GL error during a step is reported, not crashed on", "[gl][failure]") {
    const char* kernel = GENERATE("softmax", "matmul", "copy");
    INFO(kernel);
    GlFaults faults;
    GlOptions options;
    options.faults = &faults;
    auto gl = make_gl_backend(options);
    Config c;
    c.backend = BackendKind::Gl;
    try {
        faults.fail_dispatch = kernel;
        run(c, make_inputs(c), make_weights(c), *gl);
        FAIL("no GL error");
    } catch (const GlError& e) {
        CHECK(e.kind == GlError::Kind::Runtime);
        CHECK_THAT(std::string(e.what()), Catch::Matchers::StartsWith("GL error 0x0501 while " + std::string(kernel)));
    }
    faults.fail_dispatch.clear();
    // The same backend runs cleanly afterwards.
    const Trace ok = run(c, make_inputs(c), make_weights(c), *gl);
    CHECK(ok.steps.size() == 12);
}
