// The default example runs exactly the twelve steps tabled below (input to out_proj, each with
// its tensors, shape, storage and matmul count), and views move no data.
#include <catch2/catch.hpp>

#include "headsplit/teaching/narration.hpp"
#include "headsplit/model/presets.hpp"
#include "helpers.hpp"

using namespace headsplit;
using headsplit::test::run_cpu;

namespace {

struct Expected {
    Op op;
    std::vector<std::string> names;
    Shape shape;
    Storage storage;
    std::int64_t matmuls;
};

}  // namespace

TEST_CASE("default example runs the 12 tabled steps, input to out_proj", "[steps]") {
    const Trace tr = run_cpu(Config{});
    const std::vector<std::string> qkv{"queries", "keys", "values"};
    const std::vector<Expected> table = {
        {Op::Input, {"x"}, {1, 3, 6}, Storage::New, 0},
        {Op::Project, qkv, {1, 3, 6}, Storage::New, 3},
        {Op::View, qkv, {1, 3, 2, 3}, Storage::View, 0},
        {Op::Transpose, qkv, {1, 2, 3, 3}, Storage::View, 0},
        {Op::Scores, {"attn_scores"}, {1, 2, 3, 3}, Storage::New, 1},
        {Op::Mask, {"attn_scores"}, {1, 2, 3, 3}, Storage::InPlace, 0},
        {Op::Scale, {"attn_scores"}, {1, 2, 3, 3}, Storage::InPlace, 0},
        {Op::Softmax, {"attn_weights"}, {1, 2, 3, 3}, Storage::New, 0},
        {Op::Context, {"context_vec"}, {1, 2, 3, 3}, Storage::New, 1},
        {Op::TransposeBack, {"context_vec"}, {1, 3, 2, 3}, Storage::View, 0},
        {Op::Merge, {"context_vec"}, {1, 3, 6}, Storage::Copy, 0},
        {Op::OutProj, {"output"}, {1, 3, 6}, Storage::New, 1},
    };
    REQUIRE(tr.steps.size() == table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        const Step& s = tr.steps[i];
        INFO("step " << i << " " << op_name(s.op));
        CHECK(s.index == static_cast<int>(i));
        CHECK(s.op == table[i].op);
        CHECK(s.head == -1);
        CHECK(s.matmuls == table[i].matmuls);
        CHECK_FALSE(s.code.empty());
        CHECK_FALSE(s.explain.empty());
        REQUIRE(s.tensors.size() == table[i].names.size());
        for (std::size_t t = 0; t < s.tensors.size(); ++t) {
            CHECK(s.tensors[t].name == table[i].names[t]);
            CHECK(s.tensors[t].shape == table[i].shape);
            CHECK(s.tensors[t].storage == table[i].storage);
            CHECK(static_cast<std::int64_t>(s.tensors[t].values().size()) == numel(table[i].shape));
        }
    }
    CHECK(tr.total_matmuls() == 6);
}

TEST_CASE("views and transposes share their input's buffer and values", "[steps]") {
    const Trace tr = run_cpu(Config{});
    const Step& project = tr.steps[1];
    const Step& view_step = tr.steps[2];
    const Step& transpose_step = tr.steps[3];
    for (std::size_t t = 0; t < 3; ++t) {
        const auto& src = project.tensors[t];
        const auto& v = view_step.tensors[t];
        const auto& tp = transpose_step.tensors[t];
        INFO(src.name);
        CHECK(v.buffer == src.buffer);
        CHECK(tp.buffer == src.buffer);
        // view keeps the row-major order: identical values in identical order.
        CHECK(v.values() == src.values());
        CHECK(v.strides == Shape{18, 6, 3, 1});
        // transpose swaps the strides of dims 1 and 2, and nothing else.
        CHECK(tp.strides == Shape{18, 3, 6, 1});
        // Element [0, h, t, d] of the transposed tensor is element [0, t, h*3 + d] of the projection.
        for (int h = 0; h < 2; ++h)
            for (int tok = 0; tok < 3; ++tok)
                for (int d = 0; d < 3; ++d)
                    CHECK(tp.values()[h * 9 + tok * 3 + d] == src.values()[tok * 6 + h * 3 + d]);
    }
    // The mask and scale work in place on the scores' buffer.
    CHECK(tr.steps[5].tensors[0].buffer == tr.steps[4].tensors[0].buffer);
    CHECK(tr.steps[6].tensors[0].buffer == tr.steps[4].tensors[0].buffer);
    // transpose_back is a view of the context; merge copies into a new, contiguous buffer.
    const auto& ctx = tr.steps[8].tensors[0];
    const auto& back = tr.steps[9].tensors[0];
    const auto& merged = tr.steps[10].tensors[0];
    CHECK(back.buffer == ctx.buffer);
    CHECK(back.strides == Shape{18, 3, 9, 1});
    CHECK(merged.buffer != ctx.buffer);
    CHECK(merged.strides == Shape{18, 6, 1});
    CHECK(merged.values() == back.values());  // the copy keeps the logical order of the view
    CHECK(merged.values() != ctx.values());   // ... which is not the memory order of the heads
}

