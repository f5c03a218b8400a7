// The page's address before the window's options read it (web/page_parameters.hpp): the page's
// own switches, a lesson's code and secret, the desktop's options, help and unknown names,
// each refused in one short line naming the parameter.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "headsplit/engine/config.hpp"
#include "web/page_parameters.hpp"

using namespace headsplit;
using namespace headsplit::gui;

namespace {

// A few of the window's options, as CLI11 would know them (help included: CLI11 adds it).
bool is_option(const std::string& name) {
    static const std::set<std::string> known = {"--text", "--heads", "--step", "--present", "--light", "--help"};
    return known.count(name) > 0;
}

std::string refusal(const QueryPairs& query) {
    PageRequests r;
    try {
        page_arguments(query, r, is_option);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the page's options become the window's arguments", "[page]") {
    PageRequests r;
    const std::vector<std::string> args =
        page_arguments({{"text", "the cat"}, {"heads", "2"}, {"present", ""}, {"json", ""}}, r, is_option);
    CHECK(args == std::vector<std::string>{"--text", "the cat", "--heads", "2", "--present"});
    CHECK(r.json);
    CHECK_FALSE(r.layout_report);
    CHECK(r.config_query == QueryPairs{{"text", "the cat"}, {"heads", "2"}});
}

TEST_CASE("a page's switch is bare, =1 or =0, nothing else", "[page]") {
    for (const char* name : {"json", "layout-report"}) {
        for (const auto& [value, on] : std::vector<std::pair<std::string, bool>>{{"", true}, {"1", true}, {"0", false}}) {
            PageRequests r;
            page_arguments({{name, value}}, r, is_option);
            CHECK((std::string(name) == "json" ? r.json : r.layout_report) == on);
        }
        for (const char* value : {"maybe", "2", "true", "01", " 1"}) {
            const std::string why = refusal({{name, value}});
            CAPTURE(name, value, why);
            CHECK(why.rfind(std::string(name) + "=", 0) == 0);
            CHECK(why.find("is not a choice") != std::string::npos);
            CHECK(why.find(std::string(name) + "=0") != std::string::npos);
        }
    }
}

TEST_CASE("help in an address says where the options are, not CLI11's internals", "[page]") {
    for (const char* name : {"help", "h"}) {
        const std::string why = refusal({{name, ""}});
        CAPTURE(why);
        CHECK(why.rfind(std::string(name) + " is the command line's", 0) == 0);
        CHECK(why.find("caught") == std::string::npos);
    }
}

TEST_CASE("unknown parameters are named, a few, and the rest counted", "[page]") {
    CHECK(refusal({{"colour", "blue"}}).rfind("the address's colour= is not one of headsplit's options", 0) == 0);
    QueryPairs many;
    for (int i = 0; i < 1000; ++i) many.emplace_back("p" + std::to_string(i), "1");
    const std::string why = refusal(many);
    CAPTURE(why);
    CHECK(why.rfind("the address has 1000 parameters that are not headsplit's options: p0=, p1=, p2= and 997 more;", 0) == 0);
    CHECK(why.size() < 300);
    // A long name is cut, and never inside a character (é is two bytes; 31 + 2 > 32).
    const std::string name = std::string(31, 'x') + "\xC3\xA9" + std::string(4000, 'y');
    const std::string long_why = refusal({{name, ""}});
    CHECK(long_why.find(std::string(31, 'x') + "...=") != std::string::npos);
    CHECK(long_why.size() < 300);
}

TEST_CASE("a lesson's code and the teacher's secret are refused by what is wrong with each", "[page]") {
    const std::string secret(64, 'a');
    PageRequests r;
    page_arguments({{"lesson", "K7MPQ2"}, {"teacher", secret}}, r, is_option);
    CHECK(r.lesson == "K7MPQ2");
    CHECK(r.teacher == secret);
    for (const std::string& bad : {std::string("nothex"), std::string(63, 'a'), std::string(64, 'g'), std::string()}) {
        const std::string why = refusal({{"lesson", "K7MPQ2"}, {"teacher", bad}});
        CAPTURE(bad, why);
        CHECK(why.find("is not a lesson's teacher secret (64 hex digits)") != std::string::npos);
        CHECK(why.find("code") == std::string::npos);
    }
    CHECK(refusal({{"lesson", "K7-MPQ2"}}).find("is not a lesson's code") != std::string::npos);
}
