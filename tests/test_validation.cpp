// Every invalid value is refused with one line naming it and what would work.
#include <catch2/catch.hpp>

#include <filesystem>
#include <stdexcept>

#include "helpers.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/model/presets.hpp"

using namespace headsplit;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

std::string error_of(const Config& c) {
    try {
        check_config(c, kNoWords).require_budget();
    } catch (const ConfigError& e) {
        const std::string msg = e.what();
        CHECK(msg.find('\n') == std::string::npos);  // one line
        return msg;
    }
    return "";
}

}  // namespace

TEST_CASE("the default and every preset are valid", "[validation]") {
    CHECK(error_of(Config{}).empty());
    for (const auto& name : preset_names()) {
        INFO(name);
        Config c = config_from_preset(name);
        c.memory_budget = 64ull << 30;  // gpt3's weights alone need more than the default 2 GiB
        CHECK(error_of(c).empty());
    }
}

TEST_CASE("the tiny-trained preset opens the shipped model; a missing model is refused naming where it looked",
          "[validation][checkpoint]") {
    const Preset* p = find_preset("tiny-trained");
    REQUIRE(p);
    const Config c = config_from_preset("tiny-trained");
    CHECK(c.preset == "tiny-trained");
    CHECK(c.layer == p->layer);
    CHECK(std::filesystem::path(c.weights_dir).filename() == "tiny-gpt2");
    const Gpt2Shape s = read_gpt2_config(c.weights_dir);
    CHECK((c.d_in == s.n_embd && c.d_out == s.n_embd && c.heads == s.n_head && c.layers == s.n_layer));
    std::string joined;  // byte-level BPE pieces put back together are the text
    for (const std::string& t : c.tokens) joined += t;
    CHECK(joined == p->text);
    CHECK(c.token_ids.size() == c.tokens.size());
    // Its weights are read from the checkpoint above the engine; the engine makes seeded ones
    // only, and refuses to stand seeded weights in for a checkpoint's.
    CHECK(load_weights(c).w_out == gpt2_attention_weights(c.weights_dir, c.layer).w_out);
    CHECK_THROWS_AS(make_weights(c), std::logic_error);
    Config seeded;
    CHECK(load_weights(seeded).w_query == make_weights(seeded).w_query);
    const Config other = config_from_preset("tiny-trained", "a dog", s.n_layer - 1);
    CHECK(other.layer == s.n_layer - 1);
    CHECK(other.embeddings.size() == other.tokens.size() * static_cast<std::size_t>(s.n_embd));
    const std::string msg = test::refusal_of([] { (void)shipped_weights_dir("no-such-model"); });
    CHECK_THAT(msg, Contains("the shipped model no-such-model is not installed (looked in ") &&
                        Contains("/share/headsplit/no-such-model and ") && Contains("/assets/no-such-model)"));
}

TEST_CASE("heads that do not divide D_out", "[validation]") {
    Config c;
    c.heads = 4;
    CHECK_THAT(error_of(c),
               Equals("D_out = 6 cannot be split into 4 heads (6 / 4 = 1.5); heads that divide 6: 1, 2, 3, 6"));
    c.heads = 7;
    CHECK_THAT(error_of(c), Contains("7 heads") && Contains("heads that divide 6: 1, 2, 3, 6"));
    c.d_out = 768;
    c.heads = 10;
    CHECK_THAT(error_of(c), Contains("768 / 10 = 76.8") && Contains("1, 2, 3, 4, 6, 8, 12, 16"));
}

TEST_CASE("sizes out of range", "[validation]") {
    Config c;
    c.heads = 0;
    CHECK_THAT(error_of(c), Contains("heads = 0") && Contains("heads that divide 6"));
    c = Config{};
    c.heads = -2;
    CHECK_THAT(error_of(c), Contains("heads = -2"));
    c = Config{};
    c.d_in = 0;
    CHECK_THAT(error_of(c), Equals("D_in = 0 is not a valid size; use a whole number from 1 to 65536"));
    c = Config{};
    c.d_out = -1;
    CHECK_THAT(error_of(c), Contains("D_out = -1"));
    c = Config{};
    c.d_out = 1 << 20;
    CHECK_THAT(error_of(c), Contains("D_out = 1048576") && Contains("1 to 65536"));
}

TEST_CASE("no tokens or too many tokens", "[validation]") {
    Config c;
    c.tokens = {};
    CHECK_THAT(error_of(c), Contains("no tokens"));
    CHECK(split_words("  \t \n ").empty());
    c.tokens = synthetic_tokens(kMaxTokens + 1);
    CHECK_THAT(error_of(c), Contains("1048577 tokens") && Contains("at most 1048576"));
}

