#include "headsplit/training/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "headsplit/base/numbers.hpp"
#include "headsplit/engine/engine.hpp"
#include "model_math.hpp"

namespace headsplit {

namespace {

constexpr std::uint64_t kDataStream = 0xD1B54A32D192ED03ull;
constexpr std::uint64_t kProbeStream = 0x8CB92BA72F3D8DD7ull;
constexpr std::uint64_t kEmbedStream = 0x2545F4914F6CDD1Dull;

// The configuration of layer `layer`'s attention over `batch` sequences.
Config layer_config(const TrainConfig& c, std::int64_t tokens, std::int64_t batch, std::int64_t layer, bool backward,
                    Mode mode) {
    Config a;
    a.preset = std::string("train-") + task_name(c.task);
    a.set_sentences(std::vector<std::vector<std::string>>(static_cast<std::size_t>(batch), synthetic_tokens(tokens)));
    a.d_in = a.d_out = c.d_model;
    a.heads = c.heads;
    a.causal = true;
    a.mode = mode;
    a.backend = c.backend;
    a.seed = c.seed * 1000 + static_cast<std::uint64_t>(layer);
    a.out_proj = true;
    a.scale = c.scale;
    a.backward = backward;
    a.memory_budget = c.memory_budget;
    return a;
}

std::vector<float> uniform(std::uint64_t seed, std::int64_t n, float bound) {
    Rng rng(seed);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = rng.uniform(-bound, bound);
    return v;
}

// Every head of the weight's row blocks (W_query, W_key, W_value) or column blocks (W_out: the
// columns that read head h's context) made equal to head 0's.
void copy_head_zero(Weights& w, std::int64_t d, std::int64_t heads) {
    const std::int64_t hd = d / heads;
    for (std::vector<float>* m : {&w.w_query, &w.w_key, &w.w_value})
        for (std::int64_t h = 1; h < heads; ++h)
            std::copy_n(m->begin(), hd * d, m->begin() + h * hd * d);
    for (std::int64_t r = 0; r < d; ++r)
        for (std::int64_t h = 1; h < heads; ++h)
            std::copy_n(w.w_out.begin() + r * d, hd, w.w_out.begin() + r * d + h * hd);
}

}  // namespace

TrainConfig with_defaults(TrainConfig c) {
    const TaskShape s = task_shape(c.task);
    if (c.steps == 0) c.steps = s.steps;
    if (c.batch == 0) c.batch = s.batch;
    if (c.layers == 0) c.layers = s.layers;
    if (c.heads == 0) c.heads = s.heads;
    if (c.d_model == 0) c.d_model = s.d_model;
    if (c.lr == 0) c.lr = s.lr;
    return c;
}

void validate(const TrainConfig& c) {
    if (!std::isfinite(c.lr) || c.lr <= 0 || c.lr > 1)
        throw ConfigError("--lr " + format_number(c.lr) + ": a learning rate is a number above 0 and at most 1 (Adam's "
                          "usual ones are 1e-3 to 1e-2)");
    const auto range = [](const char* name, std::int64_t v, std::int64_t lo, std::int64_t hi) {
        if (v < lo || v > hi)
            throw ConfigError(std::string(name) + " " + std::to_string(v) + ": give " + std::to_string(lo) + " to " +
                              std::to_string(hi));
    };
    range("--steps", c.steps, 1, 1000000);
    range("--batch", c.batch, 1, 4096);
    range("--layers", c.layers, 1, 8);
    range("--d-model", c.d_model, 1, 1024);
    range("--heads", c.heads, 1, c.d_model);
    if (c.d_model % c.heads != 0)
        throw ConfigError("--heads " + std::to_string(c.heads) + " does not divide --d-model " + std::to_string(c.d_model) +
                          ": each head takes d_model / heads features");
    range("--probe", c.probe, 1, 4096);
    if (c.ablate_at > 0) {
        range("the ablated layer", c.ablate_layer, 0, c.layers - 1);
        range("the ablated head", c.ablate_head, 0, c.heads - 1);
    }
    if (c.mode == Mode::Flash) throw ConfigError("--mode flash: training runs loop, split or fused");
    // Each layer keeps a forward runner and a forward-and-backward one on the backend.
    const std::int64_t T = task_shape(c.task).tokens;
    const CheckedConfig one = check_config(layer_config(c, T, c.batch, 0, true, c.mode), kNoWords);
    const double bytes = 2.0 * static_cast<double>(c.layers) * one.memory.backend_bytes;
    if (bytes > static_cast<double>(c.memory_budget))
        throw ConfigError("training " + std::to_string(c.layers) + " layers at --batch " + std::to_string(c.batch) +
                          " needs " + human_bytes(bytes) + ", over the memory budget of " +
                          human_bytes(static_cast<double>(c.memory_budget)) + "; give a smaller --batch or --d-model");
}

std::int64_t loss_cliff(const std::vector<double>& losses, std::int64_t window) {
    const std::int64_t n = static_cast<std::int64_t>(losses.size());
    if (window < 1 || n < 2 * window) return 0;
    std::vector<double> sums(static_cast<std::size_t>(n + 1), 0.0);  // sums[i]: losses[0 .. i-1]
    for (std::int64_t i = 0; i < n; ++i) sums[static_cast<std::size_t>(i + 1)] = sums[static_cast<std::size_t>(i)] + losses[static_cast<std::size_t>(i)];
    const auto mean = [&](std::int64_t from, std::int64_t to) {
        return (sums[static_cast<std::size_t>(to)] - sums[static_cast<std::size_t>(from)]) / static_cast<double>(to - from);
    };
    std::int64_t best = 0;
    double fall = 0;
    for (std::int64_t i = window; i + window <= n; ++i) {
        const double f = mean(i - window, i) - mean(i, i + window);
        if (f > fall) fall = f, best = i;
    }
    return fall >= 0.25 * mean(0, window) ? best + 1 : 0;  // steps count from 1
}

const std::vector<std::string>& experiments() {
    static const std::vector<std::string> names{"scale", "init", "heads", "ablate"};
    return names;
}

std::vector<std::pair<std::string, TrainConfig>> experiment_runs(const TrainConfig& c, const std::string& experiment) {
    std::vector<std::pair<std::string, TrainConfig>> out;
    if (experiment.empty()) return {{"", c}};
    if (experiment == "scale") {
        for (Scale s : {Scale::SqrtHeadDim, Scale::HeadDim, Scale::None}) {
            TrainConfig v = c;
            v.scale = s;
            out.push_back({std::string("scale ") + scale_name(s), v});
        }
    } else if (experiment == "init") {
        for (bool same : {false, true}) {
            TrainConfig v = c;
            v.identical_heads = same;
            out.push_back({same ? "identical heads" : "independent heads", v});
        }
    } else if (experiment == "heads") {
        TrainConfig one = c;
        one.heads = 1;
        out.push_back({std::to_string(c.heads) + " heads", c});
        out.push_back({"1 head", one});
    } else if (experiment == "ablate") {
        out.push_back({"all heads", c});
        TrainConfig v = c;
        v.ablate_at = c.steps / 2 + 1, v.ablate_layer = c.layers - 1, v.ablate_head = 0;
        out.push_back({"L" + std::to_string(v.ablate_layer) + "H0 ablated", v});
    } else {
        throw ConfigError("--compare " + experiment + " is not an experiment; use scale, init, heads or ablate");
    }
    for (auto& run : out) validate(run.second);
    return out;
}

std::vector<std::pair<std::string, std::vector<float>*>> TinyModel::parameters() {
    std::vector<std::pair<std::string, std::vector<float>*>> out{{"embed", &embed}, {"position", &position}};
    for (std::size_t l = 0; l < attention.size(); ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        Weights& w = attention[l];
        out.insert(out.end(), {{p + "w_query", &w.w_query}, {p + "w_key", &w.w_key}, {p + "w_value", &w.w_value},
                               {p + "w_out", &w.w_out}, {p + "b_out", &w.b_out}});
    }
    out.emplace_back("unembed", &unembed);
    return out;
}

TinyModel init_model(const TrainConfig& c) {
    const TaskShape s = task_shape(c.task);
    TinyModel m;
    m.vocab = s.vocab, m.tokens = s.tokens, m.d_model = c.d_model, m.heads = c.heads;
    const float bound = 1.0f / std::sqrt(static_cast<float>(c.d_model));
    m.embed = uniform(c.seed ^ kEmbedStream, s.vocab * c.d_model, 1.0f);
    m.position = uniform((c.seed ^ kEmbedStream) + 1, s.tokens * c.d_model, 1.0f);
    m.unembed = uniform((c.seed ^ kEmbedStream) + 2, s.vocab * c.d_model, bound);
    for (std::int64_t l = 0; l < c.layers; ++l) {
        m.attention.push_back(make_weights(layer_config(c, s.tokens, 1, l, false, c.mode)));
        if (c.identical_heads) copy_head_zero(m.attention.back(), c.d_model, c.heads);
    }
    return m;
}

// A layer's two runners over `batch` sequences: the forward, and the forward with the
// backward (which runs the forward again: the engine's backward starts from its own tape).
struct LayerRun {
    Inputs fwd_in, bwd_in;
    std::unique_ptr<Runner> fwd, bwd;
};

struct Trainer::State {
    TrainConfig c;
    Backend& be;
    TinyModel model;
    Adam adam;
    std::int64_t step = 0;
    TaskBatch probe_batch, last_batch;
    std::vector<LayerRun> layers;  // over c.batch sequences
    std::vector<std::vector<float>> grads;
    std::vector<std::vector<float>> hs;  // each layer's input, then the last layer's output

