#include "cli/handout_command.hpp"

#include <iostream>
#include <memory>

#include "headsplit/backends/egl_context.hpp"
#include "headsplit/io/terminal.hpp"
#include "gui/runs/handout.hpp"
#include "cli/trace_command.hpp"

namespace headsplit::app {

void HandoutCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand(
        "handout", "write DIR/index.html and a picture per step (stage and heatmaps), drawn offscreen, no display needed");
    add_config_options(*cmd, config);
    needs_a_path(cmd->add_option("--out", out_dir, "the folder to write (made when missing)"))->required();
}

int HandoutCommand::run() const {
    const CheckedConfig c = make_config(config);
    c.require_budget();
    gui::check_handout_dir(out_dir);  // before any work
    const auto trace = std::make_shared<const Trace>(run_traced(c));
    // The pictures are drawn in a headless context of their own, made after the run (a GL
    // backend's context is current while it computes).
    const std::unique_ptr<gl::EglContext> context = gl::EglContext::create();
    context->make_current();
    std::string replaced;
    const int pictures = gui::write_handout(trace, out_dir, &replaced);
    if (!replaced.empty()) std::cout << terminal_text(replaced) << "\n";
    std::cout << "wrote " << terminal_text(out_dir) << "/index.html and " << pictures << " pictures (step-00.png .. step-"
              << (pictures - 1 < 10 ? "0" : "") << pictures - 1 << ".png)\n";
    return 0;
}

}  // namespace headsplit::app
