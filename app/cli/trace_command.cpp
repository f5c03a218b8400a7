#include "cli/trace_command.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/io/config_options.hpp"
#include "headsplit/io/terminal.hpp"
#include "headsplit/io/trace_json.hpp"
#include "headsplit/teaching/narration.hpp"

namespace headsplit::app {

namespace {

std::string tensor_names(const Step& s) {
    std::string names;
    for (const auto& t : s.tensors) names += (names.empty() ? "" : ", ") + t.name;
    return names;
}


std::string quoted_text(const Config& c) {
    std::string text;
    for (const auto& t : c.tokens) text += (text.empty() ? "" : " ") + t;
    if (text.size() > 60) {
        std::size_t cut = 57;  // never inside a character: back to the byte that starts one
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        text = text.substr(0, cut) + "...";
    }
    return "\"" + terminal_text(text) + "\"";
}

std::string cell(float v) { return format_fixed(v, 4); }

// Prints `data` of `shape` as nested grids: the last two dims as a matrix, outer dims as
// labelled blocks.
void print_grid(const std::vector<float>& data, const Shape& shape, std::ostream& out) {
    const std::int64_t cols = shape.empty() ? 1 : shape.back();
    const std::int64_t rows = shape.size() < 2 ? 1 : shape[shape.size() - 2];
    const std::int64_t blocks = static_cast<std::int64_t>(data.size()) / std::max<std::int64_t>(rows * cols, 1);
    for (std::int64_t b = 0; b < blocks; ++b) {
        if (shape.size() > 2) {
            const Shape outer(shape.begin(), shape.end() - 2);
            std::string idx;
            for (std::int64_t i : unravel(outer, b)) idx += std::to_string(i) + ", ";
            out << "    [" << idx << ":, :]\n";
        }
        for (std::int64_t r = 0; r < rows; ++r) {
            out << "     ";
            for (std::int64_t c = 0; c < cols; ++c) out << std::setw(9) << cell(data[(b * rows + r) * cols + c]);
            out << "\n";
        }
    }
}

}  // namespace

void TraceCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand("trace", "one forward pass, headless: prints the step table");
    add_config_options(*cmd, config);
    needs_a_path(cmd->add_option("--json", json_path, "write the trace as JSON to FILE (format headsplit-trace v2)"));
    cmd->add_option("--step", step, "also print every value of step N");
    cmd->callback([] {});
}

void print_step_table(const Trace& tr, std::ostream& out) {
    const Config& c = tr.config;
    out << "HeadSplit trace: " << quoted_text(c) << "  B=" << c.batch << " T=" << c.num_tokens()
        << " D_in=" << c.d_in << " D_out=" << c.d_out << " heads=" << c.heads << " head_dim=" << c.head_dim()
        << "  mode=" << mode_name(c.mode) << " backend=" << backend_name(c.backend)
        << (c.causal ? " causal" : " not-causal");
    if (c.grouped()) out << " kv_heads=" << c.kv_head_count();
    if (c.cross()) out << " context S=" << c.num_keys() << " D_context=" << c.context_dim();
    if (c.padded()) out << " padded";
    if (c.decoding()) out << " decode_from=" << c.decode_from;
    if (c.backward) out << " backward (d_output " << (c.dout_ones ? "all ones" : "seeded") << ")";
    if (!c.weights_dir.empty()) out << "\nweights: " << terminal_text(weights_source(c));
    out << "\n\n";
    // The tensors' column as wide as its longest entry (a backward step names up to 7 tensors).
    std::size_t names_width = 34;
    for (const Step& s : tr.steps) names_width = std::max(names_width, tensor_names(s).size() + 2);
    const int nw = static_cast<int>(names_width);
    out << std::left << std::setw(6) << "step" << std::setw(26) << "op" << std::setw(nw) << "tensors"
        << std::setw(20) << "shape" << std::setw(22) << "memory" << std::right << std::setw(8) << "matmuls"
        << std::setw(11) << "ms" << "\n";
    for (const Step& s : tr.steps) {
        std::string op = op_name(s.op);
        if (s.head >= 0) op += " (head " + std::to_string(s.head) + ")";
        if (s.round >= 0) op += s.round == 0 ? " (prefill)" : " (r" + std::to_string(s.round) + ")";
        if (is_backward(s.op) && (s.index == 0 || !is_backward(tr.steps[s.index - 1].op)))
            out << "backward: the gradient of L = sum(d_output * output), from d_output back to the weights and x\n";
        // A forward step's first tensor (x, queries, ...); a backward step's result (the
        // gradient it passes on: d_context_vec, ..., d_x).
        const TensorRecord& first = is_backward(s.op) ? s.result() : s.tensors.front();
        out << std::left << std::setw(6) << s.index << std::setw(26) << op << std::setw(nw) << tensor_names(s)
            << std::setw(20) << shape_str(first.shape) << std::setw(22) << storage_label(first.storage)
            << std::right << std::setw(8) << s.matmuls << std::setw(11) << std::fixed << std::setprecision(3)
            << s.ms << "\n";
    }
    double flops = 0;
    for (const Step& s : tr.steps) flops += s.flops;
    out << "\ntotal: " << tr.steps.size() << " steps, " << tr.total_matmuls() << " matmuls, "
        << std::setprecision(3) << flops / 1e6 << " MFLOP, " << tr.total_ms() << " ms\n";

    // The journey of the data's shape (each step's first tensor: x, queries, ..., output),
    // skipping repeats (loop mode repeats per head) and the steps on keys and values only.
    // The backward's: the gradient each step passes on, d_output to d_x.
    std::string journey, back;
    Shape last;
    for (const Step& s : tr.steps) {
        if (s.op == Op::CacheAppend || s.op == Op::RepeatKv || s.op == Op::RepeatKvBack) continue;
        const bool backward = is_backward(s.op);
        const Shape& shape = backward ? s.result().shape : s.tensors.front().shape;
        if (shape == last) continue;
        std::string& line = backward ? back : journey;
        line += (line.empty() ? "" : " -> ") + shape_str(shape);
        last = shape;
    }
    out << "shapes: " << journey << "\n";
    if (!back.empty()) out << "gradients: " << back << "\n";
    // What generation keeps per token: keys and values of kv_heads heads, in every layer.
    out << "kv cache: " << kv_cache_bytes_per_token(c) << " bytes per token per layer (2 x " << c.kv_head_count()
        << " kv heads x " << c.head_dim() << " x float32)";
    if (c.layers > 1)
        out << "; " << human_bytes(static_cast<double>(model_kv_cache_bytes_per_token(c))) << " per token for all "
            << c.layers << " layers in fp16";
    out << "\n";
}

