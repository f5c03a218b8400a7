// The trace as a graph, and the engine's promises that the refactor of issue 10 made:
// links point backwards to what exists, a Runner whose first run records nothing still
// computes everything (dropout included), the memory estimate is what a run allocates, and
// two runners share a backend.
#include <catch2/catch.hpp>

#include <set>

#include "headsplit/gl_backend.hpp"
#include "helpers.hpp"

using namespace headsplit;

namespace {

std::unique_ptr<Backend> backend_of(BackendKind kind) {
    return kind == BackendKind::Gl ? make_gl_backend() : make_cpu_backend();
}

// Twenty-four configurations: every mode, with and without each switch.
std::vector<Config> configurations() {
    std::vector<Config> out;
    for (Mode mode : {Mode::Loop, Mode::Split, Mode::Fused})
        for (int variant = 0; variant < 8; ++variant) {
            Config c;
            c.mode = mode;
            c.tokens = synthetic_tokens(2 + variant);
            c.d_in = 4 + variant;
            c.d_out = 12;
            c.heads = variant % 2 ? 3 : 4;
            c.dropout = variant % 3 == 0 ? 0.25 : 0.0;
            c.qkv_bias = variant % 4 == 1;
            c.out_proj = variant != 5;
            c.causal = variant != 6;
            c.scale_first = variant == 7;
            c.seed = static_cast<std::uint64_t>(variant);
            out.push_back(c);
        }
    return out;
}

}  // namespace

TEST_CASE("every tensor names what it was made from, earlier in the trace", "[graph]") {
    for (const Config& c : configurations()) {
        const Trace tr = test::run_cpu(c);
        INFO(mode_name(c.mode) << " T=" << c.num_tokens() << " dropout=" << c.dropout << " bias=" << c.qkv_bias);
        for (const Step& s : tr.steps)
            for (std::size_t t = 0; t < s.tensors.size(); ++t) {
                const TensorRecord& rec = s.tensors[t];
                INFO("step " << s.index << " " << op_name(s.op) << " " << rec.name);
                const bool source = (s.op == Op::Input && rec.name == "x") || rec.name == "dropout_mask";
                CHECK(rec.from.empty() == source);
                for (const Source& link : rec.from) {
                    if (link.is_weight()) {
                        const std::vector<float>* w = tr.weights.find(link.weight);
                        REQUIRE(w);
                        CHECK_FALSE(w->empty());
                        continue;
                    }
                    // An earlier step, or (dropout's output naming its mask) an earlier tensor
                    // of the same step.
                    CHECK(link.step <= s.index);
                    const TensorRecord* to = tr.source(link);
                    REQUIRE(to);
                    if (link.step == s.index) CHECK(to < &rec);
                }
            }
    }
}

TEST_CASE("links say which tensors an op read", "[graph]") {
    Config c;
    c.qkv_bias = true;
    const Trace tr = test::run_cpu(c);
    const Step* scores = test::find_step(tr, Op::Scores);
    const Step* transpose = test::find_step(tr, Op::Transpose);
    REQUIRE((scores && transpose));
    const std::vector<Source> want{Source::of_step(transpose->index, "queries"), Source::of_step(transpose->index, "keys")};
    CHECK(scores->tensors[0].from == want);
    const Step* project = test::find_step(tr, Op::Project);
    const std::vector<Source> q{Source::of_step(0, "x"), Source::of_weight("w_query"), Source::of_weight("b_query")};
    CHECK(project->tensors[0].from == q);
    // The mask and the scale are in place: each links to the one before it.
    const Step* mask = test::find_step(tr, Op::Mask);
    const Step* scale = test::find_step(tr, Op::Scale);
    CHECK(mask->tensors[0].from == std::vector<Source>{Source::of_step(scores->index, "attn_scores")});
    CHECK(scale->tensors[0].from == std::vector<Source>{Source::of_step(mask->index, "attn_scores")});
}

