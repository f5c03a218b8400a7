// The page's entry: the address's parameters are the window's command-line options (the
// same long names: ?text=the%20cat%20sleeps&heads=3&step=7&present), parsed and checked by
// the same code as `headsplit`'s; a bad value is refused in one line on the page. A live
// lesson's states are read by the same function (web/page_lesson.cpp).
#include <algorithm>
#include <cctype>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "headsplit/base/slices.hpp"
#include "headsplit/engine/config.hpp"
#include "cli/gui_command.hpp"
#include "cli/options.hpp"
#include "gui/root/window.hpp"
#include "web/page.hpp"

namespace headsplit::gui {

namespace {

// A lesson's code or secret as the address gives it: letters and digits, at most 64.
bool lesson_token(const std::string& v) {
    return !v.empty() && v.size() <= 64 &&
           std::all_of(v.begin(), v.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

GuiOptions page_options(const QueryPairs& query, PageRequests& requests) {
    std::vector<std::string> args = {"headsplit"};
    for (const auto& [name, value] : query) {
        if (name == "json" || name == "layout-report") {
            (name == "json" ? requests.json : requests.layout_report) = value != "0";
            continue;
        }
        if (name == "slices") {  // a test's: the computation pauses at every slice point
            if (value != "every")
                throw ConfigError("slices=" + value + " is not a choice; slices=every pauses the computation at every slice point");
            requests.slices_every = true;
            continue;
        }
        if (name == "lesson" || name == "teacher") {
            if (!lesson_token(value))
                throw ConfigError(name + "=" + value + " is not a lesson's " + (name == "lesson" ? "code" : "secret") +
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
        if (name != "font-scale" && name != "light") requests.own_view = true;
        if (name != "step" && name != "font-scale" && name != "present" && name != "quiz" && name != "light")
            requests.config_query.emplace_back(name, value);
        args.push_back("--" + name);
        if (!value.empty()) args.push_back(value);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    CLI::App cli{"HeadSplit"};
    app::GuiCommand gui;
    gui.add_to(cli);
    try {
        cli.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
        throw ConfigError(app::command_line_problem(e, "(the address's parameters are headsplit's options)"));
    }
    // The page has no GL compute: the CPU unless the address asks for GL (which then says why
    // it cannot, where the backend is chosen).
    if (gui.flags.config.backend.empty()) gui.flags.config.backend = "cpu";
    return gui.options();
}

}  // namespace headsplit::gui

int main() {
    try {
        using namespace headsplit::gui;
        const GuiOptions options = page_options(page_query(), page_requests());
        headsplit::pause_at_every_slice_point(page_requests().slices_every);  // the page's own address only
        warm_up_engine(options.config);  // while the window starts
        start_lesson();                  // its first state waits for the first frame
        return run_gui(options);
    } catch (const std::bad_alloc&) {
        headsplit::gui::show_refusal("out of memory; use fewer tokens or a smaller D_out");
    } catch (const std::exception& e) {
        headsplit::gui::show_refusal(headsplit::app::one_line(e.what()));
    }
    return 0;
}
