#include "cli/export_command.hpp"

#include <iostream>
#include <utility>
#include <vector>

#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/io/export.hpp"
#include "headsplit/formats/files.hpp"
#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"
#include "cli/trace_command.hpp"

namespace headsplit::app {

void ExportCommand::add_to(CLI::App& parent) {
    CLI::App* cmd = parent.add_subcommand(
        "export", "write the configuration as a take-home Python script that reruns it and checks itself");
    add_config_options(*cmd, config);
    needs_a_path(cmd->add_option("--python", python_path, "write a PyTorch script to FILE"));
    needs_a_path(cmd->add_option("--numpy", numpy_path, "write a NumPy-only script to FILE"));
    cmd->callback([] {});
}

int ExportCommand::run() const {
    if (python_path.empty() && numpy_path.empty())
        throw ConfigError("export needs --python FILE or --numpy FILE (or both), e.g. headsplit export --python take_home.py");
    refuse_shared_outputs({{"--python", python_path}, {"--numpy", numpy_path}});
    const CheckedConfig c = make_config(config);
    refuse_backward(c.config, "export's scripts");
    // Refused before anything runs: a script too large (from the planned shapes), a
    // configuration over the memory budget, a destination that cannot be written.
    check_script_size(plan(c));
    c.require_budget();
    std::vector<std::pair<std::string, ScriptKind>> scripts;
    if (!python_path.empty()) scripts.emplace_back(python_path, ScriptKind::PyTorch);
    if (!numpy_path.empty()) scripts.emplace_back(numpy_path, ScriptKind::NumPy);
    for (const auto& [path, kind] : scripts) check_writable(path);

    const Trace trace = run_traced(c);  // the same run as `headsplit trace`
    for (const auto& [path, kind] : scripts) {
        std::cout.flush();  // a reader that has gone ends the run here, before the next file is made
        write_file_atomically(path, export_script(trace, kind));
        std::cout << "wrote " << terminal_text(path) << ": " << script_kind_name(kind) << ", " << trace.steps.size()
                  << " steps; run it with python3 " << terminal_text(shell_path(path)) << "\n";
    }
    return 0;
}

}  // namespace headsplit::app
