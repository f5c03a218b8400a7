#include "headsplit/io/address.hpp"

#include <cstdio>

#include "headsplit/base/utf8.hpp"
#include "headsplit/engine/config.hpp"

namespace headsplit {

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// How a message names the part of the query at fault.
std::string where(const std::string& name, bool is_name) {
    return is_name ? "a parameter's name" : "the address's " + name + "=";
}

// A bad escape as the link spells it: the % and the (up to) two characters after it.
std::string excerpt(std::string_view raw, std::size_t at) {
    return std::string(raw.substr(at, 3));
}

// `raw` decoded: '+' a space, %XX a byte; then checked to be UTF-8 without NUL.
std::string decode_part(std::string_view raw, const std::string& name, bool is_name) {
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '+') {
            out += ' ';
        } else if (raw[i] != '%') {
            out += raw[i];
        } else {
            const int hi = i + 1 < raw.size() ? hex_digit(raw[i + 1]) : -1;
            const int lo = i + 2 < raw.size() ? hex_digit(raw[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                throw ConfigError(where(name, is_name) + " holds \"" + excerpt(raw, i) +
                                  "\", which is not a percent escape (% and two hex digits); write a % sign as %25");
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        }
    }
    if (out.find('\0') != std::string::npos)
        throw ConfigError(where(name, is_name) + " holds %00 (a NUL byte), which no option takes; leave it out");
    const std::size_t bad = first_bad_utf8(out);
    if (bad != std::string::npos)
        throw ConfigError(where(name, is_name) + " decodes to bytes that are not UTF-8 (" + bad_bytes(out, bad) +
                          " at byte " + std::to_string(bad) +
                          "); a link's text must be UTF-8, percent-encoded as encodeURIComponent writes it");
    return out;
}

}  // namespace

QueryPairs parse_query(std::string_view query) {
    if (!query.empty() && query.front() == '?') query.remove_prefix(1);
    QueryPairs pairs;
    while (!query.empty()) {
        const std::size_t amp = query.find('&');
        const std::string_view part = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (part.empty()) continue;
        const std::size_t eq = part.find('=');
        std::string name = decode_part(part.substr(0, eq), "", true);
        if (name.empty())
            throw ConfigError("the address has a parameter with no name (\"" + std::string(part.substr(0, 16)) +
                              "\"); write name=value, e.g. heads=3");
        std::string value = eq == std::string_view::npos ? std::string() : decode_part(part.substr(eq + 1), name, false);
        pairs.emplace_back(std::move(name), std::move(value));
    }
    return pairs;
}

std::string encode_query(const QueryPairs& pairs) {
    // encodeURIComponent leaves A-Z a-z 0-9 and - _ . ! ~ * ' ( ) as they are.
    const auto plain = [](unsigned char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               std::string_view("-_.!~*'()").find(static_cast<char>(c)) != std::string_view::npos;
    };
    const auto encode = [&](const std::string& s) {
        std::string out;
        for (const char ch : s) {
            const auto c = static_cast<unsigned char>(ch);
            if (plain(c)) {
                out += ch;
            } else {
                char esc[4];
                std::snprintf(esc, sizeof esc, "%%%02X", c);
                out += esc;
            }
        }
        return out;
    };
    std::string q;
    for (const auto& [name, value] : pairs) {
        if (!q.empty()) q += '&';
        q += encode(name);
        if (!value.empty()) q += '=' + encode(value);
    }
    return q;
}

}  // namespace headsplit
