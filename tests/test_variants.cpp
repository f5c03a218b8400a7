// Beyond plain multi-head attention (issue 13): grouped-query and multi-query attention,
// cross-attention, padded batches and decoding with a KV cache. Each expectation is derived
// another way than the engine computes it: GQA against MHA with each key/value head's
// weights written out once per query head, cross-attention on the text itself against
// self-attention, a padded sentence against the same sentence alone, decoding against the
// full causal pass, GL against the CPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "headsplit/backends/gl_backend.hpp"
#include "helpers.hpp"

using namespace headsplit;
using Catch::Matchers::Contains;

namespace {

const std::vector<float>& result(const Trace& tr) { return tr.steps.back().tensors.back().values(); }

Config small(std::int64_t T, std::int64_t d, std::int64_t heads, Mode mode = Mode::Split) {
    Config c;
    c.tokens = synthetic_tokens(T);
    c.d_in = d;
    c.d_out = d;
    c.heads = heads;
    c.mode = mode;
    c.seed = static_cast<std::uint64_t>(T * 31 + d);
    return c;
}

// Rows [first, first + n) of batch element b of a [B, T, D] record.
std::vector<float> rows_of(const TensorRecord& t, std::int64_t b, std::int64_t first, std::int64_t n) {
    const std::int64_t T = t.shape[1], D = t.shape[2];
    const auto start = t.values().begin() + (b * T + first) * D;
    return {start, start + n * D};
}

std::string error_of(const Config& c) {
    try {
        check_config(c, kNoWords).require_budget();
    } catch (const ConfigError& e) {
        const std::string msg = e.what();
        CHECK(msg.find('\n') == std::string::npos);
        return msg;
    }
    return "";
}

std::vector<std::vector<std::string>> words(std::initializer_list<const char*> sentences) {
    std::vector<std::vector<std::string>> out;
    for (const char* s : sentences) out.push_back(split_words(s));
    return out;
}

}  // namespace

TEST_CASE("GQA equals MHA whose key/value weights are written out once per query head", "[variants][gqa]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const std::int64_t kv = GENERATE(1, 2, 3);
    Config gqa = small(7, 12, 6, mode);
    gqa.kv_heads = kv;
    gqa.qkv_bias = true;
    INFO(mode_name(mode) << " kv_heads=" << kv);
    const Weights w = make_weights(gqa);
    REQUIRE(static_cast<std::int64_t>(w.w_key.size()) == kv * 2 * 12);  // [kv_heads * head_dim, D_in]

    Config mha = gqa;
    mha.kv_heads = 0;
    Weights wide = w;
    const std::int64_t hd = 2, r = 6 / kv;
    wide.w_key.clear();
    wide.w_value.clear();
    wide.b_key.clear();
    wide.b_value.clear();
    for (std::int64_t h = 0; h < 6; ++h) {  // head h gets key/value head h / r's rows
        const std::int64_t g = h / r;
        wide.w_key.insert(wide.w_key.end(), w.w_key.begin() + g * hd * 12, w.w_key.begin() + (g + 1) * hd * 12);
        wide.w_value.insert(wide.w_value.end(), w.w_value.begin() + g * hd * 12, w.w_value.begin() + (g + 1) * hd * 12);
        wide.b_key.insert(wide.b_key.end(), w.b_key.begin() + g * hd, w.b_key.begin() + (g + 1) * hd);
        wide.b_value.insert(wide.b_value.end(), w.b_value.begin() + g * hd, w.b_value.begin() + (g + 1) * hd);
    }
    auto cpu = make_cpu_backend();
    const Inputs in = make_inputs(gqa);
    const Trace a = run(gqa, in, w, *cpu);
    const Trace b = run(mha, in, wide, *cpu);
    CHECK(test::max_abs_diff(result(a), result(b)) <= 1e-5);

    // The shape story: keys and values carry kv heads until repeat_kv makes them heads.
    if (mode != Mode::Loop) {
        const Step* t = test::find_step(a, Op::Transpose);
        REQUIRE(t);
        CHECK(t->find("keys")->shape == Shape{1, kv, 7, hd});
        const Step* rep = test::find_step(a, Op::RepeatKv);
        REQUIRE(rep);
        CHECK(rep->find("keys")->shape == Shape{1, 6, 7, hd});
        CHECK(rep->find("keys")->storage == Storage::Copy);
    } else {
        CHECK(test::find_step(a, Op::RepeatKv) == nullptr);  // each head projects its shared K/V itself
    }
}

