// libFuzzer target over everything a user can type on the command line: the bytes become
// argv words (split at NUL and newline), parsed by the same CLI11 setup and option checks as
// `headsplit trace`; valid configurations are then validated, budget-checked, planned, and,
// when tiny, run on the CPU and exported to JSON. Expected refusals (CLI::Error,
// ConfigError) are fine; anything else escaping, or a sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/io/trace_json.hpp"
#include "headsplit/teaching/narration.hpp"
#include "cli/options.hpp"

using namespace headsplit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> words(1, "trace");
    std::string cur;
    for (std::size_t i = 0; i < size && words.size() < 40; ++i) {
        const char ch = static_cast<char>(data[i]);
        if (ch == '\0' || ch == '\n') {
            words.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    if (!cur.empty()) words.push_back(cur);

    CLI::App cli{"fuzz"};
    CLI::App* trace = cli.add_subcommand("trace");
    app::ConfigOptions opts;
    std::string json, step;
    app::add_config_options(*trace, opts);
    trace->add_option("--json", json);
    trace->add_option("--step", step);
    std::vector<const char*> argv{"headsplit"};
    for (const auto& w : words) argv.push_back(w.c_str());
    try {
        cli.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
        Config c = app::make_config(opts).config;
        c.memory_budget = std::min<std::uint64_t>(c.memory_budget, 64ull << 20);
        const CheckedConfig checked = check_config(c, narration_bytes);
        const Trace shapes = plan(checked);
        checked.require_budget();
        if (checked.memory.total() < 4e6) {
            auto cpu = make_cpu_backend();
            Trace t = run(checked, make_inputs(c), load_weights(c), *cpu);
            narrate(t);
            const std::string text = trace_to_json(t);
            if (text.empty() || shapes.steps.size() != t.steps.size()) __builtin_trap();
        }
    } catch (const CLI::Error&) {
    } catch (const ConfigError&) {
    }
    return 0;
}
