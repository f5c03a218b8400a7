#pragma once
// The address's parameters before they become the window's options: the page's own (json,
// layout-report, slices, lesson, teacher) taken out and checked, the desktop's refused, and
// every other name checked against the window's options, so that a link says what is wrong
// with it in one short line. Native code (no emscripten): unit-tested on the desktop.
#include <functional>
#include <string>
#include <vector>

#include "headsplit/io/address.hpp"
#include "web/page.hpp"

namespace headsplit::gui {

// How many unknown names a refusal lists before it counts the rest.
inline constexpr std::size_t kUnknownNamesShown = 3;

// headsplit's arguments for the parameters of `query` that are the window's options ("--name"
// then the value, when it has one), the page's own parameters recorded in `requests`.
// `is_option("--name")` says whether the window has that option. Throws ConfigError, one line
// naming the parameter: a switch (json, layout-report) other than bare, =1 or =0; slices other
// than every; a lesson code that is not letters and digits, a teacher secret that is not 64
// hex digits; weights and the desktop's options; help; names that are not options (the
// first kUnknownNamesShown named, the rest counted).
std::vector<std::string> page_arguments(const QueryPairs& query, PageRequests& requests,
                                        const std::function<bool(const std::string&)>& is_option);

}  // namespace headsplit::gui
