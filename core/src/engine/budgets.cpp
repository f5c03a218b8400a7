// The budgets a run must fit: its memory (from a shapes-only walk of its steps) and its time
// (from the rate a small product measures on the backend).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <unistd.h>

#include "headsplit/engine/engine.hpp"
#include "headsplit/base/numbers.hpp"
#include "shape_walk.hpp"

namespace headsplit {

namespace {

// The memory estimate and the matmul FLOPs, from one shapes-only walk (it grows with the
// steps, so check_config makes it once).
MemoryEstimate estimate_from_walk(const Config& c, StepWordsBytes words, double* flops) {
    detail::ShapeOnlyBackend backend;
    const Trace shapes = detail::walk(c, backend);
    if (flops)
        for (const Step& s : shapes.steps) *flops += s.flops;
    const double f = sizeof(float);
    MemoryEstimate e;
    e.backend_bytes = f * static_cast<double>(backend.elements_);
    // Inputs and weights are held twice on the host (the caller's, the trace's copy); fused
    // mode stacks W_qkv once more while uploading it; a recorded step reads back at most its
    // largest buffer at a time.
    const double kv = static_cast<double>(c.kv_width()), D = static_cast<double>(c.d_out);
    const double inputs = static_cast<double>(c.batch) *
                          (static_cast<double>(c.num_tokens()) * static_cast<double>(c.d_in) +
                           (c.cross() ? static_cast<double>(c.num_keys()) * static_cast<double>(c.key_dim()) : 0) +
                           (c.padded() ? static_cast<double>(c.num_keys()) : 0));
    const double qkv_weights = D * static_cast<double>(c.d_in) + 2 * kv * static_cast<double>(c.key_dim()) +
                               (c.qkv_bias ? D + 2 * kv : 0);
    double host = inputs + qkv_weights + (c.out_proj ? D * (D + 1) : 0);
    // The JSON writes the inputs before the steps and the weights after them, a tensor at a time.
    const double json_head = std::max({inputs, D * static_cast<double>(c.d_in), kv * static_cast<double>(c.key_dim()),
                                       c.out_proj ? D * D : 0.0});
    host *= 2;
    if (c.mode == Mode::Fused) host += qkv_weights;
    double trace = 0, readback = 0;  // readback: the most one step holds (each buffer read once)
    double json_step = 0;            // the most values one step records
    for (const Step& s : shapes.steps) {
        if (!s.tile_values) continue;  // a flash tile past the first ones: no values kept
        std::map<int, double> read;
        double values = 0;
        for (const TensorRecord& t : s.tensors) {
            values += static_cast<double>(numel(t.shape));
            read[t.buffer] = static_cast<double>(backend.size_of(t.buffer));
        }
        trace += values;
        json_step = std::max(json_step, values);
        double step_total = 0;
        for (const auto& [id, n] : read) step_total += n;
        readback = std::max(readback, step_total);
    }
    e.host_bytes = f * (host + readback);
    e.trace_bytes = f * trace;
    // The steps' own records (shapes, links), which the walk has made as a run does, and the
    // words a reader will write into them.
    e.record_bytes = static_cast<double>(shapes.record_bytes());
    if (words)
        for (const Step& s : shapes.steps) e.record_bytes += static_cast<double>(words(s, c));
    if (c.mode == Mode::Flash && c.backend == BackendKind::Gl)
        e.working_bytes = 2 * f *
                          (static_cast<double>(c.batch * c.kv_head_count() * c.num_keys() * c.head_dim()) +
                           static_cast<double>(kFlashChunkFloats));
    e.json_bytes = kJsonBytesPerValue * std::min(kJsonPieceValues, std::max(json_step, json_head));
    return e;
}

}  // namespace

MemoryEstimate estimate_memory(const Config& c, StepWordsBytes words) { return estimate_from_walk(c, words, nullptr); }

namespace {

// The machine's memory: a --memory-budget above it does not make a run fit (the kernel ends
// the process part way, as it did llama2-7b at a million tokens under a 64 TiB budget). 0
// where it cannot be told (the page, whose limit is the browser's).
double machine_memory() {
#if defined(__EMSCRIPTEN__)
    return 0;
#else
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
#endif
}

}  // namespace

bool CheckedConfig::fits_budget(bool with_json) const {
    const double need = memory.total() + (with_json ? memory.json_bytes : 0), machine = machine_memory();
    return need <= static_cast<double>(config.memory_budget) && (machine <= 0 || need <= machine);
}

void CheckedConfig::require_budget(bool with_json) const {
    if (fits_budget(with_json)) return;
    const double need = memory.total() + (with_json ? memory.json_bytes : 0);
    if (need <= static_cast<double>(config.memory_budget))
        throw ConfigError("this configuration needs about " + human_bytes(need) + ", more than this machine's " +
                          human_bytes(machine_memory()) + " of memory (whatever --memory-budget says); use fewer tokens or a smaller D_out");
    throw ConfigError("this configuration needs about " + human_bytes(memory.total() + (with_json ? memory.json_bytes : 0)) +
                      " (backend buffers " + human_bytes(memory.backend_bytes + memory.working_bytes) + ", host copies " +
                      human_bytes(memory.host_bytes) + ", trace " + human_bytes(memory.trace_bytes + memory.record_bytes) +
                      (with_json ? ", writing its JSON " + human_bytes(memory.json_bytes) : std::string()) +
                      "), over the memory budget of " +
                      human_bytes(static_cast<double>(config.memory_budget)) +
                      "; use fewer tokens or a smaller D_out, or raise --memory-budget");
}

CheckedConfig check_config(const Config& c, StepWordsBytes words) {
    validate(c);
    CheckedConfig checked;
    checked.config = c;
    checked.memory = estimate_from_walk(c, words, &checked.flops);
    return checked;
}

WorkEstimate estimate_work(const CheckedConfig& checked, Backend& backend) {
    constexpr std::int64_t M = 128, K = 512, N = 512;
    const int a = backend.create_buffer(M * K), b = backend.create_buffer(K * N), c = backend.create_buffer(M * N);
    std::vector<float> values(static_cast<std::size_t>(K * N));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) - 3.0f;
    backend.write(b, values);
    values.resize(static_cast<std::size_t>(M * K));
    backend.write(a, values);
    const TensorDesc da{a, 0, {M, K}, {K, 1}}, db{b, 0, {K, N}, {N, 1}}, dc{c, 0, {M, N}, {N, 1}};
    backend.matmul(da, db, false, nullptr, dc);  // the first: a kernel to compile, memory to map
    backend.finish();
    double best = 1e30;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        backend.matmul(da, db, false, nullptr, dc);
        backend.finish();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    backend.release({a, b, c});
    backend.take_stats();
    WorkEstimate w;
    w.gflops_rate = 2.0 * M * K * N / std::max(best, 1e-9) / 1e9;
    // The run's other kernels (mask, softmax, flash's tiles) go slower than a plain product:
    // 1.5 times its FLOPs at the measured rate keeps the estimate on the long side
    // (docs/benchmarks.md, the figures behind the code).
    w.seconds = 1.5 * checked.flops / (w.gflops_rate * 1e9) + (checked.memory.trace_bytes + checked.memory.record_bytes) / 1e9;
    return w;
}

void require_time(const CheckedConfig& checked, Backend& backend) {
    if (checked.flops < 2e9) return;
    const WorkEstimate w = estimate_work(checked, backend);
    if (w.seconds <= checked.config.time_budget) return;
    const auto duration = [](double s) {
        return s < 120 ? format_number(std::round(s)) + " s" : format_number(std::round(s / 6) / 10) + " minutes";
    };
    throw WorkError("this run would take about " + duration(w.seconds) + " (" +
                    format_number(std::round(checked.flops / 1e8) / 10) + " GFLOP at " +
                    format_number(std::round(w.gflops_rate * 10) / 10) + " GFLOP/s, measured on the " +
                    backend.name() + " backend just now), over the time budget of " +
                    duration(checked.config.time_budget) + "; use fewer tokens" +
                    (std::string(backend.name()) == "gl" ? ", the CPU backend" : "") +
                    " or a smaller D_out, or raise --time-budget");
}

}  // namespace headsplit
