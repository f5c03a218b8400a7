#include "cli/kernels_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/engine/inputs.hpp"
#include "cli/options.hpp"

namespace headsplit::app {

namespace {

struct Timing {
    std::string name;
    double median_ms = 0, min_ms = 0;
    std::vector<float> c;  // the product, to compare with OpenBLAS's
};

// Warm-up, then `repeat` timed runs; each waits for the backend to finish.
Timing time_matmul(const std::string& name, Backend& be, std::int64_t M, std::int64_t K, std::int64_t N, int repeat) {
    be.release_buffers();
    Rng rng(42);
    auto fill = [&](std::int64_t count) {
        std::vector<float> v(static_cast<std::size_t>(count));
        for (auto& e : v) e = rng.uniform(-1.0f, 1.0f);
        return v;
    };
    const int a = be.create_buffer(M * K), w = be.create_buffer(N * K), c = be.create_buffer(M * N);
    be.write(a, fill(M * K));
    be.write(w, fill(N * K));
    const TensorDesc at = contiguous(a, {M, K}), wt = contiguous(w, {N, K}), ct = contiguous(c, {M, N});
    be.matmul(at, wt, true, nullptr, ct);
    be.finish();
    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        be.matmul(at, wt, true, nullptr, ct);
        be.finish();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::vector<float> out;
    be.read(c, out);
    be.release_buffers();
    const Spread t = spread(ms);
    return {name, t.median, t.min, std::move(out)};
}

}  // namespace

void KernelsCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand(
        "kernels", "time one projection matmul on OpenBLAS and on each GL kernel (plain, blocked, tiled, tiled with vec4 loads), side by side (GFLOP/s)");
    cmd->add_option("--m", m, "rows of A: tokens (default 512)");
    cmd->add_option("--k", k, "inner size: D_in (default 768)");
    cmd->add_option("--n", n, "columns of C: 3 x D_out for a fused QKV projection (default 2304)");
    cmd->add_option("--repeat", repeat, "timed runs after one warm-up; the median is reported (default 7)");
}

int KernelsCommand::run() const {
    const std::int64_t M = parse_count("--m", m, 1, 16384), K = parse_count("--k", k, 1, 16384),
                       N = parse_count("--n", n, 1, 16384);
    const int reps = static_cast<int>(parse_count("--repeat", repeat, 1, 1000));
    std::vector<Timing> rows;
    rows.push_back(time_matmul("cpu openblas", *make_cpu_backend(), M, K, N, reps));
    std::string renderer;
    // The tiled kernel twice: as the backend runs it, and copying its slices with vec4 loads
    // (GlOptions::tiled_vec4), to be timed side by side on a GPU.
    const std::pair<MatmulKernel, bool> kernels[] = {
        {MatmulKernel::Plain, false}, {MatmulKernel::Blocked, false}, {MatmulKernel::Tiled, false}, {MatmulKernel::Tiled, true}};
    for (const auto& [kernel, vec4] : kernels) {
        BackendRequest request;
        request.kind = BackendKind::Gl;
        request.gl = {kernel, true, vec4};
        request.notices = &std::cerr;
        const BackendChoice gl = choose_backend(request);
        if (gl.fell_back(BackendKind::Gl)) break;  // the notice is out; the CPU row is above
        if (renderer.empty())
            renderer = gl_renderer() + " (the GL backend uses " +
                       matmul_kernel_name(resolved_kernel(MatmulKernel::Auto)) + " here)";
        rows.push_back(time_matmul(std::string("gl ") + matmul_kernel_name(kernel) + (vec4 ? " vec4" : ""), *gl.backend,
                                   M, K, N, reps));
    }
    const double gflop = 2.0 * M * N * K / 1e9;
    std::cout << "matmul C[" << M << ", " << N << "] = A[" << M << ", " << K << "] @ W[" << N << ", " << K
              << "]^T, " << gflop << " GFLOP, median of " << reps << " runs after a warm-up\n";
    if (!renderer.empty()) std::cout << "GL: " << renderer << "\n";
    std::cout << "\n";
    std::cout << std::left << std::setw(16) << "kernel" << std::right << std::setw(12) << "median ms" << std::setw(12)
              << "min ms" << std::setw(10) << "GFLOP/s" << std::setw(14) << "x gl plain" << std::setw(14)
              << "max |diff|" << "\n";
    const double plain_ms = rows.size() > 1 ? rows[1].median_ms : rows[0].median_ms;
    bool wrong = false;
    for (const Timing& t : rows) {
        std::cout << std::left << std::setw(16) << t.name << std::right << std::fixed << std::setprecision(2)
                  << std::setw(12) << t.median_ms << std::setw(12) << t.min_ms << std::setw(10)
                  << gflop / (t.median_ms / 1e3) << std::setw(14) << plain_ms / t.median_ms;
        // Every kernel's product against OpenBLAS's (the first row): float32 sums of K
        // products in [-1, 1], added in another order, differ by about 1e-6 * sqrt(K).
        double worst = 0;
        for (std::size_t i = 0; i < t.c.size(); ++i)
            worst = std::max(worst, static_cast<double>(std::fabs(t.c[i] - rows[0].c[i])));
        if (&t != &rows[0]) std::cout << std::setw(14) << std::scientific << std::setprecision(1) << worst;
        std::cout << "\n";
        if (!(worst <= 1e-4 * static_cast<double>(K))) wrong = true;  // NaN too
    }
    if (wrong) {
        std::cerr << "headsplit: a GL kernel's product differs from OpenBLAS's by more than 1e-4 x K; it is wrong on "
                     "this GL\n";
        return 1;
    }
    return 0;
}

}  // namespace headsplit::app
