// The visualizer's state, driven as the controls drive it, without a window: changing heads
// changes the shapes on screen; bad values are explained and the last good trace stays.
#include <catch2/catch.hpp>

#include <chrono>
#include <limits>
#include <thread>

#include <cmath>
#include <filesystem>
#include <map>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gui/model/state.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "gui/model/why.hpp"
#include "headsplit/model/presets.hpp"

using namespace headsplit;
using namespace headsplit::gui;

namespace {

AppState make_state() {
    AppState st;
    st.config.backend = BackendKind::Cpu;
    st.computer = std::make_unique<TraceComputer>(false);
    return st;
}

// Applies what the computer has finished, waiting for the worker when it is busy.
void settle(AppState& st) {
    for (int i = 0; i < 2000; ++i) {
        if (auto r = st.computer->take()) {
            apply_result(st, std::move(*r), 0.0);
            if (!st.computer->busy()) return;
        }
        if (!st.computer->busy()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    FAIL("the computation did not finish");
}

Shape shape_at(const AppState& st, Op op) {
    for (const Step& s : st.trace->steps)
        if (s.op == op) return s.tensors[0].shape;
    return {};
}

}  // namespace

TEST_CASE("heads 2 -> 3 on D_out 6 changes the shapes shown, keeping the step", "[gui]") {
    AppState st = make_state();
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    st.step = 3;  // transpose
    CHECK(st.current()->tensors[0].shape == Shape{1, 2, 3, 3});
    st.config.heads = 3;
    recompute(st);
    settle(st);
    CHECK(st.step == 3);
    CHECK(st.current()->op == Op::Transpose);
    CHECK(st.current()->tensors[0].shape == Shape{1, 3, 3, 2});
    CHECK(shape_at(st, Op::View) == Shape{1, 3, 3, 2});
    CHECK(st.error.empty());
}

TEST_CASE("a head count that does not divide D_out cannot be chosen", "[gui]") {
    Config c;  // D_out 6, 2 heads
    CHECK(set_d_out(c, 8).empty());  // 2 divides 8
    CHECK(c.heads == 2);
    c.heads = 4;
    const std::string why = set_d_out(c, 6);  // 4 does not divide 6
    CHECK(c.heads == 3);
    CHECK(why == "4 heads do not divide D_out = 6 (6 / 4 is not whole); now 3 heads");
    set_d_out(c, 7);  // prime: only 1 and 7
    CHECK(c.heads == 1);
    validate(c);  // whatever was dragged, the config stays valid
}

TEST_CASE("a refused change is explained and the last good trace stays", "[gui]") {
    AppState st = make_state();
    recompute(st);
    settle(st);
    const auto good = st.trace;
    st.config.tokens = {};  // the sentence box emptied
    recompute(st);
    settle(st);
    CHECK(st.trace == good);
    CHECK(st.error.find("no tokens") != std::string::npos);
    st.config.tokens = {"a", "b"};
    recompute(st);
    settle(st);
    CHECK(st.error.empty());
    CHECK(st.trace != good);
}

TEST_CASE("values typed into the controls are refused at once, whatever their size", "[gui]") {
    // Ctrl+click on a slider lets any int in; none may allocate, block or crash.
    AppState st = make_state();
    recompute(st);
    settle(st);
    const auto good = st.trace;
    const std::int64_t big = std::numeric_limits<int>::max();
    for (std::int64_t v : {std::int64_t{0}, std::int64_t{-7}, big}) {
        INFO("D_in = " << v);
        st.config.d_in = v;
        recompute(st);
        CHECK_FALSE(st.computer->busy());  // refused before any worker starts
        auto r = st.computer->take();
        REQUIRE(r);
        apply_result(st, std::move(*r), 0.0);
        CHECK(st.trace == good);
        CHECK(st.error.find("D_in = " + std::to_string(v)) != std::string::npos);
        st.config.d_in = 6;
    }
    CHECK(set_d_out(st.config, 0).empty());  // 2 heads "divide" 0: left to validation
    recompute(st);
    settle(st);
    CHECK(st.error.find("D_out = 0") != std::string::npos);
    CHECK(st.trace == good);
}

TEST_CASE("a value refused while a large trace computes stays refused when the worker ends", "[gui]") {
    AppState st = make_state();
    recompute(st);
    settle(st);
    const auto good = st.trace;
    st.config = config_from_preset("gpt2-small");
    st.config.tokens = synthetic_tokens(128);
    st.config.backend = BackendKind::Cpu;
    recompute(st);
    REQUIRE(st.computer->busy());
    st.config.dropout = 2.0;  // typed while the worker runs
    recompute(st);
    auto r = st.computer->take();
    REQUIRE(r);
    apply_result(st, std::move(*r), 0.0);
    CHECK(st.error.find("dropout p = 2") != std::string::npos);
    settle(st);  // the worker's gpt2-small trace is out of date: not shown
    CHECK_FALSE(st.computer->busy());
    CHECK(st.trace == good);
    CHECK(st.error.find("dropout p = 2") != std::string::npos);
    st.config.dropout = 0;  // fixed: computed and shown
    recompute(st);
    settle(st);
    CHECK(st.error.empty());
    CHECK(st.trace->config.num_tokens() == 128);
}

TEST_CASE("divisors: ascending, none below 1, quick for any size", "[gui]") {
    CHECK(divisors(6) == std::vector<std::int64_t>{1, 2, 3, 6});
    CHECK(divisors(36) == std::vector<std::int64_t>{1, 2, 3, 4, 6, 9, 12, 18, 36});
    CHECK(divisors(1) == std::vector<std::int64_t>{1});
    CHECK(divisors(1000003) == std::vector<std::int64_t>{1, 1000003});  // prime
    CHECK(divisors(0).empty());
    CHECK(divisors(-12).empty());
    CHECK(divisors(12288).size() == 26);  // gpt3's D_out: 2^12 x 3
}

TEST_CASE("large traces compute off the UI thread; gpt3 shows shapes only", "[gui]") {
    AppState st = make_state();
    st.config = config_from_preset("gpt2-small");
    st.config.tokens = synthetic_tokens(128);
    st.config.backend = BackendKind::Cpu;
    recompute(st);
    CHECK(st.computer->busy());  // returned at once; the worker computes
    settle(st);
    REQUIRE(st.trace);
    CHECK(st.current()->tensors[0].shape == Shape{1, 128, 768});
    CHECK_FALSE(st.shapes_only);

    st.config = config_from_preset("gpt3");
    st.config.backend = BackendKind::Cpu;
    recompute(st);
    settle(st);
    CHECK(st.shapes_only);
    CHECK(st.notice.find("shapes only") != std::string::npos);
    CHECK(st.trace->steps[3].tensors[0].shape == Shape{1, 96, 4, 128});

    // Shapes are all a question needs: gpt3's are asked too.
    set_quiz(st, true);
    go_to_step(st, 3, 1.0);
    REQUIRE(quiz_waiting(st));
    CHECK(st.quiz.pending->answer == Shape{1, 96, 4, 128});
    quiz_answer(st, {1, 4, 96, 128}, 2.0);  // the view's shape: the transpose left out
    CHECK(st.quiz.verdict.find("Not quite: [1, 4, 96, 128] is the view's shape: the transpose was left out") == 0);
    CHECK(st.quiz.verdict.find("The step gives queries [1, 96 heads, 4 tokens, 128 features].") != std::string::npos);
}

TEST_CASE("the window's traces hold the inputs and weights they ran on", "[gui]") {
    // The computer moves its inputs and weights into the trace instead of copying them; the
    // weights panel, the links' explanations and the JSON read them from there.
    AppState st = make_state();
    st.config = config_from_preset("gpt2-small");
    st.config.tokens = synthetic_tokens(40);
    st.config.backend = BackendKind::Cpu;
    st.compare_masks = true;  // a second trace, the causal mask flipped, on the same values
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    REQUIRE(st.other_mask);
    const Weights w = make_weights(st.config);
    const Inputs in = make_inputs(st.config);
    for (const Trace* t : {st.trace.get(), st.other_mask.get()}) {
        CHECK(t->weights.w_query == w.w_query);
        CHECK(t->weights.w_out == w.w_out);
        CHECK(t->weights.b_value == w.b_value);
        CHECK(t->inputs.x == in.x);
    }
    CHECK(st.other_mask->config.causal != st.trace->config.causal);

    // A teaching size, computed in the frame, the same way.
    st.config = Config{};
    st.config.backend = BackendKind::Cpu;
    st.compare_masks = false;
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    CHECK(st.trace->weights.w_key == make_weights(st.config).w_key);
    CHECK(st.trace->inputs.x == make_inputs(st.config).x);
}

TEST_CASE("a run estimated over the time budget shows its shapes, with the estimate", "[gui]") {
    AppState st = make_state();
    st.config = config_from_preset("gpt2-small");
    st.config.tokens = synthetic_tokens(1024);  // about 6 GFLOP of products
    st.config.backend = BackendKind::Cpu;
    st.config.time_budget = 0.001;
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    CHECK(st.shapes_only);
    CHECK(st.notice.find("shapes only, not computed: this run would take about") == 0);
    CHECK(st.notice.find("measured on the cpu backend just now), over the time budget of 0 s") != std::string::npos);
    CHECK(st.trace->steps[1].tensors[0].shape == Shape{1, 1024, 768});
    CHECK(st.trace->steps[1].tensors[0].values().empty());

    st.config.time_budget = kDefaultTimeBudget;  // the same run within a minute: computed
    recompute(st);
    settle(st);
    CHECK_FALSE(st.shapes_only);
    CHECK(st.trace->steps[1].tensors[0].values().size() == 1024u * 768u);
}

TEST_CASE("quiz: the next step is asked before it is drawn, scored, and explained", "[gui][quiz]") {
    AppState st = make_state();
    set_quiz(st, true);
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    // The step on screen when the quiz starts is shown; the next one is hidden and asked.
    CHECK(st.step == 0);
    CHECK_FALSE(quiz_hides(st, 0));
    CHECK(quiz_hides(st, 1));
    CHECK_FALSE(quiz_waiting(st));
    go_to_step(st, 2, 1.0);  // view: [1, 3, 6] -> [1, 3, 2, 3] for "the cat sleeps"
    REQUIRE(quiz_waiting(st));
    CHECK(quiz_hides(st, 2));
    CHECK(quiz_hides(st, 3));
    const QuizQuestion q = *st.quiz.pending;
    CHECK(q.step == 2);
    CHECK(q.answer == Shape{1, 3, 2, 3});

    // A wrong choice: scored, the step drawn, the verdict names the slip and the answer.
    Shape wrong;
    std::string slip;
    for (const QuizOption& o : q.options)
        if (!o.mistake.empty()) wrong = o.shape, slip = o.mistake;
    quiz_answer(st, wrong, 2.0);
    CHECK_FALSE(quiz_waiting(st));
    CHECK_FALSE(quiz_hides(st, 2));
    CHECK(quiz_hides(st, 3));
    CHECK(st.quiz.asked == 1);
    CHECK(st.quiz.right == 0);
    CHECK(st.anim_start == 2.0);  // the step animates in now
    CHECK(st.quiz.verdict.find("Not quite") == 0);
    CHECK(st.quiz.verdict.find(slip) != std::string::npos);
    CHECK(st.quiz.verdict.find("[1, 3 tokens, 2 heads, 3 features]") != std::string::npos);
    // One line: the stage's heading explains the step, the verdict does not repeat it.
    CHECK(st.quiz.verdict.find(st.trace->steps[2].explain) == std::string::npos);
    CHECK(st.quiz.verdict.find('\n') == std::string::npos);

    // Back to a shown step: nothing asked. Forward again: the next one is.
    go_to_step(st, 1, 3.0);
    CHECK_FALSE(quiz_waiting(st));
    go_to_step(st, 3, 4.0);  // transpose: [1, 2, 3, 3]
    REQUIRE(quiz_waiting(st));
    quiz_answer(st, *parse_shape_answer("1x2x3x3"), 5.0);  // typed
    CHECK(st.last_advance == 5.0);  // playing shows the answered step a whole step's time
    CHECK(st.quiz.asked == 2);
    CHECK(st.quiz.right == 1);
    CHECK(st.quiz.answered_right);
    CHECK(st.quiz.verdict.find("Right") == 0);
    quiz_answer(st, {1, 2, 3, 3}, 6.0);  // nothing waits: not counted twice
    CHECK(st.quiz.asked == 2);

    // Two heads -> three while step 4 waits: asked again from the new trace's shapes.
    go_to_step(st, 4, 7.0);
    REQUIRE(quiz_waiting(st));
    CHECK(st.quiz.pending->answer == Shape{1, 2, 3, 3});
    st.config.heads = 3;
    recompute(st);
    settle(st);
    REQUIRE(quiz_waiting(st));
    CHECK(st.quiz.verdict.empty());  // the last verdict was about the old shapes
    CHECK(st.quiz.pending->step == 4);
    CHECK(st.quiz.pending->answer == Shape{1, 3, 3, 3});
    CHECK(quiz_hides(st, 4));
    CHECK_FALSE(quiz_hides(st, 3));

    // A key or a button answers with an option of the question it ends (a reference into it).
    const Shape right_one = st.quiz.pending->answer;
    const QuizOption& chosen = st.quiz.pending->options[static_cast<std::size_t>(st.quiz.pending->right)];
    quiz_answer(st, chosen.shape, 8.0);
    CHECK(st.quiz.answered_right);
    CHECK(right_one == Shape{1, 3, 3, 3});
    CHECK(st.quiz.verdict == "Right: attn_scores is [1, 3 heads, 3 tokens, 3 keys].");

    // The score stays until reset; off, nothing is hidden.
    quiz_reset_score(st);
    CHECK(st.quiz.asked == 0);
    set_quiz(st, false);
    CHECK_FALSE(quiz_waiting(st));
    CHECK_FALSE(quiz_hides(st, 10));
}

TEST_CASE("the variants' controls: KV heads follow heads, sentences come and go, decoding follows T", "[gui][variants]") {
    AppState st = make_state();
    // 12 heads sharing 4 key/value heads; heads 12 -> 6: 4 no longer divides, 3 does.
    st.config.d_in = st.config.d_out = 24;
    st.config.heads = 12;
    st.config.kv_heads = 4;
    st.config.heads = 6;
    const std::string why = fit_kv_heads(st.config);
    CHECK(why == "4 KV heads cannot serve 6 heads in equal groups; now 3 KV heads");
    CHECK(st.config.kv_heads == 3);
    // D_out 24 -> 20: 6 heads no longer divide, 5 do, and 3 KV heads become 1.
    const std::string d_why = set_d_out(st.config, 20);
    CHECK(st.config.heads == 5);
    CHECK(st.config.kv_heads == 1);
    CHECK(d_why.find("now 1 KV heads") != std::string::npos);
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    CHECK(shape_at(st, Op::RepeatKv) == Shape{1, 5, 3, 4});

    // A second and a third sentence: B = 3, padded to the longest; the keys' padding step shows.
    set_sentence(st.config, 1, "a dog");
    set_sentence(st.config, 2, "birds sing in the trees");
    recompute(st);
    settle(st);
    CHECK(st.trace->config.batch == 3);
    CHECK(st.trace->config.num_tokens() == 5);
    CHECK(shape_at(st, Op::PadMask) == Shape{3, 5, 5, 5});
    // An emptied sentence is refused with the reason; the last good trace stays.
    set_sentence(st.config, 1, "   ");
    recompute(st);
    settle(st);
    CHECK(st.error.find("sentence 2 of the batch has no tokens") != std::string::npos);
    CHECK(st.trace->config.batch == 3);
    remove_sentence(st.config, 1);
    remove_sentence(st.config, 1);
    recompute(st);
    settle(st);
    CHECK(st.error.empty());
    CHECK(st.trace->config.batch == 1);
    for (const Step& s : st.trace->steps) CHECK(s.op != Op::PadMask);
}

namespace {

// A one-layer GPT-2 folder small enough to write here: n_embd 4, 2 heads, a byte-level
// vocabulary of the 256 byte characters and one merge ("Ġ a"); layer_norm_epsilon 1e-5.
struct TinyCheckpoint {
    std::string dir;
    std::map<std::string, std::vector<float>> tensors;  // as written, row-major
};

TinyCheckpoint write_tiny_checkpoint() {
    char tmpl[] = "/tmp/headsplit_ckpt_XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    TinyCheckpoint out{dir, {}};
    std::ofstream(dir + "/config.json")
        << R"({"n_embd": 4, "n_head": 2, "n_layer": 1, "n_positions": 16, "vocab_size": 257, "layer_norm_epsilon": 1e-5})";
    // GPT-2's bytes_to_unicode, written out again: printable bytes stand for themselves.
    nlohmann::json vocab;
    int next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
        const int cp = printable ? b : next++;
        std::string ch = cp < 0x80 ? std::string(1, static_cast<char>(cp))
                                   : std::string{static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
        vocab[ch] = b;
    }
    vocab["\u0120a"] = 256;
    std::ofstream(dir + "/vocab.json") << vocab.dump();
    std::ofstream(dir + "/merges.txt") << "#version: 0.2\n\u0120 a\n";
    const std::vector<std::pair<std::string, std::int64_t>> tensors = {
        {"wte.weight", 257 * 4}, {"wpe.weight", 16 * 4}, {"h.0.ln_1.weight", 4}, {"h.0.ln_1.bias", 4},
        {"h.0.attn.c_attn.weight", 4 * 12}, {"h.0.attn.c_attn.bias", 12}, {"h.0.attn.c_proj.weight", 16},
        {"h.0.attn.c_proj.bias", 4}};
    const std::vector<Shape> shapes = {{257, 4}, {16, 4}, {4}, {4}, {4, 12}, {12}, {4, 4}, {4}};
    nlohmann::json header;
    std::string data;
    Rng rng(99);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        header[tensors[i].first] = {{"dtype", "F32"}, {"shape", shapes[i]},
                                    {"data_offsets", {data.size(), data.size() + 4 * tensors[i].second}}};
        for (std::int64_t k = 0; k < tensors[i].second; ++k) {
            const float v = rng.uniform(-1.0f, 1.0f);
            data.append(reinterpret_cast<const char*>(&v), 4);
            out.tensors[tensors[i].first].push_back(v);
        }
    }
    const std::string h = header.dump();
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[static_cast<std::size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xFF);
    std::ofstream(dir + "/model.safetensors", std::ios::binary) << file << h << data;
    return out;
}

// Layer 0's input for token ids `ids`, worked from GPT-2's definition in double precision:
// ln_1(wte[id] + wpe[position]) with the biased variance, as torch.nn.LayerNorm takes it.
std::vector<double> layer0_input(const TinyCheckpoint& k, const std::vector<int>& ids) {
    const auto& wte = k.tensors.at("wte.weight");
    const auto& wpe = k.tensors.at("wpe.weight");
    const auto& gain = k.tensors.at("h.0.ln_1.weight");
    const auto& bias = k.tensors.at("h.0.ln_1.bias");
    std::vector<double> x;
    for (std::size_t t = 0; t < ids.size(); ++t) {
        double e[4], mean = 0, var = 0;
        for (int d = 0; d < 4; ++d) {
            e[d] = double(wte[static_cast<std::size_t>(ids[t] * 4 + d)]) + double(wpe[t * 4 + static_cast<std::size_t>(d)]);
            mean += e[d] / 4;
        }
        for (double v : e) var += (v - mean) * (v - mean) / 4;
        for (int d = 0; d < 4; ++d)
            x.push_back((e[d] - mean) / std::sqrt(var + 1e-5) * gain[static_cast<std::size_t>(d)] + bias[static_cast<std::size_t>(d)]);
    }
    return x;
}

}  // namespace

TEST_CASE("a checkpoint run whose text is edited in the window is tokenized and run to its layer again",
          "[gui][checkpoint]") {
    const TinyCheckpoint ckpt = write_tiny_checkpoint();
    const std::string& dir = ckpt.dir;
    AppState st = make_state();
    st.config = gpt2_config(dir, "a b", 0);
    st.config.mode = Mode::Flash;  // the run's own settings stay
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    CHECK(st.trace->config.tokens == std::vector<std::string>{"a", " ", "b"});  // no merge makes " b"
    set_sentence(st.config, 0, "b a a");  // as the text box does: words, no x
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    CHECK(st.error.empty());
    // The pieces and ids by hand: "b", then " a" twice, the one merge's piece (id 256).
    CHECK(st.trace->config.tokens == std::vector<std::string>{"b", " a", " a"});
    CHECK(st.trace->config.token_ids == std::vector<int>{'b', 256, 256});
    // x: the embeddings of those ids through ln_1, worked here, not by the code under test.
    const std::vector<double> want = layer0_input(ckpt, {'b', 256, 256});
    REQUIRE(st.trace->inputs.x.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(std::abs(st.trace->inputs.x[i] - want[i]) < 1e-5);
    // The negative control: the ids before the edit give another x.
    const std::vector<double> before = layer0_input(ckpt, {'a', ' ', 'b'});
    CHECK(std::abs(st.trace->inputs.x[0] - before[0]) + std::abs(st.trace->inputs.x[5] - before[5]) > 1e-3);
    CHECK(st.trace->config.mode == Mode::Flash);
    std::filesystem::remove_all(dir);
}

TEST_CASE("the layer slider of a checkpoint run runs the same text at another layer", "[gui][checkpoint]") {
    AppState st = make_state();
    st.config = config_from_preset("tiny-trained");
    const Config first = st.config;
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    const std::int64_t other = first.layer == 0 ? 1 : 0;
    set_checkpoint_layer(st.config, other);  // as the slider does
    CHECK(st.config.embeddings.empty());
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    CHECK(st.error.empty());
    const Config want = config_from_preset("tiny-trained", "", other);  // the preset's text at that layer
    CHECK(st.trace->config.layer == other);
    CHECK(st.trace->config.preset == "tiny-trained");
    CHECK(st.trace->config.tokens == first.tokens);
    CHECK(st.trace->config.token_ids == first.token_ids);
    CHECK(st.trace->inputs.x == want.embeddings);
    CHECK(st.trace->inputs.x != first.embeddings);
    CHECK(checkpoint_text(st.trace->config) == find_preset("tiny-trained")->text);
}

TEST_CASE("presenter mode's live changes say what changed and what followed", "[gui][live]") {
    AppState st = make_state();
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    st.step = 4;  // the scores: [1, 2, 3, 3] for "the cat sleeps", D_out 6, 2 heads
    REQUIRE(st.current()->op == Op::Scores);
    // The issue's own example, worked by hand: 3 heads of 6 / 3 = 2 features.
    CHECK(live_change(st, LiveChange::HeadsUp));
    settle(st);
    CHECK(st.live.caption == "heads 2 -> 3: head_dim 3 -> 2, attn_scores [1, 3 heads, 3 tokens, 3 keys]");
    CHECK(st.trace->config.heads == 3);
    // D_out by one feature per head: 9 = 3 heads of 3.
    CHECK(live_change(st, LiveChange::DOutUp));
    settle(st);
    CHECK(st.live.caption == "D_out 6 -> 9: head_dim 2 -> 3, attn_scores [1, 3 heads, 3 tokens, 3 keys]");
    // Fewer heads: 1 (the divisor of 9 below 3); the KV heads follow nothing here.
    CHECK(live_change(st, LiveChange::HeadsDown));
    settle(st);
    CHECK(st.live.caption == "heads 3 -> 1: head_dim 3 -> 9, attn_scores [1, 1 head, 3 tokens, 3 keys]");
    // No divisor further down: nothing asked, the caption says why.
    CHECK_FALSE(live_change(st, LiveChange::HeadsDown));
    CHECK(st.live.caption == "heads stays 1: no fewer heads divide D_out = 9");
    // GQA follows the heads: 3 heads with 3 KV heads, then 1 head leaves 1 KV head.
    CHECK(live_change(st, LiveChange::HeadsUp));
    settle(st);
    CHECK(live_change(st, LiveChange::KvHeadsDown));
    settle(st);
    CHECK(st.live.caption == "KV heads 3 -> 1: attn_scores [1, 3 heads, 3 tokens, 3 keys]");
    // The mask off, then a mode the configuration refuses: the model on screen stays.
    CHECK(live_change(st, LiveChange::Causal));
    settle(st);
    CHECK(st.live.caption.rfind("causal mask on -> off", 0) == 0);
    st.config.context = {split_words("le chat dort")};
    recompute(st);
    settle(st);
    REQUIRE(st.trace->config.cross());
    set_mode(st.config, Mode::Split);
    CHECK(live_change(st, LiveChange::NextMode));  // split -> fused: fused takes no context
    settle(st);
    CHECK(st.live.caption.rfind("mode split -> fused: refused, ", 0) == 0);
    CHECK(st.config.mode == Mode::Split);  // put back
    // The sentence box.
    open_sentence_box(st);
    CHECK(std::string(st.live.text) == "the cat sleeps");
    live_sentence(st, "a b c d e");
    settle(st);
    CHECK_FALSE(st.live.typing);
    CHECK(st.live.caption.find("T 3 -> 5") != std::string::npos);
}

TEST_CASE("G turns the backward pass on and off live; decoding has none", "[gui][live][backward]") {
    AppState st = make_state();
    recompute(st);
    settle(st);
    REQUIRE(st.trace);
    const std::size_t forward = st.trace->steps.size();
    CHECK(live_change(st, LiveChange::Backward));
    settle(st);
    CHECK(st.live.caption.rfind("backward pass off -> on", 0) == 0);
    REQUIRE(st.trace->config.backward);
    CHECK(st.trace->steps.size() == forward + 11);  // out_proj_back .. project_back
    CHECK(is_backward(st.trace->steps.back().op));
    // M goes on to flash, whose backward recomputes each tile: lse and delta, then 3 tiles.
    set_mode(st.config, Mode::Fused);
    CHECK(live_change(st, LiveChange::NextMode));
    settle(st);
    REQUIRE(st.trace->config.mode == Mode::Flash);
    int tiles = 0;
    for (const Step& s : st.trace->steps) tiles += s.op == Op::TileBack ? 1 : 0;
    CHECK(tiles == st.trace->config.tiles_run());  // one tile_back a tile the forward ran
    CHECK(tiles >= 3);
    CHECK(live_change(st, LiveChange::Backward));  // off again
    settle(st);
    CHECK_FALSE(st.trace->config.backward);
    // Decoding is inference: G is refused, saying why.
    set_mode(st.config, Mode::Split);
    set_decoding(st.config, true);
    CHECK_FALSE(live_change(st, LiveChange::Backward));
    CHECK(st.live.caption.rfind("backward pass stays off: decoding", 0) == 0);
}
