#include "cli/train_command.hpp"

#include <chrono>
#include <cmath>
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

Scale parse_scale(const std::string& s) {
    for (Scale v : {Scale::SqrtHeadDim, Scale::HeadDim, Scale::None})
        if (s == scale_name(v)) return v;
    throw ConfigError("--scale " + shown_value(s) + " is not a scale; use sqrt (1/sqrt(head_dim)), head_dim (1/head_dim) or none");
}

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
    c.scale = parse_scale(o.scale);
    c.identical_heads = o.identical_heads;
    c = with_defaults(c);
    validate(c);
    return c;
}

nlohmann::json log_entry(std::int64_t step, const StepResult& train, const Probe& p) {
    nlohmann::json scores = nlohmann::json::object(), norms = nlohmann::json::object(),
                   entropy = nlohmann::json::object();
    for (const HeadReport& h : p.heads) {
        scores[h.name] = h.score;
        norms[h.name] = h.grad_norm;
        entropy[h.name] = h.entropy;
    }
    return {{"step", step},           {"loss", train.loss},       {"accuracy", train.accuracy},
            {"probe_loss", p.result.loss}, {"probe_accuracy", p.result.accuracy}, {"scores", scores},
            {"grad_norms", norms}, {"entropy", entropy}};
}

void print_line(std::int64_t step, const StepResult& r, const Probe& p) {
    std::cout << std::setw(6) << step << "  loss " << format_fixed(r.loss, 4) << "  accuracy "
              << format_fixed(r.accuracy, 3);
    for (const HeadReport& h : p.heads) std::cout << "  " << h.name << " " << format_fixed(h.score, 2);
    std::cout << "\n";
}

// One training run: its log, the time its steps took, and why it stopped early ("" if not).
struct Run {
    nlohmann::json log = nlohmann::json::array();
    double seconds = 0;
    std::int64_t done = 0;
    std::string stopped;
    Probe last;
};

Run train_run(const TrainConfig& c, Backend& backend, std::int64_t every, bool print, const std::string& name) {
    Trainer trainer(c, backend);
    Run run;
    StepResult r;
    for (std::int64_t s = 1; s <= c.steps; ++s) {
        const auto t0 = std::chrono::steady_clock::now();
        try {
            r = trainer.step();
        } catch (const std::runtime_error& e) {
            run.stopped = e.what();
            break;
        }
        run.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s % every == 0 || s == c.steps || s == 1) {
            run.last = trainer.probe();
            if (print) print_line(s, r, run.last);
            run.log.push_back(log_entry(s, r, run.last));
        }
        progress(s, c.steps, name + (name.empty() ? "" : ": ") + "loss " + format_fixed(r.loss, 3));
    }
    run.done = trainer.steps_done();
    return run;
}

// A comparison's table: a row a run, its loss along the way and its heads at the end.
void print_comparison(const std::vector<std::pair<std::string, TrainConfig>>& vs, const std::vector<Run>& runs) {
    std::cout << std::left << std::setw(20) << "run" << std::right << std::setw(12) << "loss 1/4" << std::setw(12)
              << "loss 1/2" << std::setw(12) << "loss end" << std::setw(12) << "best head" << std::setw(14)
              << "|dW| a head" << std::setw(12) << "entropy" << std::setw(14) << "head spread" << "\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const nlohmann::json& log = runs[i].log;
        const auto loss_at = [&](double part) {
            const std::int64_t want = static_cast<std::int64_t>(part * static_cast<double>(vs[i].second.steps));
            double l = log.front()["loss"];
            for (const auto& e : log)
                if (e["step"].get<std::int64_t>() <= want) l = e["loss"];
            return l;
        };
        // The spread: the most two heads of one layer differ in score (0: they are alike).
        double best = 0, grad = 0, entropy = 0, spread = 0;
        const std::size_t H = static_cast<std::size_t>(vs[i].second.heads);
        for (std::size_t k = 0; k < runs[i].last.heads.size(); ++k) {
            const HeadReport& h = runs[i].last.heads[k];
            for (std::size_t j = k - k % H; j < k; ++j) spread = std::max(spread, std::fabs(h.score - runs[i].last.heads[j].score));
            best = std::max(best, h.score);
            grad += h.grad_norm / static_cast<double>(runs[i].last.heads.size());
            entropy += h.entropy / static_cast<double>(runs[i].last.heads.size());
        }
        std::cout << std::left << std::setw(20) << vs[i].first << std::right << std::setw(12) << format_fixed(loss_at(0.25), 4)
                  << std::setw(12) << format_fixed(loss_at(0.5), 4) << std::setw(12) << format_fixed(loss_at(1.0), 4)
                  << std::setw(12) << format_fixed(best, 2) << std::setw(14) << format_number(grad, 3) << std::setw(12)
                  << format_fixed(entropy, 2) << std::setw(14) << format_fixed(spread, 3) << "\n";
    }
}

