// headsplit: the one executable. The visualizer by default; subcommands `trace`,
// `kernels`, `bench` and `export` run headless.
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <cstdlib>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "headsplit/engine/config.hpp"
#include "headsplit/backends/gl_backend.hpp"
#include "headsplit/io/trace_json.hpp"
#include "cli/bench_command.hpp"
#include "cli/export_command.hpp"
#include "cli/handout_command.hpp"
#include "cli/gui_command.hpp"
#include "cli/options.hpp"
#include "cli/kernels_command.hpp"
#include "cli/trace_command.hpp"

namespace {

int fail(int code, const std::string& message) {
    std::cerr << "headsplit: " << headsplit::app::one_line(message) << "\n";
    return code;
}

// Parses the command line: -1 when it parsed, else the exit code (help printed, or the
// problem said in one line).
int parse(CLI::App& cli, int argc, char** argv) {
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return cli.exit(e);
    } catch (const CLI::ParseError& e) {
        return fail(2, headsplit::app::command_line_problem(e, "(see headsplit --help)"));
    }
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace headsplit;
    // A trace's tensors are large blocks that the next run (the window recomputes on every
    // change, the bench repeats) allocates again: keep freed memory in the heap for them
    // instead of unmapping it and faulting fresh zeroed pages in each time.
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1024 << 20);
    CLI::App cli{"HeadSplit: multi-head attention with weight splits, run for real and traced step by step."};
    cli.require_subcommand(0, 1);
    app::TraceCommand trace;
    trace.add_to(cli);
    app::KernelsCommand kernels;
    kernels.add_to(cli);
    app::BenchCommand bench;
    bench.add_to(cli);
    app::ExportCommand export_script;
    export_script.add_to(cli);
    app::HandoutCommand handout;
    handout.add_to(cli);
    // No subcommand: the visualizer, on the same OPTIONS (GL backend unless told otherwise).
    app::GuiCommand gui;
    gui.add_to(cli);
    if (const int code = parse(cli, argc, argv); code >= 0) return code;

    try {
        if (cli.got_subcommand("trace")) return trace.run();
        if (cli.got_subcommand("kernels")) return kernels.run();
        if (cli.got_subcommand("bench")) return bench.run();
        if (cli.got_subcommand("export")) return export_script.run();
        if (cli.got_subcommand("handout")) return handout.run();
        return gui.run();
    } catch (const ConfigError& e) {
        return fail(2, e.what());
    } catch (const GlError& e) {
        return fail(e.kind == GlError::Kind::NoContext ? 2 : 1, e.what());
    } catch (const std::bad_alloc&) {
        return fail(1, "out of memory; use fewer tokens or a smaller D_out, or lower --memory-budget");
    } catch (const std::exception& e) {
        return fail(1, e.what());
    }
}