    State(const TrainConfig& config, Backend& backend) : c(config), be(backend), model(init_model(config)) {
        adam.lr = c.lr;
        Rng probe_rng(c.seed ^ kProbeStream);
        probe_batch = make_batch(c.task, c.probe, probe_rng);
        layers.resize(static_cast<std::size_t>(c.layers));
        const std::int64_t T = model.tokens;
        for (std::int64_t l = 0; l < c.layers; ++l) {
            LayerRun& r = layers[static_cast<std::size_t>(l)];
            const Weights& w = model.attention[static_cast<std::size_t>(l)];
            const std::size_t n = static_cast<std::size_t>(c.batch * T * c.d_model);
            r.fwd_in.x.assign(n, 0.0f);
            r.bwd_in.x.assign(n, 0.0f);
            r.bwd_in.dout.assign(n, 0.0f);
            r.fwd = std::make_unique<Runner>(layer_config(c, T, c.batch, l, false, c.mode), r.fwd_in, w, be);
            r.bwd = std::make_unique<Runner>(layer_config(c, T, c.batch, l, true, c.mode), r.bwd_in, w, be);
        }
    }

    // From the ablation's step on: the ablated head's columns of its layer's W_out set to 0.
    void silence_ablated() {
        if (c.ablate_at <= 0 || step + 1 < c.ablate_at) return;
        std::vector<float>& w_out = model.attention[static_cast<std::size_t>(c.ablate_layer)].w_out;
        const std::int64_t d = c.d_model, hd = d / c.heads;
        for (std::int64_t r = 0; r < d; ++r)
            std::fill_n(w_out.begin() + r * d + c.ablate_head * hd, hd, 0.0f);
    }

