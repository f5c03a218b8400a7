#include "web/page_parameters.hpp"

#include <algorithm>
#include <cctype>

#include "headsplit/base/utf8.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/io/terminal.hpp"

namespace headsplit::gui {

namespace {

// A lesson's code as the address gives it: letters and digits, at most 64 (the server says
// whether it is the lesson's).
bool lesson_code(const std::string& v) {
    return !v.empty() && v.size() <= 64 &&
           std::all_of(v.begin(), v.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// The teacher's secret as lesson/protocol.cpp's make_teacher_secret() makes it: 64 hex digits.
bool teacher_secret(const std::string& v) {
    return v.size() == 64 &&
           std::all_of(v.begin(), v.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// A switch of the page's: on as a bare name or name=1, off as name=0.
bool page_switch(const std::string& name, const std::string& value) {
    if (value.empty() || value == "1") return true;
    if (value == "0") return false;
    throw ConfigError(name + "=" + shown_value(value) + " is not a choice; " + name + " or " + name + "=1 asks for it, " +
                      name + "=0 does not");
}

// A parameter's name as a refusal shows it: at most 32 bytes, never cut inside a character.
std::string shown_name(const std::string& name) {
    std::size_t end = 0;
    while (end < name.size()) {
        std::size_t next = end;
        if (next_code_point(name, next) == kNotUtf8) next = end + 1;
        if (next > 32) break;
        end = next;
    }
    return shown_value(name.substr(0, end) + (end < name.size() ? "..." : "")) + "=";
}

[[noreturn]] void refuse_unknown(const std::vector<std::string>& unknown) {
    const std::string tail = "; the page's parameters are the window's options (headsplit --help lists them), e.g. heads=3";
    if (unknown.size() == 1)
        throw ConfigError("the address's " + shown_name(unknown.front()) + " is not one of headsplit's options" + tail);
    std::string names;
    const std::size_t shown = std::min(unknown.size(), kUnknownNamesShown);
    for (std::size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + shown_name(unknown[i]);
    if (unknown.size() > shown) names += " and " + std::to_string(unknown.size() - shown) + " more";
    throw ConfigError("the address has " + std::to_string(unknown.size()) +
                      " parameters that are not headsplit's options: " + names + tail);
}

}  // namespace

std::vector<std::string> page_arguments(const QueryPairs& query, PageRequests& requests,
                                        const std::function<bool(const std::string&)>& is_option) {
    std::vector<std::string> args, unknown;
    for (const auto& [name, value] : query) {
        if (name == "json" || name == "layout-report") {
            (name == "json" ? requests.json : requests.layout_report) = page_switch(name, value);
            continue;
        }
        if (name == "slices") {  // a test's: the computation pauses at every slice point
            if (value != "every")
                throw ConfigError("slices=" + value + " is not a choice; slices=every pauses the computation at every slice point");
            requests.slices_every = true;
            continue;
        }
        if (name == "lesson" || name == "teacher") {
            if (name == "lesson" ? !lesson_code(value) : !teacher_secret(value))
                throw ConfigError(name + "=" + shown_value(value) + " is not a lesson's " +
                                  (name == "lesson" ? "code (letters and digits)" : "teacher secret (64 hex digits)") +
                                  "; open the address `headsplit lesson` printed, as it printed it");
            (name == "lesson" ? requests.lesson : requests.teacher) = value;
            continue;
        }
        if (name == "weights")
            throw ConfigError("weights=" + value + ": the page cannot read folders on this computer; "
                              "run headsplit --weights DIR on the desktop, or open preset=tiny-trained "
                              "(a GPT-2 the page carries)");
        for (const char* desktop : {"screenshot", "drive", "drive-report", "layout-audit", "audit-windows", "audit-fonts", "window"})
            if (name == desktop)
                throw ConfigError(name + " is for the desktop's headsplit; the page fills its tab and saves "
                                         "files through the browser's downloads");
        if (name == "help" || name == "h")
            throw ConfigError(name + " is the command line's (headsplit --help lists the options); the page's parameters are "
                                     "those options' long names, e.g. ?text=the%20cat%20sleeps&heads=3");
        if (!is_option("--" + name)) {
            unknown.push_back(name);
            continue;
        }
        if (name != "font-scale" && name != "light") requests.own_view = true;
        if (name != "step" && name != "font-scale" && name != "present" && name != "quiz" && name != "light")
            requests.config_query.emplace_back(name, value);
        args.push_back("--" + name);
        if (!value.empty()) args.push_back(value);
    }
    if (!unknown.empty()) refuse_unknown(unknown);
    return args;
}

}  // namespace headsplit::gui