TEST_CASE("Unicode's spaces separate words as ASCII's do", "[validation][words]") {
    using Words = std::vector<std::string>;
    // UTF-8 written out by hand from each code point: Zs (no-break, Ogham, en quad to hair,
    // narrow no-break, medium mathematical, ideographic), the line and paragraph separators,
    // and the zero-width space, word joiner, Mongolian vowel separator and BOM.
    const std::vector<std::pair<const char*, std::string>> spaces = {
        {"U+00A0", "\xC2\xA0"},     {"U+1680", "\xE1\x9A\x80"}, {"U+2000", "\xE2\x80\x80"}, {"U+2003", "\xE2\x80\x83"},
        {"U+2009", "\xE2\x80\x89"}, {"U+200A", "\xE2\x80\x8A"}, {"U+200B", "\xE2\x80\x8B"}, {"U+2028", "\xE2\x80\xA8"},
        {"U+2029", "\xE2\x80\xA9"}, {"U+202F", "\xE2\x80\xAF"}, {"U+205F", "\xE2\x81\x9F"}, {"U+2060", "\xE2\x81\xA0"},
        {"U+3000", "\xE3\x80\x80"}, {"U+180E", "\xE1\xA0\x8E"}, {"U+FEFF", "\xEF\xBB\xBF"}};
    for (const auto& [name, space] : spaces) {
        CAPTURE(name);
        CHECK(split_words("the" + space + "cat sleeps") == Words{"the", "cat", "sleeps"});
        CHECK(split_words(space + "the " + space + space + "cat" + space) == Words{"the", "cat"});
        CHECK(split_words(space + space).empty());
    }
    // Not spaces: letters beside them, joiners inside an emoji or a word, a C1 control (NEL is
    // White_Space, but refused in a word as a control), a stray byte.
    CHECK(split_words("caf\xC3\xA9 \xE2\x80\x82na\xC3\xAFve") == Words{"caf\xC3\xA9", "na\xC3\xAFve"});
    CHECK(split_words("\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB ok") == Words{"\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB", "ok"});
    CHECK(split_words("a\xC2\x85" "b") == Words{"a\xC2\x85" "b"});
    CHECK(split_words("a\xFF\xC2 b") == Words{"a\xFF\xC2", "b"});
    CHECK(split_words("a\tb\nc\vd\fe\rf") == Words{"a", "b", "c", "d", "e", "f"});
}

TEST_CASE("dropout outside 0 to 1", "[validation]") {
    Config c;
    for (double p : {-0.1, 1.0, 1.5, static_cast<double>(NAN)}) {
        c.dropout = p;
        INFO(p);
        CHECK_THAT(error_of(c), Contains("dropout p = ") && Contains("outside [0, 1)"));
    }
    c.dropout = 0.999;
    CHECK(error_of(c).empty());
}

TEST_CASE("fixed embeddings must match T x D_in", "[validation]") {
    Config c = config_from_preset("journey");
    CHECK(error_of(c).empty());
    c.d_in = 4;
    CHECK_THAT(error_of(c), Contains("18 numbers") && Contains("6 x 4"));
}

TEST_CASE("unknown preset lists the known ones", "[validation]") {
    try {
        config_from_preset("gpt5");
        FAIL("no error");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Equals("unknown preset \"gpt5\"; presets: cat-sleeps, journey, gpt2-small, gpt2-medium, gpt2-large, gpt2-xl, gpt3, llama2-7b, llama3-8b, tiny-trained"));
    }
}

TEST_CASE("memory budget: refused with the estimate before anything is allocated", "[validation][memory]") {
    // 3 x 12288^2 + 12288^2 weights: 2.25 GiB, held three times (the caller's, the trace's
    // and the backend's); the 4 tokens' activations and trace add a few MiB.
    Config c = config_from_preset("gpt3");
    CHECK_THAT(error_of(c), Contains("needs about 6.75 GiB") && Contains("memory budget of 2.00 GiB") &&
                                Contains("--memory-budget"));
    // run() checks too, before it touches the backend.
    Config small;
    small.memory_budget = 1024;  // 1 KiB: even the 3-token example needs more
    auto backend = make_cpu_backend();
    CHECK_THROWS_AS(run(small, make_inputs(small), make_weights(small), *backend), ConfigError);
    CHECK_THAT(error_of(small), Contains("memory budget of 1.00 KiB"));
    // Long text grows the T x T score grids quadratically.
    Config longtext = config_from_preset("gpt2-small");
    longtext.tokens = synthetic_tokens(20000);
    CHECK_THAT(error_of(longtext), Contains("trace"));
}

TEST_CASE("the estimate of recorded values is exact", "[memory]") {
    const auto mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const bool causal = GENERATE(true, false);
    const double dropout = GENERATE(0.0, 0.2);
    const bool out_proj = GENERATE(true, false);
    Config c;
    c.mode = mode;
    c.causal = causal;
    c.dropout = dropout;
    c.out_proj = out_proj;
    c.tokens = synthetic_tokens(5);
    c.d_in = 4;
    c.d_out = 12;
    c.heads = 3;
    const Trace tr = test::run_cpu(c);
    const MemoryEstimate e = estimate_memory(c, kNoWords);
    CHECK(e.trace_bytes == static_cast<double>(tr.value_bytes()));
    CHECK(e.total() > e.trace_bytes);
}
