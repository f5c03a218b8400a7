#include "headsplit/io/terminal.hpp"

#include <cstdio>

namespace headsplit {

namespace {

// The length of the valid UTF-8 character at s[i] and its code point; 0 when the byte there
// starts none (an overlong form, a surrogate, past U+10FFFF, a cut or stray byte).
std::size_t utf8_at(const std::string& s, std::size_t i, char32_t* cp) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    char32_t u = n == 1 ? b : b & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
        const auto cont = static_cast<unsigned char>(s[i + k]);
        if ((cont >> 6) != 2) return 0;
        u = (u << 6) | (cont & 0x3F);
    }
    const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (u < least[n] || u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF)) return 0;
    *cp = u;
    return n;
}

std::string escaped(const char* format, unsigned value) {
    char out[16];
    std::snprintf(out, sizeof out, format, value);
    return out;
}

// terminal_text, with `quote` (when not NUL) escaped as well.
std::string escape_controls(const std::string& s, char quote) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        char32_t u = 0;
        const std::size_t n = utf8_at(s, i, &u);
        if (n == 0) {
            out += escaped("\\x%02x", static_cast<unsigned char>(s[i]));
            ++i;
            continue;
        }
        if (u == '\t') out += "\\t";
        else if (u == '\n') out += "\\n";
        else if (u == '\r') out += "\\r";
        else if (u < 0x20 || u == 0x7F) out += escaped("\\x%02x", static_cast<unsigned>(u));
        else if (u >= 0x80 && u <= 0x9F) out += escaped("\\u%04x", static_cast<unsigned>(u));
        else if (quote && u == static_cast<char32_t>(quote)) out += std::string("\\") + quote;
        else out.append(s, i, n);
        i += n;
    }
    return out;
}

}  // namespace

std::string terminal_text(const std::string& s) { return escape_controls(s, '\0'); }

std::string shown_value(const std::string& value) {
    bool plain = !value.empty();
    for (const char ch : value) plain = plain && ch > ' ' && ch < 0x7F;
    return plain ? value : "\"" + escape_controls(value, '"') + "\"";
}

}  // namespace headsplit
