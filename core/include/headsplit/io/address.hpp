#pragma once
// A page's address query (`?text=the%20cat%20sleeps&heads=3&present`): the options a link
// carries, with the command line's long names. Decoded strictly, as the command line reads its
// arguments: a broken percent escape, a NUL or bytes that are not UTF-8 are refused naming
// the parameter, never passed on as U+FFFD or cut short.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headsplit {

using QueryPairs = std::vector<std::pair<std::string, std::string>>;

// The name/value pairs of `query` (with or without its leading '?'), in order: '&' separates
// pairs, the first '=' separates name from value (a bare name has the value ""), '+' is a
// space, %XX a byte. Empty pairs ("a&&b") are skipped. Throws ConfigError on a bad pair.
QueryPairs parse_query(std::string_view query);

// The query for `pairs` (no leading '?'): names and values percent-encoded as JavaScript's
// encodeURIComponent does; a value "" makes a bare name. parse_query reads it back unchanged.
std::string encode_query(const QueryPairs& pairs);

}  // namespace headsplit
