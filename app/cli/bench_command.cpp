#include "cli/bench_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/engine/bench.hpp"
#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/model/presets.hpp"
#include "headsplit/io/writing.hpp"
#include "cli/options.hpp"

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

std::string fixed(double v, int digits = 2) { return format_fixed(v, digits); }

// "128,512, 1024" -> {"128", "512", "1024"}: the items of a comma-separated list, each
// trimmed and kept whole ("1 2" stays one item, which its parser then refuses, instead of
// running T = 1).
std::vector<std::string> split_list(const std::string& list) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(list);
    while (std::getline(in, item, ',')) {
        const auto first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
        out.push_back(first == std::string::npos ? "" : item.substr(first, last - first + 1));
    }
    if (!list.empty() && list.back() == ',') out.emplace_back();  // "1,2,": its empty last item is refused like "1,,2"'s
    return out;
}

// Runs the embedded PyTorch script; returns its JSON lines as a JSON array ("" on failure,
// with the reason in `why`).
std::string run_torch(int repeat, const std::vector<std::string>& specs, bool backward, std::string* why) {
    char path[] = "/tmp/headsplit_torch_XXXXXX.py";
    const int fd = mkstemps(path, 3);
    if (fd < 0) {
        *why = "cannot write a temporary script";
        return "";
    }
    const std::string_view script = embedded_asset("torch_mha_bench.py");
    const bool wrote = ::write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
    ::close(fd);
    std::string cmd = "/usr/bin/python3 " + std::string(path) + " " + std::to_string(repeat) + " 2" + (backward ? " --backward" : "");
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

std::vector<BackendKind> backends_of(const std::string& backend) {
    std::vector<BackendKind> backends;
    if (backend == "cpu" || backend == "all") backends.push_back(BackendKind::Cpu);
    if (backend == "gl" || backend == "all") backends.push_back(BackendKind::Gl);
    if (backends.empty()) throw ConfigError("--backend " + backend + " is not a backend; use cpu, gl or all");
    return backends;
}

// The default shapes, or `preset` at each of `tokens` (128 for the GPT presets when none).
std::vector<Shape3> shapes_of(const std::string& preset, const std::string& tokens) {
    std::vector<Shape3> shapes;
    if (preset.empty()) {
        if (!tokens.empty()) throw ConfigError("--tokens needs --preset");
        return default_shapes();
    }
    Config c = config_from_preset(preset);
    if (!c.weights_dir.empty() && !tokens.empty())
        throw ConfigError("--tokens cannot be used with --preset " + preset + ": the checkpoint sets the tokens");
    if (tokens.empty()) {
        if (preset.rfind("gpt", 0) == 0) c.tokens = synthetic_tokens(128);
        shapes.push_back({preset, c});
    }
    for (const std::string& t : split_list(tokens)) {
        c.set_sentences({synthetic_tokens(parse_count("--tokens", t, 1, kMaxTokens))});
        c.embeddings.clear();
        shapes.push_back({preset, c});
    }
    return shapes;
}

// "loop,split" -> {Loop, Split}, each once, in the order given.
std::vector<Mode> modes_of(const std::string& modes) {
    std::vector<Mode> mode_list;
    for (const std::string& m : split_list(modes)) {
        const Mode all[] = {Mode::Loop, Mode::Split, Mode::Fused, Mode::Flash};
        const auto found = std::find_if(std::begin(all), std::end(all), [&](Mode x) { return m == mode_name(x); });
        if (found == std::end(all)) throw ConfigError("--modes: \"" + m + "\" is not a mode; use loop, split, fused or flash, separated by commas");
        if (std::find(mode_list.begin(), mode_list.end(), *found) == mode_list.end()) mode_list.push_back(*found);
    }
    if (mode_list.empty()) throw ConfigError("--modes is empty; name at least one of loop, split, fused, flash");
    return mode_list;
}

Config config_for(const Config& base, Mode m, std::int64_t flash_block) {
    Config c = base;
    c.mode = m;
    c.block = m == Mode::Flash ? flash_block : 0;
    return c;
}

// Why `c` cannot run (over the memory budget, or flash with dropout); "" when it can.
std::string refusal(const Config& c) {
    try {
        check_config(c, kNoWords).require_budget();  // a bench's traces are timed, not read
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

// A mode a shape cannot run is skipped with its reason; a shape no mode can run is refused now.
void check_runnable(const std::vector<Shape3>& shapes, const std::vector<Mode>& mode_list, std::int64_t flash_block) {
    for (const Shape3& s : shapes) {
        std::string first;
        bool any = false;
        for (Mode m : mode_list) {
            const std::string why = refusal(config_for(s.config, m, flash_block));
            any = any || why.empty();
            if (first.empty()) first = why;
        }
        if (!any) throw ConfigError(s.label + " at T=" + std::to_string(s.config.num_tokens()) + ": " + first);
    }
}

// What every table of the run shares, and its progress.
struct Plan {
    std::vector<Mode> modes;
    std::int64_t flash_block;
    int reps;
    int total;  // measurements in the whole run
    int done = 0;
};

// A CPU shape's split and flash forward, for --vs-torch.
struct TorchRow {
    Config config;
    double split_ms = 0, flash_ms = 0;
};

using Measured = std::map<std::pair<Stage, Mode>, BenchResult>;

// Under a shape's table: "a/b 1.23x" for the ratios both of whose modes ran, and what the
// forward costs beside its matmul steps and with the trace recorded.
void print_ratios(const Measured& here) {
    const auto ms = [&](Stage s, Mode m) {
        const auto it = here.find({s, m});
        return it == here.end() ? 0.0 : it->second.median_ms;
    };
    std::string ratios;
    const auto ratio = [&](const char* stage_label, Stage s, Mode a, Mode b) {
        if (ms(s, a) <= 0 || ms(s, b) <= 0) return;
        ratios += std::string(ratios.empty() ? "" : ", ") + stage_label + " " + mode_name(a) + "/" + mode_name(b) +
                  " " + fixed(ms(s, a) / ms(s, b)) + "x";
    };
    ratio("projections", Stage::Projections, Mode::Loop, Mode::Split);
    ratio("projections", Stage::Projections, Mode::Split, Mode::Fused);
    ratio("forward", Stage::Forward, Mode::Loop, Mode::Split);
    ratio("forward", Stage::Forward, Mode::Split, Mode::Fused);
    ratio("forward", Stage::Forward, Mode::Flash, Mode::Split);
    if (!ratios.empty()) std::cout << "ratios: " << ratios << "\n";
    for (Mode m : {Mode::Split, Mode::Flash}) {
        const auto f = here.find({Stage::Forward, m});
        if (f == here.end()) continue;
        std::cout << mode_name(m) << " forward: " << fixed(f->second.median_ms / f->second.gemm_median_ms)
                  << "x its matmul steps (" << fixed(f->second.gemm_median_ms, 3) << " ms)";
        if (ms(Stage::ForwardTraced, m) > 0)
            std::cout << "; recording the trace costs " << fixed(ms(Stage::ForwardTraced, m) / f->second.median_ms) << "x";
        std::cout << "\n";
    }
}

// One shape on one backend: its table of stages x modes, then its ratios. A CPU table's
// split and flash forward go to `vs` for --vs-torch.
std::vector<BenchResult> bench_table(const Shape3& shape, const Inputs& in, const Weights& w, Backend& be, BackendKind kind,
                                     Plan& plan, std::vector<TorchRow>& vs) {
    std::vector<BenchResult> results;
    const Config& c = shape.config;
    std::cout << "\n" << shape.label << ": T=" << c.num_tokens() << " D_in=" << c.d_in << " D_out=" << c.d_out
              << " heads=" << c.heads << " kv_heads=" << c.kv_head_count() << " head_dim=" << c.head_dim()
              << " on " << backend_name(kind) << (c.backward ? ", forward + backward" : "")
              << " (median of " << plan.reps << " runs)\n";
    std::cout << std::left << std::setw(16) << "stage" << std::setw(7) << "mode" << std::right << std::setw(11)
              << "median ms" << std::setw(10) << "min ms" << std::setw(10) << "max ms" << std::setw(9) << "matmuls"
              << std::setw(12) << "dispatches" << std::setw(10) << "GFLOP/s" << "\n";
    Measured here;
    for (Stage stage : {Stage::Projections, Stage::Forward, Stage::ForwardTraced})
        for (Mode mode : plan.modes) {
            progress(plan.done, plan.total, shape.label + " " + backend_name(kind) + " " + stage_name(stage) + " " + mode_name(mode));
            const Config cm = config_for(c, mode, plan.flash_block);
            if (const std::string why = refusal(cm); !why.empty()) {
                ++plan.done;
                std::cout << std::left << std::setw(16) << stage_name(stage) << std::setw(7) << mode_name(mode)
                          << "skipped: " << why << "\n";
                continue;
            }
            BenchResult r = bench_one(cm, in, w, mode, stage, be, plan.reps);
            r.preset = shape.label;
            ++plan.done;
            here[{stage, mode}] = r;
            results.push_back(r);
            std::cout << std::left << std::setw(16) << stage_name(stage) << std::setw(7) << mode_name(mode)
                      << std::right << std::setw(11) << fixed(r.median_ms, 3) << std::setw(10) << fixed(r.min_ms, 3)
                      << std::setw(10) << fixed(r.max_ms, 3) << std::setw(9) << r.matmuls << std::setw(12)
                      << r.dispatches << std::setw(10) << fixed(r.gflops()) << "\n";
        }
    progress(plan.done, plan.total, "");
    print_ratios(here);
    // What each mode holds on the backend (the memory estimate, which equals what a run
    // allocates): flash's backward holds no T x T grid.
    std::string held;
    for (Mode mode : plan.modes) {
        const Config cm = config_for(c, mode, plan.flash_block);
        try {
            held += std::string(held.empty() ? "" : ", ") + mode_name(mode) + " " +
                    human_bytes(check_config(cm, kNoWords).memory.backend_bytes);
        } catch (const ConfigError&) {
        }
    }
    if (!held.empty()) std::cout << "backend memory: " << held << "\n";
    if (const GemmLimit lim = gemm_limit(results); !lim.forward_fraction.empty()) {
        const double need = necessary_flops(c);
        std::cout << "GEMM limit: " << (need >= 1e8 ? fixed(need / 1e9, 2) + " GFLOP" : fixed(need / 1e6, 4) + " MFLOP")
                  << " necessary (Q, K, V, out" << (c.causal ? ", half of QK^T and P@V" : ", QK^T, P@V")
                  << (c.backward ? "; x3 with their gradients" : "") << "), SGEMM " << fixed(lim.sgemm_gflops, 1) << " GFLOP/s (the projections, this run); forward at";
        for (const auto& [mode, f] : lim.forward_fraction) std::cout << " " << mode_name(mode) << " " << fixed(100 * f, 0) << "%";
        std::cout << " of it\n";
    }
    const auto forward_ms = [&](Mode m) {
        const auto it = here.find({Stage::Forward, m});
        return it == here.end() ? 0.0 : it->second.median_ms;
    };
    if (kind == BackendKind::Cpu && (forward_ms(Mode::Split) > 0 || forward_ms(Mode::Flash) > 0))
        vs.push_back({c, forward_ms(Mode::Split), forward_ms(Mode::Flash)});
    return results;
}

// --vs-torch: each shape's fastest CPU forward of split and flash, beside nn.MultiheadAttention
// at the same size (batch 1, causal, no Q/K/V bias), timed in the same run. Returns
// PyTorch's results as a JSON array ("" when it could not run, the reason on stderr).
std::string compare_with_torch(const std::vector<TorchRow>& vs, int reps) {
    std::vector<std::string> specs;
    std::vector<TorchRow> rows;
    for (const TorchRow& r : vs) {
        const Config& c = r.config;
        if (c.batch != 1 || c.cross() || c.grouped() || c.dropout > 0 || !c.causal || !c.out_proj || c.qkv_bias)
            continue;  // the PyTorch script times plain causal self-attention only
        specs.push_back(std::to_string(c.d_out) + "," + std::to_string(c.heads) + "," + std::to_string(c.num_tokens()));
        rows.push_back(r);
    }
    std::string why, torch_json;
    const bool backward = !rows.empty() && rows.front().config.backward;
    if (specs.empty()) why = "no CPU shape of this run is plain causal self-attention with batch 1";
    else torch_json = run_torch(reps, specs, backward, &why);
    if (torch_json.empty()) {
        std::cerr << "headsplit: --vs-torch: " << why << "\n";
        return torch_json;
    }
    std::vector<double> torch_ms;
    for (const auto& r : nlohmann::json::parse(torch_json)) torch_ms.push_back(r.at("median_ms").get<double>());
    std::cout << "\nvs PyTorch nn.MultiheadAttention" << (backward ? ", forward + autograd's backward" : "")
              << " (CPU, 2 threads, causal, same shapes, same run; medians):\n";
    std::cout << std::left << std::setw(22) << "shape" << std::right << std::setw(8) << "T" << std::setw(11) << "split ms"
              << std::setw(11) << "flash ms" << std::setw(11) << "torch ms" << std::setw(16) << "fastest/torch"
              << "\n";
    for (std::size_t i = 0; i < rows.size() && i < torch_ms.size(); ++i) {
        const TorchRow& r = rows[i];
        double best = 0;
        for (double v : {r.split_ms, r.flash_ms})
            if (v > 0 && (best == 0 || v < best)) best = v;
        const auto cell = [](double v) { return v > 0 ? fixed(v, 3) : std::string("-"); };
        std::cout << std::left << std::setw(22) << r.config.preset << std::right << std::setw(8)
                  << r.config.num_tokens() << std::setw(11) << cell(r.split_ms) << std::setw(11) << cell(r.flash_ms)
                  << std::setw(11) << fixed(torch_ms[i], 3) << std::setw(15) << fixed(best / torch_ms[i]) << "x"
                  << (r.flash_ms > 0 && r.flash_ms == best ? "  (flash)" : "  (split)") << "\n";
    }
    return torch_json;
}

}  // namespace

void BenchCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand("bench", "loop, split and fused side by side: median ms, matmuls, GFLOP/s, ratios");
    cmd->add_option("--preset", preset, "one preset instead of the default shapes (teaching, gpt2-small, gpt2-xl, 96 heads)");
    cmd->add_option("--tokens", tokens,
                    "tokens for --preset, one count or a list such as 128,512,1024 (default 128 for the GPT presets)");
    cmd->add_option("--modes", modes, "the modes to time, a list (default loop,split,fused,flash)");
    cmd->add_option("--block", block,
                    "flash mode's tile side (default " + std::to_string(kDefaultFlashBlock) + ", or ceil(T / 2) when smaller)");
    cmd->add_option("--backend", backend, "cpu | gl | all (default all)");
    cmd->add_option("--dropout", dropout, "attention dropout p in [0, 1) for every shape (default 0)");
    cmd->add_option("--kv-heads", kv_heads,
                    "key/value heads for every shape (grouped-query attention); must divide each shape's heads");
    cmd->add_option("--repeat", repeat, "timed runs after a warm-up; the median is reported (at least 5, default 5)");
    needs_a_path(cmd->add_option("--json", json_path, "write the results as JSON (format headsplit-bench v1)"));
    cmd->add_flag("--backward", backward,
                  "time the forward and the backward pass together (the forward stages), from a seeded d_output; "
                  "--vs-torch then times PyTorch's autograd the same way");
    cmd->add_flag("--vs-torch", vs_torch,
                  "also time PyTorch's nn.MultiheadAttention (2 threads, causal) at each shape, beside the fastest CPU "
                  "forward of split and flash");
}

int BenchCommand::run() const {
    const int reps = static_cast<int>(parse_count("--repeat", repeat, 5, 1000));
    const std::vector<BackendKind> backends = backends_of(backend);
    std::vector<Shape3> shapes = shapes_of(preset, tokens);
    const std::vector<Mode> mode_list = modes_of(modes);
    const std::int64_t flash_block = block.empty() ? 0 : parse_count("--block", block, 1, kMaxTokens);
    if (std::find(mode_list.begin(), mode_list.end(), Mode::Flash) == mode_list.end())
        check_block_needs_flash(flash_block, mode_list.front(), "add flash to --modes");
    if (!dropout.empty())
        for (Shape3& s : shapes) s.config.dropout = parse_real("--dropout", dropout);
    if (backward)
        for (Shape3& s : shapes) s.config.backward = true;
    if (!kv_heads.empty())
        for (Shape3& s : shapes) {
            s.config.kv_heads = parse_count("--kv-heads", kv_heads, 1, kMaxDim);
            s.label += " kv" + std::to_string(s.config.kv_heads);
        }
    check_runnable(shapes, mode_list, flash_block);
    if (!json_path.empty()) check_writable(json_path);  // now, not after minutes of measuring

    const int per_backend = static_cast<int>(3 * mode_list.size());
    Plan plan{mode_list, flash_block, reps, static_cast<int>(shapes.size() * backends.size()) * per_backend};
    std::vector<TorchRow> vs;
    std::vector<BenchResult> all_results;
    for (const Shape3& shape : shapes) {
        const Inputs in = make_inputs(shape.config);
        const Weights w = load_weights(shape.config);
        const bool cpu_listed = std::find(backends.begin(), backends.end(), BackendKind::Cpu) != backends.end();
        for (BackendKind wanted : backends) {
            BackendRequest request;
            request.kind = wanted;
            request.notices = &std::cerr;
            const int done_before = plan.done;
            const auto measured = run_with_fallback<std::vector<BenchResult>>(
                request,
                [&](Backend& be, BackendKind kind) {
                    plan.done = done_before;
                    if (kind != wanted && cpu_listed) {  // the CPU has its own table already
                        plan.done += per_backend;
                        return std::vector<BenchResult>();
                    }
                    return bench_table(shape, in, w, be, kind, plan, vs);
                },
                nullptr);
            all_results.insert(all_results.end(), measured.begin(), measured.end());
        }
    }

    const std::string torch_json = vs_torch ? compare_with_torch(vs, reps) : "";
    if (!json_path.empty()) {
        std::cout.flush();  // a reader that has gone ends the run here, before the file is made
        write_file_atomically(json_path, bench_json(all_results, torch_json));
        std::cout << "wrote " << json_path << "\n";
    }
    return 0;
}

}  // namespace headsplit::app
