// The page's engine alone, in Node: gpt2-small at T = 128 on the CPU backend as the page's
// worker computes it (the matmul counts of the three modes, inputs, weights, the traced run),
// six times in one process, so the first run (V8 compiling and tiering the code) and the later
// ones (compiled) show apart. Against the desktop's `headsplit trace --preset gpt2-small
// --tokens 128 --backend cpu`, it separates the engine's own speed in wasm from what the page
// adds (the renderer on the same cores). A benchmark for the note, not a test. From the source
// tree, after make web:
//
//   NODE_PATH=/usr/share/nodejs em++ -O2 -std=c++17 -pthread -fexceptions -msimd128 -Icore/include \
//     -Ibuild-web/cmake/debian-include tools/web/engine_bench.cpp build-web/cmake/core/libheadsplit_core.a \
//     -sINITIAL_MEMORY=256MB -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB -sPTHREAD_POOL_SIZE=2 \
//     -sEXIT_RUNTIME=1 -o /tmp/engine_bench.js && node --no-experimental-fetch /tmp/engine_bench.js
#include <chrono>
#include <cstdio>
#include <string>

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/teaching/narration.hpp"
#include "headsplit/model/presets.hpp"

using namespace headsplit;
using Clock = std::chrono::steady_clock;

namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

int main() {
    Config c = config_from_preset("gpt2-small");
    c.set_sentences({synthetic_tokens(128)});
    const auto backend = make_cpu_backend();
    for (int r = 1; r <= 6; ++r) {
        const auto t0 = Clock::now();
        const CheckedConfig checked = check_config(c, narration_bytes);  // as the window checks it
        const std::vector<ModeCount> counts = matmul_counts(c);
        const auto t1 = Clock::now();
        const Inputs inputs = make_inputs(c);
        const Weights weights = make_weights(c);
        const auto t2 = Clock::now();
        Trace trace = run(checked, inputs, weights, *backend);
        narrate(trace);
        const auto t3 = Clock::now();
        double steps = 0;
        for (const Step& s : trace.steps) steps += s.ms;
        std::printf("run %d: whole %.1f ms = checks and counts %.1f + inputs and weights %.1f + traced run %.1f "
                    "(its steps %.1f; %lld matmuls in split)\n",
                    r, ms_between(t0, t3), ms_between(t0, t1), ms_between(t1, t2), ms_between(t2, t3), steps,
                    static_cast<long long>(counts[1].total));
    }
    return 0;
}
