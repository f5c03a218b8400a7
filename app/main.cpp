// headsplit: the one executable. The visualizer by default; subcommands `trace`,
// `kernels`, `bench`, `export` and `handout` run headless; `lesson` serves a live lesson.
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
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
#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"
#include "cli/bench_command.hpp"
#include "cli/export_command.hpp"
#include "cli/handout_command.hpp"
#include "cli/gl_faults_env.hpp"
#include "cli/gui_command.hpp"
#include "cli/options.hpp"
#include "cli/standard_output.hpp"
#include "cli/kernels_command.hpp"
#include "cli/train_command.hpp"
#include "cli/lesson_command.hpp"
#include "cli/lesson_link.hpp"
#include "cli/trace_command.hpp"

namespace {

int fail(int code, const std::string& message) {
    std::cerr << "headsplit: " << headsplit::terminal_text(headsplit::app::one_line(message)) << "\n";
    return code;
}

// Whether standard output was closed when the program started (`>&-`).
bool g_stdout_closed = false;

// Descriptors 0, 1 and 2 that were closed at start get /dev/null, read-only: no file opened
// later takes their number (a trace's JSON would otherwise receive the table printed to
// "standard output"), and a write to them still fails, as a write to a closed one does.
void hold_standard_descriptors() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        if (fd == 1) g_stdout_closed = true;
        const int opened = open("/dev/null", O_RDONLY);
        if (opened >= 0 && opened != fd) dup2(opened, fd), close(opened);
    }
}

// Standard output's last bytes, and whether every write to it got through: a full disk, a
// closed descriptor or the file size limit make a run that would have exited 0 exit 1 with
// one line. A reader that has gone (EPIPE, where SIGPIPE is ignored) ends it quietly with the
// status a shell shows for SIGPIPE (141), as SIGPIPE itself does where it is not ignored:
// `headsplit trace | head -1` prints no error.
int finish_standard_output(int code) {
    const int err = headsplit::app::standard_output_error();
    if (err == 0) return code;
    if (err == EPIPE) return 128 + SIGPIPE;
    if (code != 0) return code;  // its own line has said what went wrong
    if (err == EFBIG) return fail(1, "the file size limit (ulimit -f) was reached writing standard output");
    if (g_stdout_closed || err == EBADF)
        return fail(1, "cannot write standard output: it is closed; redirect it instead (> FILE, or > /dev/null)");
    return fail(1, std::string("cannot write standard output: ") + std::strerror(err));
}

// Words after "--": HeadSplit takes no positional arguments, so they would say nothing.
// One line naming them; "" when there are none.
std::string words_after_separator(int argc, char** argv) {
    std::string words;
    bool after = false;
    for (int i = 1; i < argc; ++i) {
        if (after) words += (words.empty() ? "" : " ") + headsplit::shown_value(argv[i]);
        else after = std::strcmp(argv[i], "--") == 0;
    }
    if (words.empty()) return "";
    return "headsplit takes no arguments after --, and was given " + words +
           "; put options before --, and a sentence in --text \"...\"";
}

// Parses the command line: -1 when it parsed, else the exit code (help printed, or the
// problem said in one line).
int parse(CLI::App& cli, int argc, char** argv) {
    if (const std::string stray = words_after_separator(argc, argv); !stray.empty()) return fail(2, stray);
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

int run_main(int argc, char** argv) {
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
    app::LessonCommand lesson;
    lesson.add_to(cli);
    app::TrainCommand train;
    train.add_to(cli);
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
        if (cli.got_subcommand("lesson")) return lesson.run();
        if (cli.got_subcommand("train")) return train.run();
        gui::GuiOptions options = gui.options();
        // A window with someone at it can start a live lesson; the unattended runs cannot.
        if (options.screenshot.empty() && options.drive_frames == 0 && options.layout_audit.empty())
            options.lesson_starter = app::lesson_starter({});
        const int code = gui::run_gui(options);
        if (app::lesson_interrupted()) std::cerr << "headsplit: interrupted; the lesson has ended and every student was told\n";
        return code;
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

}  // namespace

int main(int argc, char** argv) {
    hold_standard_descriptors();
    headsplit::set_process_gl_faults(headsplit::app::gl_faults_from_env());  // a test's, from its environment
    headsplit::catch_ending_signals();
    headsplit::app::check_standard_output();
    return finish_standard_output(run_main(argc, argv));
}
