#include "cli/train_command.hpp"

#include <chrono>
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/base/numbers.hpp"
#include "headsplit/engine/config_edit.hpp"
#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"
#include "headsplit/training/trainer.hpp"

namespace headsplit::app {

namespace {

TrainConfig parse(const TrainCommand& o) {
    TrainConfig c;
    c.task = parse_task(o.task);
    const auto count = [](const char* name, const std::string& v, std::int64_t lo, std::int64_t hi) {
        return v.empty() ? 0 : parse_count(name, v, lo, hi);
    };
    c.steps = count("--steps", o.steps, 1, 1000000);
    c.batch = count("--batch", o.batch, 1, 4096);
    c.layers = count("--layers", o.layers, 1, 8);
    c.heads = count("--heads", o.heads, 1, 1024);
    c.d_model = count("--d-model", o.d_model, 1, 1024);
    c.seed = static_cast<std::uint64_t>(parse_count("--seed", o.seed, 0, INT64_MAX));
    if (!o.lr.empty()) {
        c.lr = parse_real("--lr", o.lr);
        if (c.lr == 0) throw ConfigError("--lr 0: a learning rate of 0 changes nothing; give one above 0, such as 1e-2");
    }
    if (!mode_from_name(o.mode, &c.mode))
        throw ConfigError("--mode " + shown_value(o.mode) + " is not a mode; use loop, split or fused");
    if (!backend_from_name(o.backend, &c.backend))
        throw ConfigError("--backend " + shown_value(o.backend) + " is not a backend; use cpu or gl");
    c.identical_heads = o.identical_heads;
    c = with_defaults(c);
    validate(c);
    return c;
}

nlohmann::json log_entry(std::int64_t step, const StepResult& train, const Probe& p) {
    nlohmann::json scores = nlohmann::json::object(), norms = nlohmann::json::object();
    for (const HeadReport& h : p.heads) {
        scores[h.name] = h.score;
        norms[h.name] = h.grad_norm;
    }
    return {{"step", step},           {"loss", train.loss},       {"accuracy", train.accuracy},
            {"probe_loss", p.result.loss}, {"probe_accuracy", p.result.accuracy}, {"scores", scores},
            {"grad_norms", norms}};
}

void print_line(std::int64_t step, const StepResult& r, const Probe& p) {
    std::cout << std::setw(6) << step << "  loss " << format_fixed(r.loss, 4) << "  accuracy "
              << format_fixed(r.accuracy, 3);
    for (const HeadReport& h : p.heads) std::cout << "  " << h.name << " " << format_fixed(h.score, 2);
    std::cout << "\n";
}

}  // namespace

void TrainCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand(
        "train", "train a tiny model of this attention on a task (copy, reverse, induction, sort) and log its loss and "
                 "each head's score at its job");
    cmd->add_option("--task", task, "copy | reverse | induction | sort (default induction)");
    cmd->add_option("--steps", steps, "training steps (default per task: copy 200, induction 600)");
    cmd->add_option("--seed", seed, "seed of the weights and the batches (default 1)");
    cmd->add_option("--lr", lr, "Adam's learning rate (default per task)");
    cmd->add_option("--batch", batch, "sequences a step (default 64)");
    cmd->add_option("--layers", layers, "attention layers (default per task: copy 1, induction 2)");
    cmd->add_option("--heads", heads, "heads a layer (default 2)");
    cmd->add_option("--d-model", d_model, "the model's width, D_in = D_out of each layer (default 32)");
    cmd->add_option("--mode", mode, "loop | split | fused: how each layer runs (the same numbers; default split)");
    cmd->add_option("--backend", backend, "cpu | gl (default cpu)");
    cmd->add_option("--log-every", log_every, "steps between log lines (default 10)");
    needs_a_path(cmd->add_option("--json", json, "write the log as JSON to this file"));
    cmd->add_flag("--identical-heads", identical_heads, "start every head of a layer from the same weights");
}

int TrainCommand::run() const {
    const TrainConfig c = parse(*this);
    const std::int64_t every = parse_count("--log-every", log_every, 1, 1000000);
    if (!json.empty()) check_writable(json);
    BackendRequest request;
    request.kind = c.backend;
    request.notices = &std::cerr;
    BackendChoice choice = choose_backend(request);
    Trainer trainer(c, *choice.backend);
    const TaskShape shape = task_shape(c.task);
    std::cout << "train " << task_name(c.task) << ": " << c.layers << " layer" << (c.layers > 1 ? "s" : "") << " x "
              << c.heads << " heads, d_model " << c.d_model << ", vocab " << shape.vocab << ", " << shape.tokens
              << " tokens, batch " << c.batch << ", lr " << format_number(c.lr) << ", seed " << c.seed << ", "
              << mode_name(c.mode) << " on " << backend_name(choice.kind) << "\n";
    std::cout << "a head's score: its " << score_name(c.task, 0)
              << (c.layers > 1 && c.task == Task::Induction ? " (layer 0), " + score_name(c.task, 1) + " (layer 1)" : "")
              << ", on " << c.probe << " probe sequences\n";
    nlohmann::json log = nlohmann::json::array();
    const auto start = std::chrono::steady_clock::now();
    double train_seconds = 0;
    std::string stopped;
    StepResult r;
    for (std::int64_t s = 1; s <= c.steps; ++s) {
        const auto t0 = std::chrono::steady_clock::now();
        try {
            r = trainer.step();
        } catch (const std::runtime_error& e) {
            stopped = e.what();
            break;
        }
        train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s % every == 0 || s == c.steps || s == 1) {
            const Probe p = trainer.probe();
            print_line(s, r, p);
            log.push_back(log_entry(s, r, p));
        }
        progress(s, c.steps, "loss " + format_fixed(r.loss, 3));
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::int64_t done = trainer.steps_done();
    std::cout << done << " steps in " << format_fixed(train_seconds, 2) << " s of training ("
              << format_fixed(done / std::max(train_seconds, 1e-9), 1) << " steps/s), " << format_fixed(wall, 2)
              << " s with the probes\n";
    if (!json.empty()) {
        nlohmann::json doc = {{"task", task_name(c.task)}, {"steps", done}, {"seed", c.seed}, {"lr", c.lr},
                              {"batch", c.batch}, {"layers", c.layers}, {"heads", c.heads}, {"d_model", c.d_model},
                              {"mode", mode_name(c.mode)}, {"backend", backend_name(choice.kind)},
                              {"train_seconds", train_seconds}, {"log", log}};
        if (!stopped.empty()) doc["stopped"] = stopped;
        write_file_atomically(json, doc.dump(1) + "\n");
    }
    if (!stopped.empty()) {
        std::cerr << "headsplit: training stopped: " << terminal_text(stopped) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace headsplit::app
