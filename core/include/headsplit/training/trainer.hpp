#pragma once
// A tiny model of the attention HeadSplit teaches, trained on a task: token and position
// embeddings, `layers` of the engine's multi-head attention (output projection, a residual
// around each), an unembedding, cross-entropy on the next token; Adam. Every attention
// gradient comes from the engine's backward pass; this adds only the embeddings', the
// unembedding's and the loss's, which are not attention.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/training/tasks.hpp"

namespace headsplit {

struct TrainConfig {
    Task task = Task::Induction;
    std::int64_t steps = 0, batch = 0, layers = 0, heads = 0, d_model = 0;  // 0: the task's default
    double lr = 0;                                                          // 0: the task's default
    std::uint64_t seed = 1;
    Mode mode = Mode::Split;
    BackendKind backend = BackendKind::Cpu;
    // Every head of a layer starts from the same weights (the symmetry that is never broken).
    bool identical_heads = false;
    Scale scale = Scale::SqrtHeadDim;  // what the scores are scaled by (the scale experiment)
    // Ablation: from step `ablate_at` (> 0) on, head `ablate_head` of layer `ablate_layer`
    // writes nothing: its columns of W_out are zeroed before that step's pass and again after
    // every update, so the layer's output no longer reads the head's context.
    std::int64_t ablate_at = 0, ablate_layer = 0, ablate_head = 0;
    std::int64_t probe = 32;  // sequences of the probe batch the heads are scored on
    std::uint64_t memory_budget = kDefaultMemoryBudget;
};
// `c` with every 0 replaced by the task's default.
TrainConfig with_defaults(TrainConfig c);
// ConfigError naming the first bad value (a learning rate of 0, negative or not finite; heads
// that do not divide d_model; a model over the memory budget; ...). `c` has its defaults.
void validate(const TrainConfig& c);

// Adam as torch.optim.Adam computes it (no weight decay, no amsgrad):
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
struct Adam {
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    std::int64_t t = 0;
    std::vector<std::vector<float>> m, v;  // one pair per parameter, made at the first update
    // One step over every parameter with its gradient, in the same order each time.
    void update(const std::vector<std::vector<float>*>& params, const std::vector<const std::vector<float>*>& grads);
};

struct TinyModel {
    std::int64_t vocab = 0, tokens = 0, d_model = 0, heads = 0;
    std::vector<float> embed;         // [vocab, d_model]
    std::vector<float> position;      // [tokens, d_model]
    std::vector<Weights> attention;   // one a layer: W_query, W_key, W_value, W_out, b_out
    std::vector<float> unembed;       // [vocab, d_model]
    // Every parameter with its name ("embed", "layers.0.w_query", ..., "unembed"), in one order.
    std::vector<std::pair<std::string, std::vector<float>*>> parameters();
};
// Seeded: the attention as make_weights draws it (a seed per layer), the embeddings and the
// unembedding uniform in [-1, 1) / sqrt(d_model) from their own streams.
TinyModel init_model(const TrainConfig& c);

// Where a loss curve (one loss a step, from step 1) falls off its cliff: the step i whose
// `window` steps before it average the most above the `window` steps from it, when that fall
// is at least a quarter of the first window's mean; 0 where there is none (yet).
std::int64_t loss_cliff(const std::vector<double>& losses, std::int64_t window = 20);

// The runs an experiment makes of `c` (its defaults filled in), each with its name, the same
// seed with one thing changed, c itself first: "scale" (1/sqrt(head_dim), 1/head_dim, none),
// "init" (independent, identical heads), "heads" (c.heads, 1 head), "ablate" (every head; the last
// layer's head 0 silenced from the step after half of c.steps). "": c alone, unnamed.
// ConfigError for another name or a run that validate() refuses.
std::vector<std::pair<std::string, TrainConfig>> experiment_runs(const TrainConfig& c, const std::string& experiment);
const std::vector<std::string>& experiments();  // "scale", "init", "heads", "ablate"

// One step's outcome.
struct StepResult {
    double loss = 0;      // mean cross-entropy over the counted positions
    double accuracy = 0;  // the argmax's share of right next tokens there
};

// Each head's name ("L0H1"), its task score in [0, 1] on the probe batch, and the size (L2
// norm) of its block of dW_query at the last step.
struct HeadReport {
    std::string name;
    double score = 0, grad_norm = 0;
    // The mean entropy of its rows (nats): near log(row length) for a head that spreads its
    // weight evenly, near 0 for one that saturates on a single key.
    double entropy = 0;
};
struct Probe {
    TaskBatch batch;
    std::vector<std::vector<float>> weights;  // a layer: its attention weights [P, H, T, T]
    std::vector<HeadReport> heads;
    StepResult result;                        // loss and accuracy on the probe batch
};

// A training run on a backend: step() after step(), each a seeded batch. A step whose loss or
// gradients are not finite throws std::runtime_error (one line) and leaves the model as it
// was before it.
class Trainer {
public:
    Trainer(const TrainConfig& config, Backend& backend);
    ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    StepResult step();
    std::int64_t steps_done() const;
    // The model now on the probe batch: its attention weights and the heads' scores.
    Probe probe();
    const TrainConfig& config() const;
    const TinyModel& model() const;
    // The gradient of every parameter at the last step, in parameters()'s order, and the
    // batch it was taken on.
    const std::vector<std::vector<float>>& gradients() const;
    const TaskBatch& last_batch() const;
    // Replaces a parameter's values (a checkpoint's, a test's): std::logic_error for a name
    // parameters() does not give or another size.
    void set_parameter(const std::string& name, const std::vector<float>& values);

private:
    struct State;
    std::unique_ptr<State> st_;
};

}  // namespace headsplit
