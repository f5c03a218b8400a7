#pragma once
// Python text for the take-home script (export.cpp): string literals, words replaced, the
// statements for queries, keys and values, and a writer of wrapped lines and value lists.
#include <string>
#include <vector>

#include "headsplit/base/numbers.hpp"
#include "headsplit/base/tensor.hpp"

namespace headsplit::detail {

// `s` as a Python string literal.
std::string py_string(const std::string& s);
// `line` with each whole word of `from` replaced by the same entry of `to`.
std::string replace_words(const std::string& line, const std::vector<std::string>& from,
                          const std::vector<std::string>& to);
// The statement for queries, then the same for keys and for values.
std::vector<std::string> for_qkv(const std::string& queries_line);
// A code line whose comment says the other two go alike, as its three statements.
std::vector<std::string> spelled_out(const std::string& code);

inline std::string list_str(const Shape& s) { return shape_str(s); }  // "[1, 3, 6]": Python's list too

// Python source, line by line.
class Writer {
public:
    void line(int indent, const std::string& text) { text_ += std::string(static_cast<std::size_t>(indent), ' ') + text + "\n"; }
    void lines(int indent, const std::vector<std::string>& texts) {
        for (const std::string& t : texts) line(indent, t);
    }
    void blank() { text_ += "\n"; }
    // A comment wrapped at kWidth columns.
    void comment(int indent, const std::string& text) { wrapped(indent, "# ", text); }
    // `text` wrapped at kWidth columns, each line starting with `prefix`.
    void wrapped(int indent, const std::string& prefix, const std::string& text) {
        std::string cur;
        std::size_t start = 0;
        while (start < text.size()) {
            // A word, or a bracketed group such as a shape "[1, 3, 6]", which is never cut.
            std::size_t end = start;
            for (int depth = 0; end < text.size() && (depth > 0 || text[end] != ' '); ++end)
                depth += text[end] == '[' ? 1 : text[end] == ']' ? -1 : 0;
            const std::string word = text.substr(start, end - start);
            if (!cur.empty() && static_cast<int>(prefix.size() + cur.size() + word.size()) + indent + 1 > kWidth) {
                line(indent, prefix + cur);
                cur.clear();
            }
            cur += (cur.empty() ? "" : " ") + word;
            start = end + 1;
        }
        if (!cur.empty()) line(indent, prefix + cur);
    }
    // NAME = [  # note
    //     v, v, v, ...   (wrapped at kWidth)
    // ]
    void values(int indent, const std::string& head, const std::vector<float>& data, const std::string& tail) {
        line(indent, head);
        const std::string pad(static_cast<std::size_t>(indent + 4), ' ');
        std::string cur = pad;
        for (float v : data) {
            const std::string number = exact_number(v, true) + ",";
            if (cur.size() > pad.size() && static_cast<int>(cur.size() + number.size()) + 1 > kWidth) {
                text_ += cur + "\n";
                cur = pad;
            }
            cur += (cur.size() > pad.size() ? " " : "") + number;
        }
        if (cur.size() > pad.size()) text_ += cur + "\n";
        line(indent, tail);
    }
    const std::string& text() const { return text_; }

private:
    static constexpr int kWidth = 100;
    std::string text_;
};

}  // namespace headsplit::detail
