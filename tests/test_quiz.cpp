// Predict the shape: every question's options come from the trace, hold the recorded shape
// exactly once among four distinct shapes, and typed answers are read in the usual forms.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "headsplit/model/presets.hpp"
#include "headsplit/teaching/narration.hpp"
#include "headsplit/teaching/quiz.hpp"
#include "helpers.hpp"

using namespace headsplit;

TEST_CASE("every step of every mode has four distinct options with the right one once", "[quiz]") {
    for (const char* preset : {"cat-sleeps", "gpt2-small"}) {
        for (Mode m : {Mode::Loop, Mode::Split, Mode::Fused}) {
            Config c = config_from_preset(preset);
            c.backend = BackendKind::Cpu;
            c.mode = m;
            if (c.d_out > 64) c.tokens = synthetic_tokens(16);
            const Trace tr = test::run_cpu(c);
            for (const Step& s : tr.steps) {
                INFO(preset << " " << mode_name(m) << " step " << s.index << " " << op_name(s.op));
                const QuizQuestion q = make_question(tr, s.index, 7);
                REQUIRE(q.options.size() == 4);
                std::set<Shape> distinct;
                int right = 0;
                for (const QuizOption& o : q.options) {
                    distinct.insert(o.shape);
                    right += o.shape == s.tensors.back().shape;
                    CHECK(o.mistake.empty() == (o.shape == s.tensors.back().shape));
                }
                CHECK(distinct.size() == 4);
                CHECK(right == 1);
                CHECK(q.options[static_cast<std::size_t>(q.right)].shape == s.tensors.back().shape);
            }
        }
    }
}

TEST_CASE("the answers of the default example, worked by hand", "[quiz]") {
    // x [1, 3, 6]; queries [1, 3, 6] viewed as [1, 3, 2, 3], transposed to [1, 2, 3, 3];
    // scores [1, 2, 3, 3]; context [1, 2, 3, 3] back to [1, 3, 2, 3], merged [1, 3, 6].
    const Trace tr = test::run_cpu(Config{});
    auto answer = [&](Op op) {
        for (const Step& s : tr.steps)
            if (s.op == op) return make_question(tr, s.index, 1).answer;
        return Shape{};
    };
    CHECK(answer(Op::View) == Shape{1, 3, 2, 3});
    CHECK(answer(Op::Transpose) == Shape{1, 2, 3, 3});
    CHECK(answer(Op::Scores) == Shape{1, 2, 3, 3});
    CHECK(answer(Op::TransposeBack) == Shape{1, 3, 2, 3});
    CHECK(answer(Op::Merge) == Shape{1, 3, 6});
    // The tensor asked about is the one the code line names: queries at the view and the
    // transpose ("queries = queries.transpose(1, 2)  # keys, values alike"), not values.
    auto tensor = [&](Op op) {
        for (const Step& s : tr.steps)
            if (s.op == op) return make_question(tr, s.index, 1).tensor;
        return std::string();
    };
    CHECK(tensor(Op::View) == "queries");
    CHECK(tensor(Op::Transpose) == "queries");
    CHECK(tensor(Op::Project) == "queries");  // the first of three made alike
    CHECK(tensor(Op::Merge) == "context_vec");
    for (const Step& s : tr.steps)
        if (s.op == Op::Transpose) {
            const QuizQuestion q = make_question(tr, s.index, 1);
            CHECK(q.input == Shape{1, 3, 2, 3});  // from the step's link: what view made
            bool forgot = false;  // the transpose forgotten is among the wrong options
            for (const QuizOption& o : q.options) forgot |= o.shape == Shape{1, 3, 2, 3} && !o.mistake.empty();
            CHECK(forgot);
        }
}

