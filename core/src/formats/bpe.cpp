#include "headsplit/formats/bpe.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>
#include "headsplit/base/numbers.hpp"
#include "bpe_pieces.hpp"
#include "headsplit/formats/files.hpp"

namespace headsplit {

namespace {

// UTF-8 of code point c (< 0x800 here: bytes_to_unicode maps into 0 .. 323).
std::string utf8(std::uint32_t c) {
    std::string s;
    if (c < 0x80) {
        s += static_cast<char>(c);
    } else {
        s += static_cast<char>(0xC0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3F));
    }
    return s;
}

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the other 68 take the code
// points from 256 up, so that every byte is a visible character and none is a space.
struct ByteMap {
    std::string to_char[256];
    std::unordered_map<std::string, unsigned char> to_byte;
    ByteMap() {
        std::uint32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
            to_char[b] = utf8(printable ? static_cast<std::uint32_t>(b) : next++);
            to_byte[to_char[b]] = static_cast<unsigned char>(b);
        }
    }
};
const ByteMap& byte_map() {
    static const ByteMap map;
    return map;
}

// The UTF-8 characters of s, one string each.
std::vector<std::string> characters(const std::string& s) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        out.push_back(s.substr(i, n));
        i += n;
    }
    return out;
}

std::string shown_token(const std::string& s) { return quote_name(s, 40); }

std::string read_checked(const std::string& path) {
    check_readable_file(path, kMaxVocabBytes, "give the folder that holds vocab.json and merges.txt");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream all;
    all << in.rdbuf();
    if (!in && !in.eof()) throw ConfigError(path + ": cannot read it whole");
    if (all.str().size() > kMaxVocabBytes) throw ConfigError(path + ": it grew while being read; read it again");
    return all.str();
}

}  // namespace

Gpt2Tokenizer::Gpt2Tokenizer(const std::string& vocab_json, const std::string& merges_txt,
                             const std::string& vocab_name, const std::string& merges_name)
    : vocab_name_(vocab_name) {
    if (vocab_json.size() > kMaxVocabBytes || merges_txt.size() > kMaxVocabBytes)
        throw ConfigError((vocab_json.size() > kMaxVocabBytes ? vocab_name : merges_name) + ": more than the " +
                          std::to_string(kMaxVocabBytes >> 20) + " MiB a vocabulary file may have");
    // Values nested deeper than the object's own are dropped while parsing (never built), so a
    // hostile file cannot make a deep tree; they then fail the check for a whole number.
    const auto shallow = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) { return depth <= 1; };
    const nlohmann::json doc = nlohmann::json::parse(vocab_json, shallow, false);
    if (doc.is_discarded() || !doc.is_object() || doc.empty())
        throw ConfigError(vocab_name + ": not a JSON object of tokens and ids; is it GPT-2's vocab.json?");
    if (doc.size() > kMaxVocabTokens)
        throw ConfigError(vocab_name + ": " + std::to_string(doc.size()) + " tokens, more than the " +
                          std::to_string(kMaxVocabTokens) + " a vocabulary may have (GPT-2's has 50257)");
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        const nlohmann::json& v = it.value();
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > std::numeric_limits<int>::max())
            throw ConfigError(vocab_name + ": token " + shown_token(it.key()) + " has an id that is not a whole number from 0");
        const int id = static_cast<int>(v.get<std::int64_t>());
        if (!pieces_.emplace(id, it.key()).second)
            throw ConfigError(vocab_name + ": id " + std::to_string(id) + " is given to two tokens, " +
                              shown_token(pieces_[id]) + " and " + shown_token(it.key()));
        vocab_.emplace(it.key(), id);
    }
    std::istringstream lines(merges_txt);
    std::string line;
    int rank = 0, number = 0;
    while (std::getline(lines, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
        const std::size_t space = line.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 >= line.size() ||
            line.find(' ', space + 1) != std::string::npos)
            throw ConfigError(merges_name + ": line " + std::to_string(number) + " is " + shown_token(line) +
                              ", not two symbols separated by one space");
        // Each merge makes one token of the vocabulary: more merges than tokens cannot be.
        if (static_cast<std::size_t>(rank) >= vocab_.size())
            throw ConfigError(merges_name + ": more merges than the " + std::to_string(vocab_.size()) + " tokens of " +
                              vocab_name + " (each merge makes one token); is it the vocabulary's own merges.txt?");
        ranks_.emplace(std::make_pair(line.substr(0, space), line.substr(space + 1)), rank++);
    }
    if (ranks_.empty())
        throw ConfigError(merges_name + ": no merges; a byte-level BPE needs GPT-2's merges.txt beside vocab.json");
}

Gpt2Tokenizer Gpt2Tokenizer::load(const std::string& vocab_path, const std::string& merges_path) {
    return Gpt2Tokenizer(read_checked(vocab_path), read_checked(merges_path), vocab_path, merges_path);
}

std::vector<std::string> Gpt2Tokenizer::pre_split(const std::string& text) { return gpt2_pieces(text); }

std::vector<std::string> Gpt2Tokenizer::bpe(const std::string& symbols_utf8) const {
    std::vector<std::string> word = characters(symbols_utf8);
    while (word.size() > 1) {
        // The adjacent pair merged first: the lowest rank.
        int best = std::numeric_limits<int>::max();
        std::pair<std::string, std::string> pick;
        for (std::size_t i = 0; i + 1 < word.size(); ++i) {
            const auto it = ranks_.find({word[i], word[i + 1]});
            if (it != ranks_.end() && it->second < best) best = it->second, pick = it->first;
        }
        if (best == std::numeric_limits<int>::max()) break;
        // Every occurrence, left to right.
        std::vector<std::string> merged;
        for (std::size_t i = 0; i < word.size();) {
            if (i + 1 < word.size() && word[i] == pick.first && word[i + 1] == pick.second) {
                merged.push_back(word[i] + word[i + 1]);
                i += 2;
            } else {
                merged.push_back(word[i++]);
            }
        }
        word = std::move(merged);
    }
    return word;
}

std::vector<Gpt2Tokenizer::Token> Gpt2Tokenizer::encode(const std::string& text) const {
    const ByteMap& map = byte_map();
    std::vector<Token> out;
    for (const std::string& piece : pre_split(text)) {
        std::string symbols;
        for (unsigned char b : piece) symbols += map.to_char[b];
        for (const std::string& s : bpe(symbols)) {
            const auto it = vocab_.find(s);
            if (it == vocab_.end())
                throw ConfigError(vocab_name_ + ": no token for " + shown_token(s) +
                                  "; a byte-level BPE vocabulary has one for every byte and every merge");
            std::string bytes;
            for (const std::string& c : characters(s)) {
                const auto b = map.to_byte.find(c);
                bytes += b == map.to_byte.end() ? c : std::string(1, static_cast<char>(b->second));
            }
            out.push_back({it->second, std::move(bytes)});
        }
    }
    return out;
}

std::vector<int> Gpt2Tokenizer::ids(const std::string& text) const {
    std::vector<int> out;
    for (const Token& t : encode(text)) out.push_back(t.id);
    return out;
}

}  // namespace headsplit
