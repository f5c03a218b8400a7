#pragma once
// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates (U+D800-U+DFFF), nothing past
// U+10FFFF. Text from people (a sentence, a link, a file) is checked with these before it is
// shown, so that a bad byte is named as a byte, never as the character a lax decoder made of it.
#include <cstddef>
#include <string>
#include <string_view>

namespace headsplit {

inline constexpr char32_t kNotUtf8 = 0xFFFFFFFF;

// The code point that starts at byte `i` of `s`, and `i` moved past it; kNotUtf8 (and `i` left
// where it was) when the bytes there are not one UTF-8 character.
char32_t next_code_point(std::string_view s, std::size_t& i);

// The offset of the first byte that starts no UTF-8 character; npos when `s` is UTF-8 throughout.
std::size_t first_bad_utf8(std::string_view s);

// The bytes from `at` that a message names, as "0xC0 0xAF" (the bad byte and up to three after
// it that belong to the same broken sequence).
std::string bad_bytes(std::string_view s, std::size_t at);

}  // namespace headsplit