TEST_CASE("GQA: loop, split and fused agree within 1e-5, and MQA projects keys 1 head wide", "[variants][gqa][modes]") {
    const std::int64_t kv = GENERATE(1, 2, 4);
    const bool causal = GENERATE(true, false);
    Config c = small(9, 16, 4);
    c.d_in = 10;
    c.kv_heads = kv;
    c.causal = causal;
    c.dropout = 0.2;
    INFO("kv_heads=" << kv << " causal=" << causal);
    std::vector<Trace> traces;
    for (Mode m : {Mode::Loop, Mode::Split, Mode::Fused}) {
        c.mode = m;
        traces.push_back(test::run_cpu(c));
    }
    CHECK(test::max_abs_diff(result(traces[0]), result(traces[1])) <= 1e-5);
    CHECK(test::max_abs_diff(result(traces[2]), result(traces[1])) <= 1e-5);
    const Step* project = test::find_step(traces[1], Op::Project);
    CHECK(project->find("keys")->shape == Shape{1, 9, kv * 4});
    CHECK(project->find("queries")->shape == Shape{1, 9, 16});
}

TEST_CASE("cross-attention on the text itself is self-attention", "[variants][cross]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split);
    const bool causal = GENERATE(true, false);
    Config self = small(5, 8, 2, mode);
    self.tokens = split_words("the cat sleeps on mats");
    self.causal = causal;
    self.kv_heads = 1;
    Config cross = self;
    cross.context = {self.tokens};  // same words, so the same embeddings; D_context = D_in
    INFO(mode_name(mode) << " causal=" << causal);
    const Trace a = test::run_cpu(self);
    const Trace b = test::run_cpu(cross);
    CHECK(test::max_abs_diff(result(a), result(b)) <= 1e-6);
    CHECK(b.steps.front().find("context") != nullptr);
}

TEST_CASE("cross-attention: scores are T x S, keys come from the context", "[variants][cross]") {
    Config c = small(3, 6, 2);
    c.causal = false;
    c.context = words({"le chat dort sur le tapis rouge"});
    c.d_context = 5;
    const Trace tr = test::run_cpu(c);
    CHECK(test::find_step(tr, Op::Scores)->tensors[0].shape == Shape{1, 2, 3, 7});
    CHECK(test::find_step(tr, Op::Project)->find("keys")->shape == Shape{1, 7, 6});
    CHECK(test::find_step(tr, Op::Mask) == nullptr);
    // The keys' link goes to the context, the queries' to x.
    const Step* p = test::find_step(tr, Op::Project);
    CHECK(p->find("keys")->from.front().tensor == "context");
    CHECK(p->find("queries")->from.front().tensor == "x");
    // Loop mode gives the same.
    c.mode = Mode::Loop;
    CHECK(test::max_abs_diff(result(test::run_cpu(c)), result(tr)) <= 1e-5);
}

TEST_CASE("a padded sentence's rows equal that sentence run alone", "[variants][batch]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const std::int64_t kv = GENERATE(0, 1);
    const bool causal = GENERATE(true, false);
    Config batch = small(1, 8, 4, mode);
    batch.kv_heads = kv;
    batch.causal = causal;
    batch.qkv_bias = true;
    batch.set_sentences(words({"the cat sleeps on the mat", "a dog barks", "birds"}));
    INFO(mode_name(mode) << " kv_heads=" << kv << " causal=" << causal);
    REQUIRE(batch.num_tokens() == 6);
    REQUIRE(batch.padded());
    const Trace tr = test::run_cpu(batch);
    const TensorRecord& out = tr.steps.back().tensors.back();
    REQUIRE(out.shape == Shape{3, 6, 8});
    const std::vector<std::int64_t> lengths{6, 3, 1};
    for (std::int64_t b = 0; b < 3; ++b) {
        Config alone = batch;
        alone.set_sentences({batch.sentences()[static_cast<std::size_t>(b)]});
        const Trace one = test::run_cpu(alone);
        INFO("sentence " << b);
        CHECK(test::max_abs_diff(rows_of(out, b, 0, lengths[b]), result(one)) <= 1e-5);
    }
    // After softmax, no weight falls on a padded key, and every row still sums to 1.
    const Step* soft = test::find_step(tr, Op::Softmax, mode == Mode::Loop ? 0 : -1);
    REQUIRE(soft);
    const TensorRecord& w = soft->tensors[0];
    const std::int64_t S = w.shape.back(), rows = static_cast<std::int64_t>(w.values().size()) / S;
    const std::int64_t rows_per_b = rows / 3;
    for (std::int64_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (std::int64_t j = 0; j < S; ++j) {
            const float v = w.values()[static_cast<std::size_t>(r * S + j)];
            sum += v;
            if (j >= lengths[r / rows_per_b]) CHECK(v == 0.0f);
        }
        CHECK(sum == Approx(1.0).epsilon(1e-5));
    }
    // The padding step is its own, after the causal mask, linking the mask it applied.
    const Step* pad = test::find_step(tr, Op::PadMask, mode == Mode::Loop ? 0 : -1);
    REQUIRE(pad);
    CHECK(pad->tensors[0].from.back().tensor == "key_padding_mask");
    CHECK(tr.steps.front().find("key_padding_mask")->shape == Shape{3, 6});
}

