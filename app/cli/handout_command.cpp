#include "cli/handout_command.hpp"

#include <iostream>
#include <memory>

#include "headsplit/backends/egl_context.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/io/terminal.hpp"
#include "gui/runs/handout.hpp"
#include "cli/trace_command.hpp"

namespace headsplit::app {

void HandoutCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand(
        "handout", "write DIR/index.html and a picture per step (stage and heatmaps), drawn offscreen, no display needed");
    add_config_options(*cmd, config);
    needs_a_path(cmd->add_option("--out", out_dir, "the folder to write (made when missing)"))->required();
    cmd->add_option("--max-pictures", max_pictures,
                    "the most pictures (one a step) to draw before refusing (default " + std::to_string(gui::kHandoutPictures) + ")");
}

int HandoutCommand::run() const {
    const CheckedConfig c = make_config(config);
    refuse_backward(c.config, "the handout");
    c.require_budget();
    // The pictures' count is the trace's steps, known from its plan before anything runs.
    const std::int64_t most =
        max_pictures.empty() ? gui::kHandoutPictures : parse_count("--max-pictures", max_pictures, 1, 1 << 20);
    const auto steps = static_cast<std::int64_t>(plan(c).steps.size());
    if (steps > most)
        throw ConfigError("the handout would draw " + std::to_string(steps) + " pictures, one a step, more than the " +
                          std::to_string(most) + " it draws unless --max-pictures " + std::to_string(steps) +
                          " asks for them; fewer tokens, or a larger --block in flash mode, take fewer steps");
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
