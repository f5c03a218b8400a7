#pragma once
// GPT-2's byte-level BPE tokenizer: the text is pre-split by GPT-2's pattern (contractions,
// letters, numbers, other symbols, spaces), each piece's UTF-8 bytes are mapped to printable
// characters (bytes_to_unicode), then adjacent symbols are merged by rank from merges.txt
// until no ranked pair is left, and each symbol is looked up in vocab.json. The vocabulary
// files are untrusted: sizes, JSON, ids and merge lines are checked, every problem one
// ConfigError line naming the file.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "headsplit/engine/config.hpp"

namespace headsplit {

// The largest vocab.json or merges.txt read (GPT-2's are 1.0 and 0.5 MB).
constexpr std::uint64_t kMaxVocabBytes = 64ull << 20;
// The most tokens a vocabulary may hold (the largest in use hold about 256 Ki); a merges list
// holds at most one merge per token.
constexpr std::size_t kMaxVocabTokens = 1u << 20;

class Gpt2Tokenizer {
public:
    // From the files' contents; `vocab_name` and `merges_name` name them in messages.
    Gpt2Tokenizer(const std::string& vocab_json, const std::string& merges_txt, const std::string& vocab_name,
                  const std::string& merges_name);
    // From the files (each checked against kMaxVocabBytes before it is read).
    static Gpt2Tokenizer load(const std::string& vocab_path, const std::string& merges_path);

    struct Token {
        int id = 0;
        std::string piece;  // its text (UTF-8; a piece that cuts a character keeps the valid part)
    };
    std::vector<Token> encode(const std::string& text) const;
    std::vector<int> ids(const std::string& text) const;
    std::size_t vocab_size() const { return vocab_.size(); }

    // The pre-split pieces of `text` (GPT-2's pattern), for tests.
    static std::vector<std::string> pre_split(const std::string& text);

private:
    std::vector<std::string> bpe(const std::string& symbols_utf8) const;

    std::unordered_map<std::string, int> vocab_;
    std::unordered_map<int, std::string> pieces_;  // id -> its byte-level string
    std::map<std::pair<std::string, std::string>, int> ranks_;
    std::string vocab_name_;
};

}  // namespace headsplit