TEST_CASE("fused mode: one 3*D_out projection then chunk views", "[steps]") {
    Config c;
    c.mode = Mode::Fused;
    const Trace tr = run_cpu(c);
    REQUIRE(tr.steps.size() == 13);
    CHECK(tr.steps[1].op == Op::Project);
    CHECK(tr.steps[1].matmuls == 1);
    REQUIRE(tr.steps[1].tensors.size() == 1);
    CHECK(tr.steps[1].tensors[0].name == "qkv");
    CHECK(tr.steps[1].tensors[0].shape == Shape{1, 3, 18});
    const Step& split = tr.steps[2];
    CHECK(split.op == Op::Split);
    for (std::size_t t = 0; t < 3; ++t) {
        CHECK(split.tensors[t].storage == Storage::View);
        CHECK(split.tensors[t].buffer == tr.steps[1].tensors[0].buffer);
        CHECK(split.tensors[t].offset == static_cast<std::int64_t>(6 * t));
        CHECK(split.tensors[t].strides == Shape{54, 18, 1});
    }
    CHECK(tr.total_matmuls() == 4);
}

TEST_CASE("loop mode: per-head steps then concat", "[steps]") {
    Config c;
    c.mode = Mode::Loop;
    const Trace tr = run_cpu(c);
    const std::vector<std::string> expected = {
        "input",       "project@0", "scores@0", "mask@0",  "scale@0",   "softmax@0", "context@0",
        "project@1",   "scores@1",  "mask@1",   "scale@1", "softmax@1", "context@1", "concat",
        "out_proj"};
    CHECK(test::op_list(tr) == expected);
    CHECK(tr.steps[1].tensors[0].shape == Shape{1, 3, 3});
    CHECK(tr.steps[2].tensors[0].shape == Shape{1, 3, 3});
    CHECK(tr.steps[13].tensors[0].shape == Shape{1, 3, 6});
    CHECK(tr.steps[13].tensors[0].storage == Storage::Copy);
    CHECK(tr.total_matmuls() == 2 * 5 + 1);  // 3 projections + scores + context per head, out_proj
}

TEST_CASE("switches add or drop or reorder steps", "[steps]") {
    Config c;
    SECTION("no causal mask: no mask step") {
        c.causal = false;
        CHECK(test::op_list(run_cpu(c)) ==
              std::vector<std::string>{"input", "project", "view", "transpose", "scores", "scale", "softmax",
                                       "context", "transpose_back", "merge", "out_proj"});
    }
    SECTION("scale first: scale before mask") {
        c.scale_first = true;
        const auto ops = test::op_list(run_cpu(c));
        CHECK(ops[5] == "scale");
        CHECK(ops[6] == "mask");
    }
    SECTION("dropout adds a step after softmax with the mask it used") {
        c.dropout = 0.5;
        const Trace tr = run_cpu(c);
        REQUIRE(tr.steps.size() == 13);
        const Step& d = tr.steps[8];
        CHECK(d.op == Op::Dropout);
        REQUIRE(d.find("dropout_mask"));
        REQUIRE(d.find("attn_weights"));
        // The mask and the weights share a shape, but the line is about the weights.
        CHECK(d.lead().name == "attn_weights");
        const auto& before = tr.steps[7].tensors[0].values();
        const auto& mask = d.find("dropout_mask")->values();
        const auto& after = d.find("attn_weights")->values();
        int dropped = 0;
        for (std::size_t i = 0; i < after.size(); ++i) {
            REQUIRE((mask[i] == 0.0f || mask[i] == 1.0f));
            dropped += mask[i] == 0.0f;
            CHECK(after[i] == Approx(before[i] * mask[i] * 2.0f).margin(1e-6));
        }
        CHECK(dropped > 0);
        CHECK(dropped < static_cast<int>(after.size()));
    }
    SECTION("no output projection: the trace ends at merge") {
        c.out_proj = false;
        const Trace tr = run_cpu(c);
        CHECK(tr.steps.back().op == Op::Merge);
        CHECK(tr.weights.w_out.empty());
    }
}