// The loss just before the ablation, the worst of the 50 steps after it, and at the end.
void print_ablation(const TrainConfig& c, const Run& run) {
    double before = 0, after = 0, end = 0;
    for (const auto& e : run.log) {
        const std::int64_t step = e["step"];
        const double loss = e["loss"];
        if (step < c.ablate_at) before = loss;
        if (step >= c.ablate_at && step < c.ablate_at + 50) after = std::max(after, loss);
        end = loss;
    }
    std::cout << "L" << c.ablate_layer << "H" << c.ablate_head << " ablated at step " << c.ablate_at << ": loss "
              << format_fixed(before, 4) << " before, " << format_fixed(after, 4) << " at worst in the 50 steps after, "
              << format_fixed(end, 4) << " at the end\n";
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
    cmd->add_option("--scale", scale, "sqrt | head_dim | none: the scores times 1/sqrt(head_dim) (default), 1/head_dim or 1");
    cmd->add_option("--compare", compare, "scale | init | heads | ablate: runs side by side on the same seed, one thing changed "
                                          "(the three scales; independent vs identical heads; 1 head vs --heads; the last layer's head 0 "
                                          "ablated half-way), and a table");
    cmd->add_option("--log-every", log_every, "steps between log lines (default 10)");
    needs_a_path(cmd->add_option("--json", json, "write the log as JSON to this file"));
    cmd->add_flag("--identical-heads", identical_heads, "start every head of a layer from the same weights");
}

int TrainCommand::run() const {
    const TrainConfig c = parse(*this);
    const std::int64_t every = parse_count("--log-every", log_every, 1, 1000000);
    const std::vector<std::pair<std::string, TrainConfig>> vs = experiment_runs(c, compare);
    if (!json.empty()) check_writable(json);
    BackendRequest request;
    request.kind = c.backend;
    request.notices = &std::cerr;
    BackendChoice choice = choose_backend(request);
    const TaskShape shape = task_shape(c.task);
    std::cout << "train " << task_name(c.task) << ": " << c.layers << " layer" << (c.layers > 1 ? "s" : "") << " x "
              << c.heads << " heads, d_model " << c.d_model << ", vocab " << shape.vocab << ", " << shape.tokens
              << " tokens, batch " << c.batch << ", lr " << format_number(c.lr) << ", seed " << c.seed << ", "
              << mode_name(c.mode) << " on " << backend_name(choice.kind) << "\n";
    std::cout << "a head's score: its " << score_name(c.task, 0)
              << (c.layers > 1 && c.task == Task::Induction ? " (layer 0), " + score_name(c.task, 1) + " (layer 1)" : "")
              << ", on " << c.probe << " probe sequences\n";
    std::vector<Run> runs;
    for (const auto& [name, v] : vs) {
        if (!name.empty()) std::cout << name << ":\n";
        runs.push_back(train_run(v, *choice.backend, every, true, name));
    }
    double seconds = 0;
    std::int64_t done = 0;
    for (const Run& r : runs) seconds += r.seconds, done += r.done;
    std::cout << done << " steps in " << format_fixed(seconds, 2) << " s of training ("
              << format_fixed(done / std::max(seconds, 1e-9), 1) << " steps/s)\n";
    if (!compare.empty()) print_comparison(vs, runs);
    if (compare == "ablate") print_ablation(vs[1].second, runs[1]);
    std::string stopped;
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (!runs[i].stopped.empty() && stopped.empty()) stopped = (vs[i].first.empty() ? "" : vs[i].first + ": ") + runs[i].stopped;
    if (!json.empty()) {
        const auto run_doc = [&](const TrainConfig& v, const Run& r) {
            nlohmann::json doc = {{"task", task_name(v.task)}, {"steps", r.done}, {"seed", v.seed}, {"lr", v.lr},
                                  {"batch", v.batch}, {"layers", v.layers}, {"heads", v.heads}, {"d_model", v.d_model},
                                  {"mode", mode_name(v.mode)}, {"backend", backend_name(choice.kind)},
                                  {"scale", scale_name(v.scale)}, {"identical_heads", v.identical_heads},
                                  {"train_seconds", r.seconds}, {"log", r.log}};
            if (!r.stopped.empty()) doc["stopped"] = r.stopped;
            return doc;
        };
        nlohmann::json doc;
        if (compare.empty()) {
            doc = run_doc(vs[0].second, runs[0]);
        } else {
            doc = {{"compare", compare}, {"runs", nlohmann::json::array()}};
            for (std::size_t i = 0; i < runs.size(); ++i) {
                nlohmann::json r = run_doc(vs[i].second, runs[i]);
                r["name"] = vs[i].first;
                doc["runs"].push_back(r);
            }
        }
        write_file_atomically(json, doc.dump(1) + "\n");
    }
    if (!stopped.empty()) {
        std::cerr << "headsplit: training stopped: " << terminal_text(stopped) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace headsplit::app