TEST_CASE("decoding with a KV cache gives the full causal pass within 1e-5", "[variants][decode]") {
    struct Variant {
        Mode mode;
        std::int64_t kv_heads, decode_from;
        bool qkv_bias, out_proj, scale_first, batch;
    };
    const Variant v = GENERATE(values<Variant>({
        {Mode::Split, 0, 1, false, true, false, false},
        {Mode::Split, 2, 3, true, true, false, false},
        {Mode::Fused, 1, 5, true, true, true, false},
        {Mode::Fused, 4, 2, false, false, false, false},
        {Mode::Split, 1, 2, true, true, false, true},
        {Mode::Fused, 2, 4, false, true, true, true},
    }));
    Config full = small(7, 16, 4, v.mode);
    full.kv_heads = v.kv_heads;
    full.qkv_bias = v.qkv_bias;
    full.out_proj = v.out_proj;
    full.scale_first = v.scale_first;
    if (v.batch) full.set_sentences(words({"a b c d e f g", "h i j k", "l m"}));
    Config decoded = full;
    decoded.decode_from = v.decode_from;
    INFO(mode_name(v.mode) << " kv_heads=" << v.kv_heads << " decode_from=" << v.decode_from << " batch=" << v.batch);
    const Trace a = test::run_cpu(full);
    const Trace b = test::run_cpu(decoded);
    CHECK(b.steps.back().op == Op::Assemble);
    CHECK(b.steps.back().tensors[0].shape == a.steps.back().tensors.back().shape);
    CHECK(test::max_abs_diff(result(a), result(b)) <= 1e-5);

    // The cache: one buffer, filled by the prefill (copy), then a row per round in place; the
    // rounds number 1 .. T - P and each scores one query against all positions so far.
    const std::int64_t T = full.num_tokens(), P = v.decode_from;
    std::set<int> cache_buffers;
    int rounds = 0;
    for (const Step& s : b.steps) {
        if (s.op == Op::CacheAppend) {
            const TensorRecord& k = *s.find("keys");
            cache_buffers.insert(k.buffer);
            cache_buffers.insert(s.find("values")->buffer);
            CHECK(k.storage == (s.round == 0 ? Storage::Copy : Storage::InPlace));
            CHECK(k.shape[2] == (s.round == 0 ? P : P + s.round));
            CHECK(k.shape[1] == full.kv_head_count());
        }
        if (s.op == Op::Scores && s.round > 0) {
            ++rounds;
            CHECK(s.tensors[0].shape == Shape{full.batch, full.heads, 1, P + s.round});
        }
        if (s.op == Op::Mask) CHECK(s.round == 0);  // only the prefill needs the causal mask
    }
    CHECK(rounds == T - P);
    CHECK(cache_buffers.size() == 2);  // keys' cache and values' cache
}

TEST_CASE("the variants on GL match the CPU at every step", "[variants][gl]") {
    static std::unique_ptr<Backend> gl = make_gl_backend();
    const int which = GENERATE(range(0, 8));
    Config c = small(9, 12, 6);
    switch (which) {
        case 0: c.kv_heads = 2; break;
        case 1: c.kv_heads = 1, c.mode = Mode::Fused, c.qkv_bias = true; break;
        case 2: c.kv_heads = 3, c.mode = Mode::Loop; break;
        case 3: c.context = words({"un deux trois quatre cinq"}), c.d_context = 7, c.causal = false; break;
        case 4: c.set_sentences(words({"a b c d e", "f g", "h i j"})), c.kv_heads = 2; break;
        case 5: c.set_sentences(words({"a b c d e", "f g"})), c.mode = Mode::Loop, c.scale_first = true; break;
        case 6: c.decode_from = 4, c.kv_heads = 2, c.mode = Mode::Fused; break;
        case 7:
            c.set_sentences(words({"a b c d e", "f g"}));
            c.context = words({"un deux trois", "quatre"});
            c.causal = false;
            c.kv_heads = 1;
            break;
    }
    INFO("variant " << which);
    const Trace cpu = test::run_cpu(c);
    c.backend = BackendKind::Gl;
    const Trace g = run(c, make_inputs(c), make_weights(c), *gl);
    REQUIRE(test::op_list(g) == test::op_list(cpu));
    for (std::size_t s = 0; s < cpu.steps.size(); ++s)
        for (std::size_t t = 0; t < cpu.steps[s].tensors.size(); ++t) {
            const TensorRecord& x = cpu.steps[s].tensors[t];
            const TensorRecord& y = g.steps[s].tensors[t];
            INFO("step " << s << " " << op_name(cpu.steps[s].op) << " " << x.name);
            CHECK(y.shape == x.shape);
            CHECK(y.strides == x.strides);
            CHECK(test::max_abs_diff(x.values(), y.values()) <= 1e-4);
        }
}

