#include "headsplit/base/utf8.hpp"

#include <cstdio>

namespace headsplit {

char32_t next_code_point(std::string_view s, std::size_t& i) {
    if (i >= s.size()) return kNotUtf8;
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return s[i++], b0;
    // The lead byte gives the length and the smallest code point that length may hold.
    std::size_t n;
    char32_t least;
    if (b0 >= 0xC2 && b0 <= 0xDF) n = 2, least = 0x80;
    else if (b0 >= 0xE0 && b0 <= 0xEF) n = 3, least = 0x800;
    else if (b0 >= 0xF0 && b0 <= 0xF4) n = 4, least = 0x10000;
    else return kNotUtf8;
    if (s.size() - i < n) return kNotUtf8;
    char32_t u = b0 & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return kNotUtf8;
        u = (u << 6) | (b & 0x3F);
    }
    if (u < least || u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF)) return kNotUtf8;
    i += n;
    return u;
}

std::size_t first_bad_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();)
        if (next_code_point(s, i) == kNotUtf8) return i;
    return std::string_view::npos;
}

std::string bad_bytes(std::string_view s, std::size_t at) {
    std::string out;
    for (std::size_t k = at; k < s.size() && k < at + 4; ++k) {
        const auto b = static_cast<unsigned char>(s[k]);
        if (k > at && (b & 0xC0) != 0x80) break;  // a new character starts: not part of the bad one
        char hex[8];
        std::snprintf(hex, sizeof hex, "%s0x%02X", out.empty() ? "" : " ", b);
        out += hex;
    }
    return out;
}

}  // namespace headsplit