TEST_CASE("a Runner whose first run records nothing computes the same, dropout included", "[graph][runner]") {
    // The crash of issue 10: the first run without recording left the dropout mask empty.
    const BackendKind kind = GENERATE(BackendKind::Cpu, BackendKind::Gl);
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    Config c;
    c.mode = mode;
    c.backend = kind;
    c.dropout = 0.3;
    c.qkv_bias = mode == Mode::Fused;
    c.tokens = synthetic_tokens(7);
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    auto recorded_backend = backend_of(kind);
    const Trace recorded = run(c, in, w, *recorded_backend);
    auto backend = backend_of(kind);
    Runner runner(c, in, w, *backend);
    const Trace quiet = runner.run({false, false});  // the first run of this runner
    INFO(backend_name(kind) << " " << mode_name(mode));
    REQUIRE(quiet.steps.back().tensors.back().data.size() == recorded.steps.back().tensors.back().data.size());
    CHECK(test::max_abs_diff(quiet.steps.back().tensors.back().data, recorded.steps.back().tensors.back().data) < 1e-5);
    // The recorded mask really drops something, so the comparison covers dropout.
    const Step* d = test::find_step(recorded, Op::Dropout, mode == Mode::Loop ? 0 : -1);
    REQUIRE(d);
    const std::vector<float>& keep = d->find("dropout_mask")->data;
    CHECK(std::count(keep.begin(), keep.end(), 0.0f) > 0);
}

TEST_CASE("the memory estimate is what a run allocates, on both backends", "[graph][memory]") {
    const BackendKind kind = GENERATE(BackendKind::Cpu, BackendKind::Gl);
    int checked = 0;
    for (const Config& c : configurations()) {
        INFO(backend_name(kind) << " " << mode_name(c.mode) << " T=" << c.num_tokens() << " dropout=" << c.dropout);
        const CheckedConfig ck = check_config(c);
        const Inputs in = make_inputs(c);
        const Weights w = make_weights(c);
        auto backend = backend_of(kind);
        const std::int64_t before = backend->used_bytes();
        Runner runner(ck, in, w, *backend);
        const Trace tr = runner.run();
        CHECK(static_cast<double>(backend->used_bytes() - before) == ck.memory.backend_bytes);
        CHECK(static_cast<double>(tr.value_bytes()) == ck.memory.trace_bytes);
        CHECK(ck.memory.host_bytes > 0);
        ++checked;
    }
    CHECK(checked >= 20);
}

TEST_CASE("two runners share a backend; each releases only its own buffers", "[graph][runner]") {
    const BackendKind kind = GENERATE(BackendKind::Cpu, BackendKind::Gl);
    Config a, b;
    a.backend = b.backend = kind;
    b.tokens = synthetic_tokens(5);
    b.d_in = b.d_out = 8;
    b.dropout = 0.2;
    const Inputs ia = make_inputs(a), ib = make_inputs(b);
    const Weights wa = make_weights(a), wb = make_weights(b);
    auto backend = backend_of(kind);
    Runner first(a, ia, wa, *backend);
    const Trace a1 = first.run();
    std::vector<float> b_out;
    {
        Runner second(b, ib, wb, *backend);
        b_out = second.run().steps.back().tensors.back().data;
        const Trace a2 = first.run();  // the first runner's buffers are still its own
        CHECK(test::max_abs_diff(a1.steps.back().tensors.back().data, a2.steps.back().tensors.back().data) == 0.0);
    }
    // The second runner is gone; the first still runs, and a fresh one gives b again.
    const Trace a3 = first.run();
    CHECK(test::max_abs_diff(a1.steps.back().tensors.back().data, a3.steps.back().tensors.back().data) == 0.0);
    auto fresh = backend_of(kind);
    CHECK(test::max_abs_diff(run(b, ib, wb, *fresh).steps.back().tensors.back().data, b_out) < 1e-6);
}

TEST_CASE("a loop step's code line is written for any head, as inside the for loop", "[graph][narration]") {
    Config c;
    c.mode = Mode::Loop;
    c.heads = 3;
    const Trace tr = test::run_cpu(c);
    std::set<std::string> project_lines;
    for (const Step& s : tr.steps)
        if (s.op == Op::Project) project_lines.insert(s.code);
    CHECK(project_lines.size() == 1);  // the same line for heads 0, 1, 2
    CHECK(project_lines.begin()->find("heads[h]") != std::string::npos);
    // The sentences still name their head.
    CHECK(test::find_step(tr, Op::Scores, 2)->explain.find("Head 2") != std::string::npos);
}