TEST_CASE("the variants' memory estimate is what a run allocates", "[variants][memory]") {
    const BackendKind kind = GENERATE(BackendKind::Cpu, BackendKind::Gl);
    std::vector<Config> configs;
    for (int which = 0; which < 6; ++which) {
        Config c = small(6, 8, 4, which % 2 ? Mode::Fused : Mode::Split);
        if (which == 0) c.kv_heads = 2, c.dropout = 0.1;
        if (which == 1) c.kv_heads = 1, c.decode_from = 2;
        if (which == 2) c.context = words({"p q r s"}), c.causal = false, c.d_context = 3, c.mode = Mode::Loop;
        if (which == 3) c.set_sentences(words({"a b c", "d"})), c.decode_from = 1;
        if (which == 4) c.set_sentences(words({"a b c", "d"})), c.context = words({"x y", "z"}), c.causal = false;
        if (which == 5) c.set_sentences(words({"a b c", "d e"})), c.mode = Mode::Loop, c.kv_heads = 2;
        configs.push_back(c);
    }
    for (const Config& c : configs) {
        const CheckedConfig ck = check_config(c, kNoWords);
        auto backend = kind == BackendKind::Gl ? make_gl_backend() : make_cpu_backend();
        const Inputs in = make_inputs(c);
        const Weights w = make_weights(c);
        Runner runner(ck, in, w, *backend);
        const Trace tr = runner.run();
        CHECK(static_cast<double>(backend->used_bytes()) == ck.memory.backend_bytes);
        CHECK(static_cast<double>(tr.value_bytes()) == ck.memory.trace_bytes);
        // A run without recording gives the same result.
        const Trace quiet = runner.run({false, false});
        CHECK(test::max_abs_diff(result(quiet), result(tr)) <= 1e-6);
    }
}

TEST_CASE("bad variant values are refused in one line that says why", "[variants][validation]") {
    Config c = small(3, 12, 4);
    c.kv_heads = 3;
    CHECK_THAT(error_of(c), Contains("kv_heads = 3 does not divide heads = 4") && Contains("1, 2, 4"));
    c.kv_heads = 8;
    CHECK_THAT(error_of(c), Contains("kv_heads = 8 is more than heads = 4"));
    c.kv_heads = -1;
    CHECK_THAT(error_of(c), Contains("kv_heads = -1"));
    c.kv_heads = 2;
    CHECK(error_of(c).empty());

    c.decode_from = 3;
    CHECK_THAT(error_of(c), Contains("outside 0 < P < T = 3") && Contains("use 1 to 2"));
    c.decode_from = -2;
    CHECK_THAT(error_of(c), Contains("P = -2"));
    c.decode_from = 1;
    c.causal = false;
    CHECK_THAT(error_of(c), Contains("only under a causal mask"));
    c.causal = true;
    c.mode = Mode::Loop;
    CHECK_THAT(error_of(c), Contains("--mode split or fused"));
    c.mode = Mode::Split;
    c.dropout = 0.1;
    CHECK_THAT(error_of(c), Contains("without dropout"));
    c.dropout = 0;
    CHECK(error_of(c).empty());
    c.decode_from = 0;

    c.context = {{}};
    c.causal = false;
    CHECK_THAT(error_of(c), Contains("the context has no tokens"));
    c.context = words({"un deux trois quatre"});
    c.causal = true;
    CHECK_THAT(error_of(c), Contains("S = 4") && Contains("T = 3") && Contains("--no-causal"));
    c.causal = false;
    c.mode = Mode::Fused;
    CHECK_THAT(error_of(c), Contains("use --mode split or loop"));
    c.mode = Mode::Split;
    CHECK(error_of(c).empty());
    c.context.clear();
    c.d_context = 5;
    CHECK_THAT(error_of(c), Contains("there is no context"));
    c.d_context = 0;

    c.set_sentences(words({"a b", "c", "d e f"}));
    c.context = words({"x", "y"});
    CHECK_THAT(error_of(c), Contains("2 contexts for 3 sentences"));
    c.context.clear();
    c.batch_tokens[1].clear();
    CHECK_THAT(error_of(c), Contains("sentence 2 of the batch has no tokens"));

    // A batch over the memory budget is refused with the estimate, before anything runs.
    Config big = small(1, 768, 12);
    std::vector<std::vector<std::string>> many;
    for (int b = 0; b < 16; ++b) many.push_back(synthetic_tokens(1024));
    big.set_sentences(many);
    CHECK_THAT(error_of(big), Contains("over the memory budget"));
}
