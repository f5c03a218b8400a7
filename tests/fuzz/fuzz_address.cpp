// libFuzzer target over the page's address decoding (parse_query): any bytes as a query.
// Each one is either refused with ConfigError or read into pairs whose names and values are
// UTF-8 without NUL; and the pairs, written back by encode_query, read back unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "headsplit/base/utf8.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/io/address.hpp"

using namespace headsplit;

namespace {

[[noreturn]] void bug(const char* what, std::string_view query) {
    std::fprintf(stderr, "fuzz_address: %s in: %.*s\n", what, static_cast<int>(query.size()), query.data());
    std::abort();
}

bool clean(const std::string& s) { return s.find('\0') == std::string::npos && first_bad_utf8(s) == std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view query(reinterpret_cast<const char*>(data), size);
    QueryPairs pairs;
    try {
        pairs = parse_query(query);
    } catch (const ConfigError& e) {
        if (std::string(e.what()).empty()) bug("an empty refusal", query);
        return 0;
    }
    for (const auto& [name, value] : pairs) {
        if (!clean(name) || !clean(value)) bug("a NUL or a byte that is not UTF-8 let through", query);
        if (name.empty()) bug("a pair with no name kept", query);
    }
    QueryPairs again;
    try {
        again = parse_query(encode_query(pairs));
    } catch (const ConfigError&) {
        bug("its own encoding refused", query);
    }
    // A bare name and a name with an empty value ("a" and "a=") are the same option.
    if (again != pairs) bug("the encoding read back differently", query);
    return 0;
}
