#include "bench_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "headsplit/backend_policy.hpp"
#include "headsplit/bench.hpp"
#include "headsplit/cpu_backend.hpp"
#include "headsplit/engine.hpp"
#include "headsplit/numbers.hpp"
#include "headsplit/presets.hpp"
#include "headsplit/trace_json.hpp"
#include "options.hpp"

namespace headsplit::app {

namespace {

struct Shape3 {
    std::string label;
    Config config;
};

// The default shapes: the teaching example, GPT-2 small and XL at T = 128, and 96 heads.
std::vector<Shape3> default_shapes() {
    std::vector<Shape3> out;
    out.push_back({"cat-sleeps", config_from_preset("cat-sleeps")});
    for (const char* p : {"gpt2-small", "gpt2-xl"}) {
        Config c = config_from_preset(p);
        c.tokens = synthetic_tokens(128);
        out.push_back({p, c});
    }
    Config h96 = config_from_preset("gpt2-small");
    h96.preset = "96-heads";
    h96.d_in = h96.d_out = 1536;
    h96.heads = 96;  // head_dim 16: GPT-3's head count at a size this machine can run
    h96.tokens = synthetic_tokens(128);
    out.push_back({"96-heads", h96});
    return out;
}

void progress(int done, int total, const std::string& what) {
    if (!isatty(STDERR_FILENO)) return;
    const int width = 30, filled = total ? done * width / total : width;
    std::fprintf(stderr, "\r[%s%s] %d/%d %-50s", std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                 done, total, what.c_str());
    if (done == total) std::fprintf(stderr, "\r%*s\r", width + 70, "");
    std::fflush(stderr);
}

std::string fixed(double v, int digits = 2) { return format_fixed(v, digits); }

// Runs the embedded PyTorch script; returns its JSON lines as a JSON array ("" on failure,
// with the reason in `why`).
std::string run_torch(int repeat, const std::vector<std::string>& specs, std::string* why) {
    char path[] = "/tmp/headsplit_torch_XXXXXX.py";
    const int fd = mkstemps(path, 3);
    if (fd < 0) {
        *why = "cannot write a temporary script";
        return "";
    }
    const std::string_view script = embedded_asset("torch_mha_bench.py");
    const bool wrote = ::write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
    ::close(fd);
    std::string cmd = "/usr/bin/python3 " + std::string(path) + " " + std::to_string(repeat) + " 2";
    for (const auto& s : specs) cmd += " " + s;
    cmd += " 2>&1";
    std::string out, line;
    if (wrote) {
        if (FILE* p = popen(cmd.c_str(), "r")) {
            char buf[4096];
            while (fgets(buf, sizeof buf, p)) out += buf;
            const int rc = pclose(p);
            if (rc != 0) *why = "PyTorch (/usr/bin/python3, python3-torch) failed: " + out.substr(0, 200);
        }
    }
    std::remove(path);
    if (!why->empty()) return "";
    std::string array = "[";
    std::istringstream lines(out);
    while (std::getline(lines, line))
        if (!line.empty() && line[0] == '{') array += (array.size() > 1 ? "," : "") + line;
    return array + "]";
}

}  // namespace

void BenchCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand("bench", "loop, split and fused side by side: median ms, matmuls, GFLOP/s, ratios");
    cmd->add_option("--preset", preset, "one preset instead of the default shapes (teaching, gpt2-small, gpt2-xl, 96 heads)");
    cmd->add_option("--tokens", tokens, "tokens for --preset (default 128 for the GPT presets)");
    cmd->add_option("--backend", backend, "cpu | gl | all (default all)");
    cmd->add_option("--dropout", dropout, "attention dropout p in [0, 1) for every shape (default 0)");
    cmd->add_option("--kv-heads", kv_heads,
                    "key/value heads for every shape (grouped-query attention); must divide each shape's heads");
    cmd->add_option("--repeat", repeat, "timed runs after a warm-up; the median is reported (at least 5, default 5)");
    cmd->add_option("--json", json_path, "write the results as JSON (format headsplit-bench v1)");
    cmd->add_flag("--vs-torch", vs_torch,
                  "also time PyTorch's nn.MultiheadAttention (2 threads) at gpt2-small T=128 and T=512, beside the CPU split forward");
}

