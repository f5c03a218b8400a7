// The page's entry: the address's parameters are the window's command-line options (the
// same long names: ?text=the%20cat%20sleeps&heads=3&step=7&present), parsed and checked by
// the same code as `headsplit`'s; a bad value is refused in one line on the page. A live
// lesson's states are read by the same function (web/page_lesson.cpp).
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
#include "web/page_parameters.hpp"

namespace headsplit::gui {

GuiOptions page_options(const QueryPairs& query, PageRequests& requests) {
    CLI::App cli{"HeadSplit"};
    app::GuiCommand gui;
    gui.add_to(cli);
    std::vector<std::string> args = {"headsplit"};
    for (std::string& a : page_arguments(query, requests,
                                         [&cli](const std::string& o) { return cli.get_option_no_throw(o) != nullptr; }))
        args.push_back(std::move(a));
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
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
