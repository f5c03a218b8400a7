// The page's entry: the address's parameters are the window's command-line options (the
// same long names: ?text=the%20cat%20sleeps&heads=3&step=7&present), parsed and checked by
// the same code as `headsplit`'s; a bad value is refused in one line on the page.
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "headsplit/engine/config.hpp"
#include "cli/gui_command.hpp"
#include "cli/options.hpp"
#include "gui/root/window.hpp"
#include "web/page.hpp"

namespace {

using headsplit::gui::page_requests;

// The window's options from the address; ConfigError or CLI::ParseError when refused.
headsplit::gui::GuiOptions options_from_address() {
    std::vector<std::string> args = {"headsplit"};
    for (const auto& [name, value] : headsplit::gui::page_query()) {
        if (name == "json" || name == "layout-report") {
            (name == "json" ? page_requests().json : page_requests().layout_report) = value != "0";
            continue;
        }
        if (name == "weights")
            throw headsplit::ConfigError("weights=" + value + ": the page cannot read folders on this computer; "
                                         "run headsplit --weights DIR on the desktop, or open preset=tiny-trained "
                                         "(a GPT-2 the page carries)");
        for (const char* desktop : {"screenshot", "drive", "drive-report", "layout-audit", "audit-windows", "audit-fonts", "window"})
            if (name == desktop)
                throw headsplit::ConfigError(name + " is for the desktop's headsplit; the page fills its tab and saves "
                                                    "files through the browser's downloads");
        if (name != "step" && name != "font-scale" && name != "present" && name != "quiz" && name != "light")
            page_requests().config_query.emplace_back(name, value);
        args.push_back("--" + name);
        if (!value.empty()) args.push_back(value);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    CLI::App cli{"HeadSplit"};
    headsplit::app::GuiCommand gui;
    gui.add_to(cli);
    cli.parse(static_cast<int>(argv.size()), argv.data());
    // The page has no GL compute: the CPU unless the address asks for GL (which then says why
    // it cannot, where the backend is chosen).
    if (gui.flags.config.backend.empty()) gui.flags.config.backend = "cpu";
    return gui.options();
}

}  // namespace

int main() {
    try {
        const headsplit::gui::GuiOptions options = options_from_address();
        headsplit::gui::warm_up_engine(options.config);  // while the window starts
        return headsplit::gui::run_gui(options);
    } catch (const CLI::ParseError& e) {
        headsplit::gui::show_refusal(headsplit::app::command_line_problem(e, "(the address's parameters are headsplit's options)"));
    } catch (const std::bad_alloc&) {
        headsplit::gui::show_refusal("out of memory; use fewer tokens or a smaller D_out");
    } catch (const std::exception& e) {
        headsplit::gui::show_refusal(headsplit::app::one_line(e.what()));
    }
    return 0;
}