TEST_CASE("plan: the same steps and shapes as a run, with no values", "[steps][plan]") {
    const auto mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    Config c;
    c.mode = mode;
    c.dropout = 0.1;
    const Trace ran = test::run_cpu(c);
    const Trace planned = plan(c);
    REQUIRE(test::op_list(planned) == test::op_list(ran));
    for (std::size_t s = 0; s < ran.steps.size(); ++s) {
        REQUIRE(planned.steps[s].tensors.size() == ran.steps[s].tensors.size());
        CHECK(planned.steps[s].matmuls == ran.steps[s].matmuls);
        CHECK(planned.steps[s].flops == ran.steps[s].flops);
        for (std::size_t t = 0; t < ran.steps[s].tensors.size(); ++t) {
            CHECK(planned.steps[s].tensors[t].shape == ran.steps[s].tensors[t].shape);
            CHECK(planned.steps[s].tensors[t].strides == ran.steps[s].tensors[t].strides);
            CHECK(planned.steps[s].tensors[t].storage == ran.steps[s].tensors[t].storage);
            CHECK(planned.steps[s].tensors[t].values().empty());
        }
    }
}

TEST_CASE("plan: gpt3 is walked without its 2.25 GiB of weights", "[plan]") {
    const Trace gpt3 = plan(config_from_preset("gpt3"));
    REQUIRE(gpt3.steps.size() == 12);
    CHECK(gpt3.steps[3].tensors[0].shape == Shape{1, 96, 4, 128});
    CHECK(gpt3.total_matmuls() == 6);
    CHECK(gpt3.value_bytes() == 0);
}

TEST_CASE("shapes are told with their axes' names, so that equal sizes are told apart", "[steps]") {
    // The default example: T = head_dim = 3, so [1, 2, 3, 3] alone does not say which 3 is which.
    const Trace tr = test::run_cpu(Config{});
    auto named = [&](Op op) {
        for (const Step& s : tr.steps)
            if (s.op == op) return named_shape(s.lead());
        return std::string();
    };
    CHECK(named(Op::Project) == "[1, 3 tokens, 6 features]");  // queries: a row per token
    CHECK(named(Op::View) == "[1, 3 tokens, 2 heads, 3 features]");
    CHECK(named(Op::Transpose) == "[1, 2 heads, 3 tokens, 3 features]");
    CHECK(named(Op::Scores) == "[1, 2 heads, 3 tokens, 3 keys]");
    CHECK(named(Op::TransposeBack) == "[1, 3 tokens, 2 heads, 3 features]");
    CHECK(named(Op::Merge) == "[1, 3 tokens, 6 features]");
    Config one;
    one.heads = 1;
    const Trace single = test::run_cpu(one);
    CHECK(named_shape(single.steps[3].lead()) == "[1, 1 head, 3 tokens, 6 features]");
}

TEST_CASE("two axes of one size are pointed out once, on the first step that shows them", "[steps]") {
    // The default example: T = head_dim = 3. View [1, 3 tokens, 2 heads, 3 features] is the
    // first to show two 3s; the transpose shows the same pair; the scores add tokens and keys.
    const Trace tr = test::run_cpu(Config{});
    std::vector<std::string> said;
    for (const Step& s : tr.steps) said.push_back(size_collision(tr, s.index));
    REQUIRE(tr.steps[2].op == Op::View);
    CHECK(said[0].empty());
    CHECK(said[1].empty());
    CHECK(said[2] == "Both 3 here: tokens and features");
    CHECK(said[3].empty());
    REQUIRE(tr.steps[4].op == Op::Scores);
    CHECK(said[4] == "Both 3 here: tokens and keys");
    int lines = 0;
    for (const std::string& line : said) lines += !line.empty();
    CHECK(lines == 2);
    // Three heads of head_dim 2: three tokens and three heads.
    Config three;
    three.heads = 3;
    const Trace t3 = test::run_cpu(three);
    CHECK(size_collision(t3, 2) == "Both 3 here: tokens and heads");
    CHECK(size_collision(t3, 99).empty());
}
