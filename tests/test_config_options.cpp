// config_options: the long options that make a configuration again (the handout's rerun line,
// the page's address). Each configuration, made from options as a user types them, is spelled
// by config_options, parsed back by the command line's own parser and checked field by field.
#include <catch2/catch.hpp>

#include <CLI/CLI.hpp>

#include "headsplit/engine/config.hpp"
#include "headsplit/io/config_options.hpp"
#include "headsplit/model/presets.hpp"
#include "cli/options.hpp"
#include "config_checks.hpp"

using namespace headsplit;
using headsplit::test::check_same;
using headsplit::test::parsed;

namespace {

std::vector<std::string> words_of(const Config& c) {
    std::vector<std::string> w;
    for (const auto& [name, value] : config_options(c)) {
        w.push_back("--" + name);
        if (!value.empty()) w.push_back(value);
    }
    return w;
}

std::string testing_join(const std::vector<std::string>& w) {
    std::string out;
    for (const std::string& s : w) out += (out.empty() ? "" : " ") + s;
    return out;
}

}  // namespace

TEST_CASE("config_options spells a configuration that parses back to the same one", "[config_options]") {
    const std::vector<std::vector<std::string>> typed = {
        {},
        {"--text", "a small cat sat on the mat", "--d-in", "8", "--d-out", "12", "--heads", "3", "--mode", "loop"},
        {"--text", "the cat sleeps", "--text", "a dog runs in the park", "--d-out", "8", "--heads", "4", "--kv-heads", "2"},
        {"--text", "it's 'quoted' $(not run)", "--mode", "flash", "--block", "2", "--no-causal", "--seed", "7"},
        {"--text", "the cat sleeps on the mat", "--decode-from", "3", "--qkv-bias"},
        {"--text", "the cat sleeps on the mat", "--dropout", "0.25", "--scale-first", "--no-out-proj"},
        {"--text", "the cat", "--context", "a dog runs far away", "--d-context", "10"},
        {"--text", "the cat sat", "--context", "a dog ran", "--causal"},
        {"--text", "the cat sat", "--backend", "gl", "--mode", "flash", "--block", "2"},
        {"--preset", "gpt2-small", "--tokens", "24", "--mode", "fused"},
        {"--preset", "tiny-trained", "--text", "don't stop, we're   here", "--layer", "2", "--mode", "flash"},
        {"--preset", "tiny-trained", "--text", "the cat", "--backend", "gl"},
    };
    for (const auto& words : typed) {
        INFO("typed: " << testing_join(words));
        const Config a = parsed(words);
        const std::vector<std::string> spelled = words_of(a);
        INFO("spelled: " << testing_join(spelled));
        REQUIRE_FALSE(spelled.empty());
        const Config b = parsed(spelled);
        check_same(a, b);
        CHECK(words_of(b) == spelled);
    }
}

TEST_CASE("config_options: a large preset's synthetic tokens go as their count", "[config_options]") {
    const Config c = parsed({"--preset", "gpt2-small", "--tokens", "128"});
    const auto o = config_options(c);
    REQUIRE_FALSE(o.empty());
    REQUIRE(o.size() >= 2);
    CHECK(o[0] == std::make_pair(std::string("preset"), std::string("gpt2-small")));
    CHECK(o[1] == std::make_pair(std::string("tokens"), std::string("128")));
    for (const auto& [name, value] : o) CHECK(name != "text");
}

TEST_CASE("config_options: a preset's own embeddings go as its name, with the changes that keep them", "[config_options]") {
    for (const std::vector<std::string>& typed : std::vector<std::vector<std::string>>{
             {"--preset", "journey"},
             {"--preset", "journey", "--heads", "2", "--d-out", "8", "--mode", "flash", "--block", "4", "--seed", "3"},
             {"--preset", "journey", "--kv-heads", "1", "--no-causal", "--qkv-bias", "--dropout", "0.5"},
             {"--preset", "journey", "--scale-first", "--no-out-proj", "--decode-from", "2"},
             {"--preset", "journey", "--context", "a dog runs", "--d-context", "5"}}) {
        INFO("typed: " << testing_join(typed));
        const Config a = parsed(typed);
        REQUIRE_FALSE(a.embeddings.empty());
        const std::vector<std::string> spelled = words_of(a);
        INFO("spelled: " << testing_join(spelled));
        REQUIRE(spelled.size() >= 2);
        CHECK(spelled[0] == "--preset");
        CHECK(spelled[1] == "journey");
        for (const std::string& w : spelled) CHECK((w != "--text" && w != "--d-in" && w != "--tokens"));
        const Config b = parsed(spelled);
        check_same(a, b);  // the same rows among the rest, so the same numbers
        CHECK(words_of(b) == spelled);
    }
    // The rows with other words (the window's sentence box keeps them only until the words
    // change, but a Config can hold them): no option makes that again.
    Config other = parsed({"--preset", "journey"});
    other.tokens.back() = "leap";
    CHECK(config_options(other).empty());
    other = parsed({"--preset", "journey"});
    other.embeddings[0] += 1.0f;
    CHECK(config_options(other).empty());
}

TEST_CASE("command_options spells a checkpoint folder's configuration, which parses back to the same one", "[config_options]") {
    const std::string dir = shipped_weights_dir("tiny-gpt2");  // absolute, as command_options spells it
    const std::vector<std::vector<std::string>> typed = {
        {"--weights", dir, "--text", "the cat", "--layer", "1"},
        {"--weights", dir, "--text", "the cat sat on the mat", "--mode", "flash", "--block", "2", "--backend", "gl"},
        {"--weights", dir, "--dropout", "0.25", "--seed", "3", "--scale-first", "--no-out-proj"},
        {"--weights", dir, "--text", "the cat sat on the mat", "--decode-from", "2"},
        {"--weights", dir, "--text", "the cat", "--no-causal"},
        {"--preset", "tiny-trained", "--dropout", "0.5", "--seed", "9", "--scale-first"},
    };
    for (const auto& words : typed) {
        INFO("typed: " << testing_join(words));
        const Config a = parsed(words);
        std::vector<std::string> spelled;
        for (const auto& [name, value] : command_options(a)) {
            spelled.push_back("--" + name);
            if (!value.empty()) spelled.push_back(value);
        }
        INFO("spelled: " << testing_join(spelled));
        CHECK(config_options(a).empty() == (words.front() == "--weights"));  // the page cannot open a folder
        check_same(a, parsed(spelled));
    }
}

TEST_CASE("weights_source names the seed, the checkpoint folder and its layer, or the shipped preset", "[config_options]") {
    const std::string dir = shipped_weights_dir("tiny-gpt2");
    CHECK(weights_source(parsed({"--seed", "7"})) == "random, from seed 7");
    CHECK(weights_source(parsed({"--weights", dir, "--layer", "1"})) == "the GPT-2 checkpoint in " + dir + ", layer 1 of 4");
    CHECK(weights_source(parsed({"--preset", "tiny-trained", "--layer", "2"})) ==
          "the tiny-trained preset: the GPT-2 checkpoint shipped with HeadSplit (" + dir + "), layer 2 of 4");
}