TEST_CASE("the answer is the trace's shape, not a table: a changed trace changes it", "[quiz]") {
    Trace tr = test::run_cpu(Config{});
    tr.steps[2].tensors.front().shape = {1, 3, 3, 2};  // a corrupted view of the queries, the tensor asked about
    const QuizQuestion q = make_question(tr, 2, 3);
    CHECK(q.answer == Shape{1, 3, 3, 2});
    CHECK(q.options[static_cast<std::size_t>(q.right)].shape == Shape{1, 3, 3, 2});
}

TEST_CASE("the options' order follows the seed", "[quiz]") {
    const Trace tr = test::run_cpu(Config{});
    bool differs = false;
    for (const Step& s : tr.steps) {
        const QuizQuestion a = make_question(tr, s.index, 11), b = make_question(tr, s.index, 11);
        for (std::size_t i = 0; i < 4; ++i) CHECK(a.options[i].shape == b.options[i].shape);
        differs |= make_question(tr, s.index, 12).right != a.right;
    }
    CHECK(differs);  // the right answer is not always in the same place
}

TEST_CASE("typed answers in the usual forms", "[quiz]") {
    const Shape want{1, 3, 2, 3};
    for (const char* text : {"[1, 3, 2, 3]", "1,3,2,3", "(1, 3, 2, 3)", "1x3x2x3", " 1 X 3 x 2 x 3 ", "[1,3,2,3]", "1 3 2 3"}) {
        INFO(text);
        const auto got = parse_shape_answer(text);
        REQUIRE(got);
        CHECK(*got == want);
    }
    CHECK(parse_shape_answer("(3,)") == Shape{3});
    for (const char* bad : {"", "[]", "1,,3", "a,b", "[1, 3", "1x3,2", "-1,3", "1.5,2", "99999999999999,1", "1, 3 2"}) {
        INFO(bad);
        CHECK_FALSE(parse_shape_answer(bad));
    }
}

TEST_CASE("the variants' steps are asked too, with their own slips", "[quiz][variants]") {
    std::vector<Config> configs;
    Config gqa;
    gqa.d_in = gqa.d_out = 8;
    gqa.heads = 4;
    gqa.kv_heads = 2;
    configs.push_back(gqa);
    Config cross = gqa;
    cross.context = {split_words("le chat dort sur le tapis")};
    cross.causal = false;
    configs.push_back(cross);
    Config batch = gqa;
    batch.set_sentences({split_words("the cat sleeps"), split_words("a dog")});
    configs.push_back(batch);
    Config decode = gqa;
    decode.tokens = split_words("the cat sleeps here");
    decode.decode_from = 2;
    configs.push_back(decode);
    int asked = 0;
    std::set<std::string> slips;
    for (const Config& c : configs) {
        const Trace tr = test::run_cpu(c);
        for (const Step& s : tr.steps) {
            INFO("step " << s.index << " " << op_name(s.op));
            const QuizQuestion q = make_question(tr, s.index, 3);
            REQUIRE(q.options.size() == 4);
            std::set<Shape> distinct;
            for (const QuizOption& o : q.options) {
                distinct.insert(o.shape);
                CHECK(o.mistake.empty() == (o.shape == s.lead().shape));
                slips.insert(o.mistake);
            }
            CHECK(distinct.size() == 4);
            CHECK(q.answer == s.lead().shape);
            ++asked;
        }
    }
    CHECK(asked > 60);
    // The input step's answer is x, not the key padding mask recorded after it.
    CHECK(make_question(test::run_cpu(batch), 0, 1).answer == Shape{2, 3, 8});
    // repeat_kv offers the key/value heads left unrepeated; a round's append offers the new
    // row alone; cross-attention's scores offer the square grid.
    CHECK(slips.count("the shape before repeat_kv: the key/value heads were left at 2, where repeat_interleave makes one per "
                      "query head") == 1);
    CHECK(slips.count("the new token alone: the cache so far is kept as well") == 1);
    CHECK(slips.count("a square T x T grid: the keys are the context's 6 tokens") == 1);
}