    // Loss, accuracy and (with `backward`) every gradient of `batch`, which has c.batch rows.
    StepResult pass(const TaskBatch& batch, bool backward) {
        RunOptions quiet;
        quiet.record_values = false;
        hs.assign(1, embed(model, batch));
        for (LayerRun& r : layers) {
            r.fwd_in.x = hs.back();
            r.fwd->reload();
            const Trace t = r.fwd->run(quiet);
            hs.push_back(residual(hs.back(), t.steps.back().tensors.back().data));
        }
        Logits out = unembed_loss(model, batch, hs.back());
        if (!std::isfinite(out.result.loss))
            throw std::runtime_error("the loss is " + format_number(out.result.loss) + ": the numbers overflowed");
        if (!backward) return out.result;
        std::vector<std::vector<float>> g;
        g.resize(model.parameters().size());
        std::vector<float> dh = unembed_backward(model, hs.back(), out.d_logits, g.back());
        for (std::int64_t l = c.layers - 1; l >= 0; --l) {
            LayerRun& r = layers[static_cast<std::size_t>(l)];
            r.bwd_in.x = hs[static_cast<std::size_t>(l)];
            r.bwd_in.dout = dh;
            r.bwd->reload();
            const Trace t = r.bwd->run(quiet);
            Gradients lg = read_gradients(t, be);
            const std::size_t at = 2 + 5 * static_cast<std::size_t>(l);
            g[at] = std::move(lg.weights.w_query), g[at + 1] = std::move(lg.weights.w_key);
            g[at + 2] = std::move(lg.weights.w_value), g[at + 3] = std::move(lg.weights.w_out);
            g[at + 4] = std::move(lg.weights.b_out);
            for (std::size_t i = 0; i < dh.size(); ++i) dh[i] += lg.dx[i];  // the residual's two paths
        }
        embed_backward(model, batch, dh, g[0], g[1]);
        grads = std::move(g);
        return out.result;
    }
};

Trainer::Trainer(const TrainConfig& config, Backend& backend) {
    const TrainConfig c = with_defaults(config);
    validate(c);
    st_ = std::make_unique<State>(c, backend);
}

Trainer::~Trainer() = default;

StepResult Trainer::step() {
    State& s = *st_;
    Rng rng((s.c.seed ^ kDataStream) + static_cast<std::uint64_t>(s.step) * 0x9E3779B97F4A7C15ull);
    s.silence_ablated();
    s.last_batch = make_batch(s.c.task, s.c.batch, rng);
    const StepResult r = s.pass(s.last_batch, true);
    for (std::size_t i = 0; i < s.grads.size(); ++i)
        for (float v : s.grads[i])
            if (!std::isfinite(v))
                throw std::runtime_error("step " + std::to_string(s.step + 1) + ": a gradient of " +
                                         s.model.parameters()[i].first + " is " + format_number(v) +
                                         "; the model is kept as it was before this step");
    std::vector<std::vector<float>*> params;
    std::vector<const std::vector<float>*> grads;
    for (auto& p : s.model.parameters()) params.push_back(p.second);
    for (const auto& g : s.grads) grads.push_back(&g);
    s.adam.update(params, grads);
    // Adam's moments from before the ablation would still move the zeroed columns.
    s.silence_ablated();
    ++s.step;
    return r;
}

std::int64_t Trainer::steps_done() const { return st_->step; }
const TrainConfig& Trainer::config() const { return st_->c; }
const TinyModel& Trainer::model() const { return st_->model; }
const std::vector<std::vector<float>>& Trainer::gradients() const { return st_->grads; }
const TaskBatch& Trainer::last_batch() const { return st_->last_batch; }

void Trainer::set_parameter(const std::string& name, const std::vector<float>& values) {
    for (auto& [n, p] : st_->model.parameters()) {
        if (n != name) continue;
        if (p->size() != values.size()) throw std::logic_error("set_parameter: " + name + " has another size");
        *p = values;
        return;
    }
    throw std::logic_error("set_parameter: no parameter " + name);
}

Probe Trainer::probe() {
    State& s = *st_;
    const TrainConfig& c = s.c;
    Probe p;
    p.batch = s.probe_batch;
    std::vector<float> h = embed(s.model, p.batch);
    for (std::int64_t l = 0; l < c.layers; ++l) {
        // Split mode computes every mode's numbers; its attention weights are one [P, H, T, T].
        const Config a = layer_config(c, s.model.tokens, c.probe, l, false, Mode::Split);
        Inputs in;
        in.x = h;
        const Weights& w = s.model.attention[static_cast<std::size_t>(l)];
        Runner runner(a, in, w, s.be);
        const Trace t = runner.run();
        p.weights.push_back(read_tensor(t, "attn_weights", s.be));
        h = residual(h, t.steps.back().tensors.back().values());
        const std::size_t wq = 2 + 5 * static_cast<std::size_t>(l);
        for (std::int64_t head = 0; head < c.heads; ++head) {
            HeadReport r;
            r.name = "L" + std::to_string(l) + "H" + std::to_string(head);
            r.score = head_score(c.task, p.batch, l, c.heads, head, p.weights.back());
            if (wq < s.grads.size()) r.grad_norm = block_norm(s.grads[wq], head, c.d_model / c.heads, c.d_model);
            r.entropy = row_entropy(p.weights.back(), c.probe, c.heads, head, s.model.tokens);
            p.heads.push_back(std::move(r));
        }
    }
    p.result = unembed_loss(s.model, p.batch, h).result;
    return p;
}

}  // namespace headsplit
