// Compares HeadSplit's GPT-2 tokenizer with reference ids: reads VOCAB MERGES STRINGS.json
// EXPECTED.json (a list of strings; for each, the list of ids the reference gave), prints
// the first mismatches and the count, exits 1 on any.
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "headsplit/formats/bpe.hpp"

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s vocab.json merges.txt strings.json expected.json\n", argv[0]);
        return 2;
    }
    const headsplit::Gpt2Tokenizer tok = headsplit::Gpt2Tokenizer::load(argv[1], argv[2]);
    const nlohmann::json strings = nlohmann::json::parse(std::ifstream(argv[3]));
    const nlohmann::json expected = nlohmann::json::parse(std::ifstream(argv[4]));
    if (!strings.is_array() || !expected.is_array() || strings.size() != expected.size()) {
        std::fprintf(stderr, "bpe_check: the two lists differ in length\n");
        return 2;
    }
    std::size_t bad = 0, tokens = 0;
    for (std::size_t i = 0; i < strings.size(); ++i) {
        const std::string s = strings[i].get<std::string>();
        const std::vector<int> got = tok.ids(s);
        const std::vector<int> want = expected[i].get<std::vector<int>>();
        tokens += want.size();
        if (got == want) continue;
        if (++bad <= 5)
            std::printf("MISMATCH %zu: %s\n  headsplit %s\n  reference %s\n", i, nlohmann::json(s).dump().c_str(),
                        nlohmann::json(got).dump().c_str(), nlohmann::json(want).dump().c_str());
    }
    std::printf("bpe_check: %zu of %zu strings (%zu tokens) match the reference\n", strings.size() - bad,
                strings.size(), tokens);
    return bad == 0 ? 0 : 1;
}
