#pragma once
// The Train view's state (N): a tiny model trained in the window, a few steps a frame so that
// the window keeps drawing, with the snapshots the filmstrip scrubs through. The numbers come
// from the Trainer; nothing here computes a gradient.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/training/trainer.hpp"

namespace headsplit::gui {

// The model as it stood at one step: the loss, each head's score and gradient size, and each
// layer's attention weights on the first probe sequence ([H, T, T]).
struct TrainSnapshot {
    std::int64_t step = 0;
    double loss = 0, accuracy = 0;
    std::vector<HeadReport> heads;
    std::vector<std::vector<float>> weights;  // a layer: [H, T, T]
};

struct TrainView {
    bool shown = false;    // N: the Train view in the panels' place
    bool running = false;  // Space: training a few steps each frame
    TrainConfig base;      // what was asked for (task, seed, ...), with its defaults
    TrainConfig config;    // the run's on screen: `base`, or an experiment's first run
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Trainer> trainer;
    std::vector<double> losses;        // every step's training loss, from step 1
    std::vector<TrainSnapshot> film;   // a snapshot every few steps, the first at step 0
    TaskBatch probe;                   // the first probe sequence: the maps' labels and the job's cells
    int shown_snapshot = -1;           // the filmstrip's frame on screen; -1: the latest
    double steps_per_second = 0;       // over the last frame that trained
    std::int64_t cliff = 0;            // loss_cliff() of `losses`, 0: none yet
    std::string stopped;               // why training stopped (a loss that overflowed), or ""
    // An experiment (experiments(): "scale", ...), or "": its other runs train beside this one in
    // step, the same seed with one thing changed; the loss chart draws each.
    std::string experiment;
    struct Beside {
        std::string name;
        std::unique_ptr<Trainer> trainer;
        std::vector<double> losses;
    };
    std::string name;                  // this run's name in the experiment ("" without one)
    std::vector<Beside> beside;
};

// Steps between snapshots.
constexpr std::int64_t kSnapshotEvery = 10;

// A fresh run of `config` (its defaults filled in): the model at step 0, its first snapshot;
// with `experiment`, its first run is this one and the others train beside it. ConfigError for
// settings the Trainer refuses.
void start_training(TrainView& v, const TrainConfig& config, const std::string& experiment = "");
// Trains until `steps` more are done or `budget_ms` has passed (one frame's share), taking a
// snapshot every kSnapshotEvery steps; stops at the run's last step or at a step that does not
// train (`stopped` says why). Returns the steps done.
std::int64_t train_some(TrainView& v, std::int64_t steps, double budget_ms);
// The snapshot on screen: the filmstrip's frame, or the latest.
const TrainSnapshot* shown_snapshot(const TrainView& v);

}  // namespace headsplit::gui