void print_step_values(const Step& s, std::ostream& out) {
    out << "\nstep " << s.index << ": " << op_name(s.op);
    if (s.head >= 0) out << " (head " << s.head << ")";
    if (s.round >= 0) out << (s.round == 0 ? " (prefill)" : " (round " + std::to_string(s.round) + ")");
    out << "\n  " << terminal_text(s.code) << "\n  " << terminal_text(s.explain) << "\n";
    for (const TensorRecord& t : s.tensors) {
        out << "  " << terminal_text(t.name) << " " << shape_str(t.shape) << "  strides " << shape_str(t.strides) << "  offset "
            << t.offset << "  buffer " << t.buffer << "  " << storage_label(t.storage) << "\n";
        if (t.has_values() && numel(t.shape) > 4096) {
            out << "    (" << numel(t.shape) << " values; write them with --json)\n";
            continue;
        }
        print_grid(t.values(), t.shape, out);
    }
}

Trace run_traced(const CheckedConfig& c) {
    // The inputs and weights are made once the run's time has been estimated on its backend:
    // a run refused as too long is refused before they take memory and time (a large model's
    // at a million tokens take gigabytes under a large --memory-budget).
    std::optional<Inputs> inputs;
    std::optional<Weights> weights;
    BackendRequest request;
    request.kind = c.config.backend;
    request.notices = &std::cerr;
    return run_with_fallback<Trace>(
        request,
        [&](Backend& backend, BackendKind kind) {
            CheckedConfig on = c;
            on.config.backend = kind;  // the trace says where it ran
            require_time(on, backend);
            if (!inputs) inputs.emplace(make_inputs(c.config)), weights.emplace(load_weights(c.config));
            Trace trace = headsplit::run(on, *inputs, *weights, backend);
            narrate(trace);
            return trace;
        },
        nullptr);
}

int TraceCommand::run() const {
    const CheckedConfig c = make_config(config);
    c.require_budget(!json_path.empty());  // before inputs and weights are allocated
    std::int64_t step_index = -1;
    if (!step.empty()) step_index = parse_count("--step", step, 0, 1 << 30);
    if (!json_path.empty()) check_writable(json_path);
    const Trace trace = run_traced(c);
    if (step_index >= static_cast<std::int64_t>(trace.steps.size()))
        throw ConfigError("--step " + step + " does not exist; this trace has steps 0 to " +
                          std::to_string(trace.steps.size() - 1));
    print_step_table(trace, std::cout);
    if (step_index >= 0) print_step_values(trace.steps[step_index], std::cout);
    if (!json_path.empty()) {
        std::cout.flush();  // a reader that has gone ends the run here, before the file is made
        write_file_atomically(json_path, [&](const TextSink& out) { write_trace_json(trace, out); });
        std::cout << "wrote " << terminal_text(json_path) << "\n";
    }
    return 0;
}

}  // namespace headsplit::app
