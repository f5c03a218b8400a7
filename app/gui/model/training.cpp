#include "gui/model/training.hpp"

#include <chrono>
#include <stdexcept>

#include "headsplit/backends/cpu_backend.hpp"

namespace headsplit::gui {

namespace {

TrainSnapshot snapshot(Trainer& t, double loss, double accuracy) {
    const Probe p = t.probe();
    TrainSnapshot s;
    s.step = t.steps_done();
    s.loss = t.steps_done() > 0 ? loss : p.result.loss;
    s.accuracy = t.steps_done() > 0 ? accuracy : p.result.accuracy;
    s.heads = p.heads;
    const std::int64_t H = t.config().heads, T = p.batch.tokens;
    for (const std::vector<float>& w : p.weights)  // the first probe sequence's [H, T, T]
        s.weights.emplace_back(w.begin(), w.begin() + H * T * T);
    return s;
}

}  // namespace

void start_training(TrainView& v, const TrainConfig& config, const std::string& experiment) {
    const std::vector<std::pair<std::string, TrainConfig>> runs = experiment_runs(with_defaults(config), experiment);
    v.base = with_defaults(config);
    if (!v.backend) v.backend = make_cpu_backend();
    v.trainer.reset();
    v.beside.clear();
    v.trainer = std::make_unique<Trainer>(runs.front().second, *v.backend);
    v.experiment = experiment;
    v.name = runs.front().first;
    for (std::size_t i = 1; i < runs.size(); ++i)
        v.beside.push_back({runs[i].first, std::make_unique<Trainer>(runs[i].second, *v.backend), {}});
    v.config = v.trainer->config();
    v.losses.clear();
    v.film.clear();
    v.running = false;
    v.shown_snapshot = -1;
    v.steps_per_second = 0;
    v.cliff = 0;
    v.stopped.clear();
    v.film.push_back(snapshot(*v.trainer, 0, 0));
    const Probe p = v.trainer->probe();
    v.probe = p.batch;
    v.probe.batch = 1;
    v.probe.ids.resize(static_cast<std::size_t>(p.batch.tokens));
    v.probe.targets.resize(static_cast<std::size_t>(p.batch.tokens));
    if (!v.probe.lag.empty()) v.probe.lag.resize(1);
}

std::int64_t train_some(TrainView& v, std::int64_t steps, double budget_ms) {
    if (!v.trainer || !v.stopped.empty()) return 0;
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    std::int64_t done = 0;
    while (done < steps && v.trainer->steps_done() < v.config.steps) {
        StepResult r;
        try {
            r = v.trainer->step();
        } catch (const std::runtime_error& e) {
            v.stopped = e.what();
            v.running = false;
            break;
        }
        ++done;
        v.losses.push_back(r.loss);
        for (TrainView::Beside& b : v.beside) {
            if (b.losses.size() >= v.losses.size()) continue;  // one that stopped stays stopped
            try {
                b.losses.push_back(b.trainer->step().loss);
            } catch (const std::runtime_error&) {
            }
        }
        if (v.trainer->steps_done() % kSnapshotEvery == 0 || v.trainer->steps_done() == v.config.steps)
            v.film.push_back(snapshot(*v.trainer, r.loss, r.accuracy));
        if (std::chrono::duration<double, std::milli>(clock::now() - start).count() >= budget_ms) break;
    }
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (done > 0 && seconds > 0) v.steps_per_second = static_cast<double>(done) / seconds;
    if (v.trainer->steps_done() >= v.config.steps) v.running = false;
    v.cliff = loss_cliff(v.losses);
    return done;
}

const TrainSnapshot* shown_snapshot(const TrainView& v) {
    if (v.film.empty()) return nullptr;
    if (v.shown_snapshot < 0 || v.shown_snapshot >= static_cast<int>(v.film.size())) return &v.film.back();
    return &v.film[static_cast<std::size_t>(v.shown_snapshot)];
}

}  // namespace headsplit::gui