int BenchCommand::run() const {
    const int reps = static_cast<int>(parse_count("--repeat", repeat, 5, 1000));
    std::vector<BackendKind> backends;
    if (backend == "cpu" || backend == "all") backends.push_back(BackendKind::Cpu);
    if (backend == "gl" || backend == "all") backends.push_back(BackendKind::Gl);
    if (backends.empty()) throw ConfigError("--backend " + backend + " is not a backend; use cpu, gl or all");

    std::vector<Shape3> shapes;
    if (preset.empty()) {
        if (!tokens.empty()) throw ConfigError("--tokens needs --preset");
        shapes = default_shapes();
    } else {
        Config c = config_from_preset(preset);
        if (!tokens.empty()) c.tokens = synthetic_tokens(parse_count("--tokens", tokens, 1, kMaxTokens));
        else if (preset.rfind("gpt", 0) == 0) c.tokens = synthetic_tokens(128);
        shapes.push_back({preset, c});
    }
    if (!dropout.empty())
        for (Shape3& s : shapes) s.config.dropout = parse_real("--dropout", dropout);
    if (!kv_heads.empty())
        for (Shape3& s : shapes) {
            s.config.kv_heads = parse_count("--kv-heads", kv_heads, 1, kMaxDim);
            s.label += " kv" + std::to_string(s.config.kv_heads);
        }
    for (const Shape3& s : shapes) check_config(s.config).require_budget();
    if (!json_path.empty()) check_writable(json_path);  // now, not after minutes of measuring

    const Stage stages[] = {Stage::Projections, Stage::Forward, Stage::ForwardTraced};
    const Mode modes[] = {Mode::Loop, Mode::Split, Mode::Fused};
    const int total = static_cast<int>(shapes.size() * backends.size() * 9);
    int done = 0;
    std::vector<BenchResult> all_results;
    for (const Shape3& shape : shapes) {
        const Inputs in = make_inputs(shape.config);
        const Weights w = make_weights(shape.config);
        const bool cpu_listed = std::find(backends.begin(), backends.end(), BackendKind::Cpu) != backends.end();
        for (BackendKind wanted : backends) {
          BackendRequest request;
          request.kind = wanted;
          request.notices = &std::cerr;
          const int done_before = done;
          const auto measured = run_with_fallback<std::vector<BenchResult>>(request, [&](Backend& backend, BackendKind kind) {
            std::vector<BenchResult> results;
            done = done_before;
            if (kind != wanted && cpu_listed) {  // the CPU has its own table already
                done += 9;
                return results;
            }
            Backend* be = &backend;
            const Config& c = shape.config;
            std::cout << "\n" << shape.label << ": T=" << c.num_tokens() << " D_in=" << c.d_in << " D_out=" << c.d_out
                      << " heads=" << c.heads << " kv_heads=" << c.kv_head_count() << " head_dim=" << c.head_dim()
                      << " on " << backend_name(kind)
                      << " (median of " << reps << " runs)\n";
            std::cout << std::left << std::setw(16) << "stage" << std::setw(7) << "mode" << std::right << std::setw(11)
                      << "median ms" << std::setw(10) << "min ms" << std::setw(10) << "max ms" << std::setw(9) << "matmuls"
                      << std::setw(12) << "dispatches" << std::setw(10) << "GFLOP/s" << "\n";
            std::map<std::pair<Stage, Mode>, BenchResult> here;
            for (Stage stage : stages)
                for (Mode mode : modes) {
                    progress(done, total, shape.label + " " + backend_name(kind) + " " + stage_name(stage) + " " + mode_name(mode));
                    BenchResult r = bench_one(c, in, w, mode, stage, *be, reps);
                    r.preset = shape.label;
                    ++done;
                    here[{stage, mode}] = r;
                    results.push_back(r);
                    std::cout << std::left << std::setw(16) << stage_name(stage) << std::setw(7) << mode_name(mode)
                              << std::right << std::setw(11) << fixed(r.median_ms, 3) << std::setw(10) << fixed(r.min_ms, 3)
                              << std::setw(10) << fixed(r.max_ms, 3) << std::setw(9) << r.matmuls << std::setw(12)
                              << r.dispatches << std::setw(10) << fixed(r.gflops()) << "\n";
                }
            progress(done, total, "");
            auto ratio = [&](Stage s, Mode a, Mode b) { return here[{s, a}].median_ms / here[{s, b}].median_ms; };
            std::cout << "ratios: projections loop/split " << fixed(ratio(Stage::Projections, Mode::Loop, Mode::Split))
                      << "x, split/fused " << fixed(ratio(Stage::Projections, Mode::Split, Mode::Fused))
                      << "x; forward loop/split " << fixed(ratio(Stage::Forward, Mode::Loop, Mode::Split))
                      << "x, split/fused " << fixed(ratio(Stage::Forward, Mode::Split, Mode::Fused)) << "x\n";
            const BenchResult& sf = here[{Stage::Forward, Mode::Split}];
            std::cout << "split forward: " << fixed(sf.median_ms / sf.gemm_median_ms) << "x its GEMM steps ("
                      << fixed(sf.gemm_median_ms, 3) << " ms); recording the trace costs "
                      << fixed(here[{Stage::ForwardTraced, Mode::Split}].median_ms / sf.median_ms) << "x\n";
            return results;
          }, nullptr);
          all_results.insert(all_results.end(), measured.begin(), measured.end());
        }
    }

    std::string torch_json;
    if (vs_torch) {
        // The CPU split forward at gpt2-small T = 128 and 512, beside nn.MultiheadAttention.
        std::vector<std::string> specs;
        std::vector<BenchResult> ours;
        for (int T : {128, 512}) {
            Config c = config_from_preset("gpt2-small");
            c.tokens = synthetic_tokens(T);
            auto cpu = make_cpu_backend();
            const Inputs in = make_inputs(c);
            const Weights w = make_weights(c);
            ours.push_back(bench_one(c, in, w, Mode::Split, Stage::Forward, *cpu, reps));
            specs.push_back(std::to_string(c.d_out) + "," + std::to_string(c.heads) + "," + std::to_string(T));
        }
        std::string why;
        torch_json = run_torch(reps, specs, &why);
        if (torch_json.empty()) {
            std::cerr << "headsplit: --vs-torch: " << why << "\n";
        } else {
            std::vector<double> rows;
            for (const auto& r : nlohmann::json::parse(torch_json)) rows.push_back(r.at("median_ms").get<double>());
            std::cout << "\nvs PyTorch nn.MultiheadAttention (CPU, 2 threads, same shapes, same run):\n";
            for (std::size_t i = 0; i < ours.size() && i < rows.size(); ++i)
                std::cout << "  gpt2-small T=" << ours[i].tokens << ": headsplit split forward " << fixed(ours[i].median_ms, 3)
                          << " ms, torch " << fixed(rows[i], 3) << " ms, ratio headsplit/torch "
                          << fixed(ours[i].median_ms / rows[i]) << "\n";
        }
    }
    if (!json_path.empty()) {
        write_file_atomically(json_path, bench_json(all_results, torch_json));
        std::cout << "wrote " << json_path << "\n";
    }
    return 0;
}

}  // namespace headsplit::app
