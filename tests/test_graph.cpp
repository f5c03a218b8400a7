// The trace as a graph (for the variants read from the JSON alone, as any reader would), and the engine's promises that the refactor of issue 10 made:
// links point backwards to what exists, a Runner whose first run records nothing still
// computes everything (dropout included), the memory estimate is what a run allocates, and
// two runners share a backend.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "headsplit/backends/gl_backend.hpp"
#include "headsplit/io/trace_json.hpp"
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
    REQUIRE(quiet.steps.back().tensors.back().values().size() == recorded.steps.back().tensors.back().values().size());
    CHECK(test::max_abs_diff(quiet.steps.back().tensors.back().values(), recorded.steps.back().tensors.back().values()) < 1e-5);
    // The recorded mask really drops something, so the comparison covers dropout.
    const Step* d = test::find_step(recorded, Op::Dropout, mode == Mode::Loop ? 0 : -1);
    REQUIRE(d);
    const std::vector<float>& keep = d->find("dropout_mask")->values();
    CHECK(std::count(keep.begin(), keep.end(), 0.0f) > 0);
}

TEST_CASE("the memory estimate is what a run allocates, on both backends", "[graph][memory]") {
    const BackendKind kind = GENERATE(BackendKind::Cpu, BackendKind::Gl);
    int checked = 0;
    for (const Config& c : configurations()) {
        INFO(backend_name(kind) << " " << mode_name(c.mode) << " T=" << c.num_tokens() << " dropout=" << c.dropout);
        const CheckedConfig ck = check_config(c, narration_bytes);
        const Inputs in = make_inputs(c);
        const Weights w = make_weights(c);
        auto backend = backend_of(kind);
        const std::int64_t before = backend->used_bytes();
        Runner runner(ck, in, w, *backend);
        Trace tr = runner.run();
        narrate(tr);  // the words every front end adds after the run
        CHECK(static_cast<double>(backend->used_bytes() - before) == ck.memory.backend_bytes);
        CHECK(static_cast<double>(tr.value_bytes()) == ck.memory.trace_bytes);
        // The records the walk made against the narrated run's.
        CHECK(ck.memory.record_bytes == Approx(static_cast<double>(tr.record_bytes())).epsilon(0.1));
        // The words, counted before the run, are those narrate() wrote.
        double words = 0;
        for (const Step& s : tr.steps) words += static_cast<double>(heap_bytes(s.code) + heap_bytes(s.explain));
        CHECK(words > 0);
        CHECK(ck.memory.record_bytes - check_config(c, kNoWords).memory.record_bytes == words);
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
        b_out = second.run().steps.back().tensors.back().values();
        const Trace a2 = first.run();  // the first runner's buffers are still its own
        CHECK(test::max_abs_diff(a1.steps.back().tensors.back().values(), a2.steps.back().tensors.back().values()) == 0.0);
    }
    // The second runner is gone; the first still runs, and a fresh one gives b again.
    const Trace a3 = first.run();
    CHECK(test::max_abs_diff(a1.steps.back().tensors.back().values(), a3.steps.back().tensors.back().values()) == 0.0);
    auto fresh = backend_of(kind);
    CHECK(test::max_abs_diff(run(b, ib, wb, *fresh).steps.back().tensors.back().values(), b_out) < 1e-6);
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

namespace {

using nlohmann::json;

// The variants, each in the modes it takes: flash (a partial last block, GQA read in place,
// padding, a context), decoding (GQA, padding), grouped and multi-query heads, padded batches,
// cross-attention.
std::vector<Config> variant_configurations() {
    std::vector<Config> out;
    auto base = [](Mode mode) {
        Config c;
        c.mode = mode;
        c.tokens = synthetic_tokens(5);
        c.d_in = 8;
        c.d_out = 8;
        c.heads = 4;
        c.seed = 11;
        return c;
    };
    for (Mode mode : {Mode::Loop, Mode::Split, Mode::Fused, Mode::Flash}) {
        Config gqa = base(mode);
        gqa.kv_heads = 2;
        out.push_back(gqa);
        Config mqa = base(mode);
        mqa.kv_heads = 1;
        mqa.qkv_bias = true;
        out.push_back(mqa);
        Config padded = base(mode);
        padded.set_sentences({split_words("the cat sleeps on the mat"), split_words("a dog")});
        out.push_back(padded);
        if (mode != Mode::Fused) {  // fused mode refuses a context (one weight for x only)
            Config cross = base(mode);
            cross.context = {split_words("le chat dort bien ici")};
            cross.d_context = 6;
            cross.causal = false;
            out.push_back(cross);
            Config both = cross;
            both.set_sentences({split_words("the cat sleeps"), split_words("a dog")});
            both.context = {split_words("le chat dort"), split_words("un chien")};
            both.kv_heads = 2;
            out.push_back(both);
        }
        if (mode == Mode::Flash) {
            for (std::int64_t block : {1, 2, 3}) {
                Config flash = base(mode);
                flash.block = block;
                flash.kv_heads = block == 2 ? 2 : 0;
                flash.set_sentences({split_words("one two three four five"), split_words("six seven")});
                out.push_back(flash);
            }
        } else if (mode != Mode::Loop) {  // decoding runs batched modes
            Config decode = base(mode);
            decode.tokens = synthetic_tokens(6);
            decode.decode_from = 3;
            decode.kv_heads = 2;
            out.push_back(decode);
            Config padded_decode = base(mode);
            padded_decode.set_sentences({split_words("a b c d"), split_words("e f")});
            padded_decode.decode_from = 1;
            out.push_back(padded_decode);
        }
    }
    return out;
}

std::int64_t numel_of(const json& shape) {
    std::int64_t n = 1;
    for (const auto& d : shape) n *= d.get<std::int64_t>();
    return n;
}

// The size of each named axis of a JSON tensor.
std::map<std::string, std::int64_t> axis_sizes(const json& t) {
    std::map<std::string, std::int64_t> out;
    for (std::size_t i = 0; i < t["axes"].size(); ++i) out[t["axes"][i].get<std::string>()] = t["shape"][i].get<std::int64_t>();
    return out;
}

}  // namespace

TEST_CASE("the variants' traces are graphs: links, buffers and axes read from the JSON alone", "[graph][variants]") {
    for (const Config& c : variant_configurations()) {
        const Trace tr = test::run_cpu(c);
        const json doc = json::parse(trace_to_json(tr));
        const json& steps = doc["steps"];
        INFO(doc["config"].dump());
        // Where each tensor is: (step, name) -> the JSON tensor.
        std::map<std::pair<int, std::string>, const json*> at;
        std::set<std::pair<int, std::string>> used;  // read by a later tensor or the output
        for (const json& s : steps) {
            const int i = s["index"].get<int>();
            std::set<std::string> earlier;  // this step's tensors recorded before the current one
            for (const json& t : s["tensors"]) {
                const std::string name = t["name"].get<std::string>();
                INFO("step " << i << " " << s["op"].get<std::string>() << " " << name);
                const json& from = t["from"];
                const bool source = (i == 0) || name == "dropout_mask";
                CHECK(from.empty() == source);
                REQUIRE(t["axes"].size() == t["shape"].size());
                const auto sizes = axis_sizes(t);
                if (sizes.count("batch")) CHECK(sizes.at("batch") == doc["config"]["batch"].get<std::int64_t>());
                const json* first = nullptr;
                for (const json& link : from) {
                    if (link.contains("weight")) {
                        CHECK(doc["weights"].contains(link["weight"].get<std::string>()));
                        continue;
                    }
                    const int j = link["step"].get<int>();
                    const std::string of = link["tensor"].get<std::string>();
                    // Backwards only: an earlier step, or a tensor recorded before in this one.
                    CHECK((j < i || (j == i && earlier.count(of))));
                    const auto found = at.find({j, of});
                    if (j < i) REQUIRE(found != at.end());
                    if (found == at.end()) continue;
                    used.insert({j, of});
                    if (!first) first = found->second;
                    // Two linked tensors agree on the batch and the heads they share (a token or
                    // key axis may be cut by a round, a tile or a cache window; features change
                    // width through a projection or a split into heads).
                    for (const auto& [axis, n] : axis_sizes(*found->second))
                        if (sizes.count(axis) && (axis == "batch" || axis == "head" || axis == "kv_head"))
                            CHECK(sizes.at(axis) == n);
                }
                const std::string storage = t["storage"].get<std::string>();
                if (storage == "view" || storage == "in_place") {
                    REQUIRE(first);
                    CHECK((*first)["buffer"] == t["buffer"]);  // the memory it shares
                    if (storage == "view") CHECK(numel_of((*first)["shape"]) >= numel_of(t["shape"]));
                }
                if (storage == "new" || storage == "copy")
                    for (const json& link : from)
                        if (!link.contains("weight") && at.count({link["step"].get<int>(), link["tensor"].get<std::string>()}))
                            CHECK(at.at({link["step"].get<int>(), link["tensor"].get<std::string>()})->at("buffer") !=
                                  t["buffer"]);
                // A transpose moves axes and keeps each one's size.
                if (s["op"] == "transpose" || s["op"] == "transpose_back") {
                    REQUIRE(first);
                    CHECK(axis_sizes(*first) == sizes);
                    CHECK((*first)["axes"] != t["axes"]);
                }
                earlier.insert(name);
                at[{i, name}] = &t;
            }
        }
        // Every step feeds the output: walking the links back from the last step's tensors
        // reaches a tensor of each step (x and the other inputs included).
        std::set<int> reached;
        std::vector<std::pair<int, std::string>> todo;
        for (const json& t : steps.back()["tensors"]) todo.push_back({steps.back()["index"].get<int>(), t["name"].get<std::string>()});
        std::set<std::pair<int, std::string>> seen;
        while (!todo.empty()) {
            const auto key = todo.back();
            todo.pop_back();
            if (!seen.insert(key).second || !at.count(key)) continue;
            reached.insert(key.first);
            for (const json& link : at.at(key)->at("from"))
                if (!link.contains("weight")) todo.push_back({link["step"].get<int>(), link["tensor"].get<std::string>()});
        }
        for (const json& s : steps) {
            INFO("step " << s["index"] << " " << s["op"] << " does not reach the output");
            CHECK(reached.count(s["index"].get<int>()) == 1);
        }
        // Each input the configuration has is read by something.
        for (const json& t : steps.front()["tensors"]) {
            INFO("input " << t["name"] << " is never read");
            CHECK(seen.count({0, t["name"].get<std::string>()}) == 1);
        }
    }
}

TEST_CASE("the trace JSON goes out in pieces of at most 65,536 values, and reads back as the trace", "[graph][json]") {
    // T = 400, one head: the scores are 160,000 values (about 1.9 MB of text), three pieces.
    Config c;
    c.tokens = synthetic_tokens(400);
    c.d_in = c.d_out = 8;
    c.heads = 1;
    const Trace tr = test::run_cpu(c);
    std::string text;
    std::size_t largest = 0, pieces = 0;
    write_trace_json(tr, [&](const std::string& piece) {
        text += piece;
        largest = std::max(largest, piece.size());
        ++pieces;
    });
    // A value takes at most 15 characters and a comma ("-1.23456789e-05,").
    CHECK(largest <= 65536 * 16);
    CHECK(pieces > tr.steps.size());
    const json doc = json::parse(text);
    // Every step's values, in order; masked scores (-inf) are null.
    REQUIRE(doc["steps"].size() == tr.steps.size());
    for (std::size_t s = 0; s < tr.steps.size(); ++s)
        for (std::size_t t = 0; t < tr.steps[s].tensors.size(); ++t) {
            const std::vector<float>& want = tr.steps[s].tensors[t].values();
            const json& got = doc["steps"][s]["tensors"][t]["data"];
            INFO("step " << s << " tensor " << t);
            REQUIRE(got.size() == want.size());
            for (std::size_t i = 0; i < want.size(); ++i) {
                if (std::isinf(want[i])) CHECK(got[i].is_null());
                else if (got[i].get<float>() != want[i]) FAIL("value " << i << ": " << got[i] << " != " << want[i]);
            }
        }
    CHECK(doc["steps"][4]["tensors"][0]["data"].size() == 160000);  // the scores [1, 1, 400, 400]
    CHECK(doc["weights"]["w_query"]["data"].size() == 64);
    CHECK(doc["inputs"]["x"]["data"].size() == 400 * 8);
}