namespace {

// The twelve configurations the quiz is checked over: heads 1, 2, 3, 4, 6 (head_dim 1) and 6
// (head_dim 2), grouped-query and multi-query attention, cross-attention, a padded batch, the
// loop and fused modes, and the backward pass.
std::vector<std::pair<std::string, Config>> quiz_configs() {
    std::vector<std::pair<std::string, Config>> out;
    const auto with = [&](const std::string& name, std::int64_t d, std::int64_t heads) {
        Config c;
        c.d_in = c.d_out = d;
        c.heads = heads;
        out.emplace_back(name, c);
        return &out.back().second;
    };
    with("heads 1", 6, 1);
    with("heads 2", 6, 2);
    with("heads 3", 6, 3);
    with("heads 4", 8, 4)->tokens = split_words("the quick brown fox jumps over");
    with("heads 6, head_dim 1", 6, 6);
    with("heads 6, head_dim 2", 12, 6);
    with("grouped-query", 8, 4)->kv_heads = 2;
    with("multi-query", 8, 4)->kv_heads = 1;
    Config* cross = with("cross-attention", 8, 4);
    cross->context = {split_words("le chat dort sur le tapis")};
    cross->causal = false;
    with("a batch", 6, 2)->set_sentences({split_words("the cat sleeps"), split_words("a dog")});
    with("loop mode", 6, 3)->mode = Mode::Loop;
    Config* fused = with("fused mode, backward", 8, 4);
    fused->mode = Mode::Fused;
    fused->backward = true;
    return out;
}

}  // namespace

TEST_CASE("twelve configurations: distractors are the step's slips, never the answer or one another", "[quiz]") {
    int asked = 0, fillers = 0;
    for (const auto& [name, c] : quiz_configs()) {
        const Trace tr = test::run_cpu(c);
        for (const Step& s : tr.steps) {
            INFO(name << ", step " << s.index << " " << op_name(s.op));
            const QuizQuestion q = make_question(tr, s.index, 5);
            const TensorRecord& out = s.lead();
            REQUIRE(q.options.size() == 4);
            CHECK(q.answer == out.shape);
            std::set<Shape> distinct;
            for (const QuizOption& o : q.options) {
                INFO(shape_str(o.shape) << ": " << o.mistake);
                distinct.insert(o.shape);
                CHECK(o.mistake.empty() == (o.shape == out.shape));
                // A batch of another size is no slip of any step.
                if (!out.axes.empty() && out.axes[0] == Axis::Batch) CHECK((!o.shape.empty() && o.shape[0] == out.shape[0]));
                const std::string verdict = quiz_verdict(q, o.shape);
                if (o.mistake.empty()) {
                    CHECK(verdict == "Right: " + q.tensor + " is " + named_shape(out) + ".");
                } else {
                    // Whole sentences: the option, the mistake it stands for, then the answer.
                    CHECK(verdict == "Not quite: " + shape_str(o.shape) + " is " + o.mistake + ". The step gives " + q.tensor +
                                         " " + named_shape(out) + ".");
                    fillers += o.mistake.find("counted") != std::string::npos;
                }
            }
            CHECK(distinct.size() == 4);
            // The transpose's first slip: the view's shape, the transpose left out.
            if (s.op == Op::Transpose && q.input != q.answer) {
                bool named = false;
                for (const QuizOption& o : q.options)
                    named |= o.shape == q.input && o.mistake.find("the transpose was left out") != std::string::npos;
                CHECK(named);
            }
            ++asked;
        }
    }
    CHECK(asked > 150);
    // The sizes counted over fill in only where a small example leaves too few slips apart:
    // these twelve need none.
    CHECK(fillers == 0);
    // A typed shape no option stands for is still answered whole.
    const Trace tr = test::run_cpu(Config{});
    CHECK(quiz_verdict(make_question(tr, 3, 1), {1, 9}) ==
          "Not quite: [1, 9] is not what this step gives. The step gives queries [1, 2 heads, 3 tokens, 3 features].");
}
