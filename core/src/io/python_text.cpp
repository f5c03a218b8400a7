#include "python_text.hpp"

#include <cctype>
#include <cstdio>

namespace headsplit::detail {

namespace {

// Length of the valid UTF-8 sequence of 2 to 4 bytes at s[i]; 0 when there is none.
std::size_t utf8_length(const std::string& s, std::size_t i) {
    const auto lead = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;                // bytes in the sequence
    std::uint32_t code = 0, least = 0;  // the code point; the least that needs n bytes
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2, code = lead & 0x1Fu, least = 0x80;
    } else if ((lead & 0xF0u) == 0xE0) {
        n = 3, code = lead & 0x0Fu, least = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4, code = lead & 0x07u, least = 0x10000;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        const auto next = static_cast<unsigned char>(s[i + k]);
        if ((next & 0xC0u) != 0x80) return 0;
        code = code << 6 | (next & 0x3Fu);
    }
    if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
    return n;
}

bool is_word_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

}  // namespace

// `s` as a double-quoted Python literal. Tokens are whatever the user typed: UTF-8 stays as
// it is (Python reads its sources as UTF-8), a byte that is not UTF-8 becomes U+FFFD (as the
// trace JSON does), quotes, backslashes and control characters are escaped.
std::string py_string(const std::string& s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const auto ch = static_cast<unsigned char>(s[i]);
        if (ch >= 0x80) {
            const std::size_t n = utf8_length(s, i);
            if (n == 0) out += "\xEF\xBF\xBD";
            else out.append(s, i, n);
            i += n == 0 ? 1 : n;
            continue;
        }
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += static_cast<char>(ch);
        } else if (ch < 0x20 || ch == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", ch);
            out += buf;
        } else {
            out += static_cast<char>(ch);
        }
        ++i;
    }
    return out + "\"";
}


// `line` with each whole identifier in `from` replaced by the one at the same place in `to`.
std::string replace_words(const std::string& line, const std::vector<std::string>& from,
                          const std::vector<std::string>& to) {
    std::string out;
    for (std::size_t i = 0; i < line.size();) {
        if (!is_word_char(line[i])) {
            out += line[i++];
            continue;
        }
        std::size_t k = i;
        while (k < line.size() && is_word_char(line[k])) ++k;
        std::string word = line.substr(i, k - i);
        for (std::size_t w = 0; w < from.size(); ++w)
            if (word == from[w]) word = to[w];
        out += word;
        i = k;
    }
    return out;
}

// The statement for queries, then the same for keys and for values.
std::vector<std::string> for_qkv(const std::string& queries_line) {
    const std::vector<std::string> q = {"queries", "W_query", "b_query", "w_query", "W_QUERY", "B_QUERY"};
    return {queries_line,
            replace_words(queries_line, q, {"keys", "W_key", "b_key", "w_key", "W_KEY", "B_KEY"}),
            replace_words(queries_line, q, {"values", "W_value", "b_value", "w_value", "W_VALUE", "B_VALUE"})};
}

// A code line whose comment says the other two go alike, as its three statements.
std::vector<std::string> spelled_out(const std::string& code) {
    const std::string alike = "  # keys, values alike";
    if (code.size() > alike.size() && code.compare(code.size() - alike.size(), alike.size(), alike) == 0)
        return for_qkv(code.substr(0, code.size() - alike.size()));
    return {code};
}

}  // namespace headsplit::detail
