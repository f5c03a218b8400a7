// GPT-2's byte-level BPE on a vocabulary small enough to work by hand, its pre-split pattern,
// and the refusals of broken vocabulary files. (The full vocabulary is compared with an
// independent encoder on 1,200 strings by tests/bpe_test.sh.)
#include <catch2/catch.hpp>

#include "headsplit/formats/bpe.hpp"
#include "helpers.hpp"

using namespace headsplit;
using Catch::Matchers::Contains;

namespace {

// "Ġ" is the byte-level character of a space (byte 0x20 -> U+0120).
const std::string kVocab = R"({"a": 0, "b": 1, "ab": 2, "\u0120": 3, "\u0120ab": 4, "'": 5, "s": 6, "'s": 7})";
const std::string kMerges = "#version: 0.2\na b\n\u0120 ab\n' s\n";

std::string refusal(const std::string& vocab, const std::string& merges) {
    return test::refusal_of([&] { Gpt2Tokenizer(vocab, merges, "vocab.json", "merges.txt"); });
}

}  // namespace

TEST_CASE("BPE: merges by rank, worked by hand", "[bpe]") {
    const Gpt2Tokenizer t(kVocab, kMerges, "vocab.json", "merges.txt");
    // "ab ab's": pieces "ab", " ab", "'s". "ab": a b -> ab (rank 0) = 2. " ab": Ġ a b -> Ġ ab
    // (rank 0) -> Ġab (rank 1) = 4. "'s" is a contraction piece: ' s -> 's (rank 2) = 7.
    CHECK(t.ids("ab ab's") == std::vector<int>{2, 4, 7});
    const auto tokens = t.encode("ab ab");
    REQUIRE(tokens.size() == 2);
    CHECK(tokens[1].piece == " ab");  // the piece as text: the space is a space again
    CHECK_THROWS_WITH(t.ids("abc"), Contains("no token for \"c\""));
}

TEST_CASE("BPE: GPT-2's pre-split pattern", "[bpe]") {
    using V = std::vector<std::string>;
    CHECK(Gpt2Tokenizer::pre_split("Hello world, it's 42!") == V{"Hello", " world", ",", " it", "'s", " 42", "!"});
    // Runs of spaces: all but the last stay apart from the next word; a trailing run is whole.
    CHECK(Gpt2Tokenizer::pre_split("a   b  ") == V{"a", "  ", " b", "  "});
    CHECK(Gpt2Tokenizer::pre_split("naïve café 東京") == V{"naïve", " café", " 東京"});
    CHECK(Gpt2Tokenizer::pre_split("x\n\ny") == V{"x", "\n", "\n", "y"} );
}

TEST_CASE("BPE: broken vocabulary files are refused in one line", "[bpe][bad-input]") {
    CHECK(refusal(kVocab, kMerges).empty());
    CHECK_THAT(refusal("{\"a\": 0", kMerges), Contains("vocab.json: not a JSON object"));
    CHECK_THAT(refusal("[\"a\"]", kMerges), Contains("vocab.json: not a JSON object"));
    CHECK_THAT(refusal(R"({"a": -1})", kMerges), Contains("not a whole number from 0"));
    CHECK_THAT(refusal(R"({"a": 1.5})", kMerges), Contains("not a whole number from 0"));
    CHECK_THAT(refusal(R"({"a": [[[[1]]]]})", kMerges), Contains("not a whole number from 0"));
    CHECK_THAT(refusal(R"({"a": 0, "b": 0})", kMerges), Contains("id 0 is given to two tokens"));
    CHECK_THAT(refusal(kVocab, "#version: 0.2\nab\n"), Contains("merges.txt: line 2 is \"ab\", not two symbols"));
    CHECK_THAT(refusal(kVocab, "a  b\n"), Contains("not two symbols separated by one space"));
    CHECK_THAT(refusal(kVocab, "#version: 0.2\n"), Contains("merges.txt: no merges"));
    CHECK_THAT(refusal(kVocab, ""), Contains("no merges"));
}
