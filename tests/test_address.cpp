// The page's address read as the command line reads its arguments (parse_query), and UTF-8
// checked by RFC 3629's rules. Expectations are worked by hand from the escapes' bytes and
// from what JavaScript's encodeURIComponent writes.
#include <catch2/catch.hpp>

#include <string>

#include "headsplit/base/utf8.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/io/address.hpp"

using namespace headsplit;

namespace {

std::string refusal(const std::string& query) {
    try {
        parse_query(query);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a link's query reads as its name/value pairs, in order", "[address]") {
    const QueryPairs p = parse_query("?text=the%20cat%20sleeps&heads=3&&present&d-out=");
    REQUIRE(p == QueryPairs{{"text", "the cat sleeps"}, {"heads", "3"}, {"present", ""}, {"d-out", ""}});
    CHECK(parse_query("text=a+b%2Bc") == QueryPairs{{"text", "a b+c"}});
    CHECK(parse_query("text=caf%C3%A9&x=%F0%9F%99%82") == QueryPairs{{"text", "caf\xC3\xA9"}, {"x", "\xF0\x9F\x99\x82"}});
    CHECK(parse_query("").empty());
    CHECK(parse_query("?").empty());
}

TEST_CASE("a broken escape is refused naming the parameter, not read as U+FFFD", "[address]") {
    CHECK(refusal("heads=2&text=100%ZZ") ==
          "the address's text= holds \"%ZZ\", which is not a percent escape (% and two hex digits); write a % sign as %25");
    CHECK(refusal("text=%E0%A4%A").find("\"%A\", which is not a percent escape") != std::string::npos);
    CHECK(refusal("text=50%").find("\"%\", which is not a percent escape") != std::string::npos);
    CHECK(refusal("te%G1xt=a").find("a parameter's name holds \"%G1\"") != std::string::npos);
}

TEST_CASE("bytes that are not UTF-8 are named as bytes; NUL is refused", "[address]") {
    CHECK(refusal("text=ab%E0%A4") ==
          "the address's text= decodes to bytes that are not UTF-8 (0xE0 0xA4 at byte 2); a link's text must be UTF-8, "
          "percent-encoded as encodeURIComponent writes it");
    CHECK(refusal("text=%C0%AF").find("(0xC0 0xAF at byte 0)") != std::string::npos);      // overlong '/'
    CHECK(refusal("text=%ED%A0%80").find("(0xED 0xA0 0x80 at byte 0)") != std::string::npos);  // a surrogate
    CHECK(refusal("text=%F4%90%80%80").find("0xF4 0x90") != std::string::npos);  // past U+10FFFF
    CHECK(refusal("text=%FF").find("(0xFF at byte 0)") != std::string::npos);
    CHECK(refusal("text=a%00b") == "the address's text= holds %00 (a NUL byte), which no option takes; leave it out");
    CHECK(refusal("=3").find("a parameter with no name") != std::string::npos);
}

TEST_CASE("encode_query writes what encodeURIComponent writes, and reads back", "[address]") {
    // encodeURIComponent("a b&c=d+é/?") is "a%20b%26c%3Dd%2B%C3%A9%2F%3F"; it keeps -_.!~*'().
    const QueryPairs p{{"text", "a b&c=d+\xC3\xA9/?"}, {"heads", "3"}, {"present", ""}, {"x", "-_.!~*'()"}};
    const std::string q = encode_query(p);
    CHECK(q == "text=a%20b%26c%3Dd%2B%C3%A9%2F%3F&heads=3&present&x=-_.!~*'()");
    CHECK(parse_query(q) == p);
}

TEST_CASE("UTF-8 is read by RFC 3629's rules", "[address]") {
    std::size_t i = 0;
    const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x99\x82";
    CHECK(next_code_point(s, i) == U'a');
    CHECK(next_code_point(s, i) == 0xE9);
    CHECK(next_code_point(s, i) == 0x20AC);
    CHECK(next_code_point(s, i) == 0x1F642);
    CHECK(i == s.size());
    CHECK(first_bad_utf8(s) == std::string::npos);
    for (const char* bad : {"\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xF0\x80\x80\x80", "\xF5\x80\x80\x80", "\x80", "\xE2\x82"}) {
        INFO(bad_bytes(bad, 0));
        CHECK(first_bad_utf8(std::string("ok") + bad) == 2);
    }
    CHECK(bad_bytes("\xE2\x82" "a", 0) == "0xE2 0x82");
}
