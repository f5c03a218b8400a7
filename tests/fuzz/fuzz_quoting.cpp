// libFuzzer target over the command lines HeadSplit prints for a user to paste: the handout's
// "rerun it" line (shell_options) and export's "run it with python3 PATH" (shell_path). The
// bytes become argv words for `headsplit trace` (split at NUL only, so a word may hold
// newlines, quotes, $( ), backquotes, any byte). For every configuration the parser takes:
//  1. the printed line is read back by a small POSIX lexer written here from the shell's
//     rules (quotes, backslashes, what is special unquoted), not from shell_word: any
//     character a shell would expand or act on outside quotes is a bug;
//  2. the words it gives, parsed again by the same command-line code, make a configuration
//     whose options are the same (the line reruns the same trace);
//  3. /bin/sh itself reads the line (printf '%s\0' LINE, no PATH, in a scratch folder) and
//     must give the lexer's words, byte for byte.
// The same for each raw word as a path after `python3`.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "headsplit/engine/config.hpp"
#include "headsplit/io/config_options.hpp"
#include "headsplit/formats/files.hpp"
#include "cli/options.hpp"

extern char** environ;

using namespace headsplit;

namespace {

[[noreturn]] void bug(const char* what, const std::string& line) {
    std::fprintf(stderr, "fuzz_quoting: %s in: %s\n", what, line.c_str());
    std::abort();
}

// The words a POSIX shell makes of `line`, or nothing when some character outside quotes
// would make the shell do more than split words (expand, redirect, run, glob, comment).
std::optional<std::vector<std::string>> posix_words(const std::string& line) {
    std::vector<std::string> words;
    std::string cur;
    bool in_word = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (ch == ' ' || ch == '\t') {
            if (in_word) words.push_back(cur);
            cur.clear();
            in_word = false;
            continue;
        }
        in_word = true;
        if (ch == '\'') {  // literal up to the next single quote
            const std::size_t end = line.find('\'', i + 1);
            if (end == std::string::npos) return std::nullopt;
            cur += line.substr(i + 1, end - i - 1);
            i = end;
        } else if (ch == '"') {  // expansions still happen inside double quotes
            for (++i;; ++i) {
                if (i >= line.size()) return std::nullopt;
                const char c = line[i];
                if (c == '"') break;
                if (c == '$' || c == '`') return std::nullopt;
                if (c == '\\' && i + 1 < line.size() && std::strchr("$`\"\\\n", line[i + 1])) {
                    if (line[++i] != '\n') cur += line[i];
                } else {
                    cur += c;
                }
            }
        } else if (ch == '\\') {
            if (i + 1 >= line.size()) return std::nullopt;
            if (line[++i] != '\n') cur += line[i];
        } else if (std::strchr("|&;<>()$`*?[]#~{}!\n\r", ch) != nullptr || ch == '\0') {
            return std::nullopt;  // an operator, an expansion, a glob, a comment, a second line
        } else {
            cur += ch;
        }
    }
    if (in_word) words.push_back(cur);
    return words;
}

// What /bin/sh makes of `line`: each word printed with a NUL after it. An empty environment
// (no PATH: only builtins run) in a scratch folder.
std::vector<std::string> sh_words(const std::string& line) {
    static const std::string scratch = [] {
        char dir[] = "/tmp/fuzz-quoting-XXXXXX";
        if (!mkdtemp(dir)) std::abort();
        static std::string made = dir;
        // Empty unless a line wrote a file, which a check here has already reported. `made`,
        // not `scratch`: `scratch` is destroyed before this handler runs (its destructor is
        // registered after it), `made` after.
        std::atexit([] { rmdir(made.c_str()); });
        return made;
    }();
    int fds[2];
    if (pipe(fds) != 0) std::abort();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addchdir_np(&fa, scratch.c_str());
    const std::string script = "printf '%s\\0' " + line;
    char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), const_cast<char*>(script.c_str()), nullptr};
    char* envp[] = {nullptr};
    pid_t pid;
    if (posix_spawn(&pid, "/bin/sh", &fa, nullptr, argv, envp) != 0) std::abort();
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    std::vector<std::string> words;
    for (std::size_t start = 0, end; (end = out.find('\0', start)) != std::string::npos; start = end + 1)
        words.push_back(out.substr(start, end - start));
    return words;
}

// The configuration `headsplit trace WORDS` would run, or nothing when the parser refuses.
std::optional<Config> parse(const std::vector<std::string>& words) {
    CLI::App cli{"fuzz"};
    CLI::App* trace = cli.add_subcommand("trace");
    app::ConfigOptions opts;
    app::add_config_options(*trace, opts);
    std::vector<const char*> argv{"headsplit", "trace"};
    for (const auto& w : words) argv.push_back(w.c_str());
    try {
        cli.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
        return app::make_config(opts).config;
    } catch (const CLI::Error&) {
    } catch (const ConfigError&) {
    }
    return std::nullopt;
}

// The line must be inert, and /bin/sh must read the same words from it.
std::vector<std::string> checked_words(const std::string& line) {
    const auto words = posix_words(line);
    if (!words) bug("a character a shell would act on", line);
    if (sh_words(line) != *words) bug("/bin/sh reads other words", line);
    return *words;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> words;
    std::string cur;
    for (std::size_t i = 0; i < size && words.size() < 24; ++i) {
        if (data[i] == '\0') {
            words.push_back(cur);
            cur.clear();
        } else {
            cur += static_cast<char>(data[i]);
        }
    }
    if (!cur.empty()) words.push_back(cur);

    // export's line: python3 PATH, for any word as the path: one word, the same file, never
    // read as an option.
    for (const std::string& w : words) {
        const std::string line = "python3 " + shell_path(w);
        const std::vector<std::string> read = checked_words(line);
        if (read.size() != 2 || read[0] != "python3") bug("the line is not python3 and one word", line);
        const std::string& p = read[1];
        if (!p.empty() && p.front() == '-') bug("the path reads as an option", line);
        if (p != w && std::filesystem::path(p).lexically_normal() != std::filesystem::path(w).lexically_normal())
            bug("the path changed", line);
    }

    // the handout's line: the options of whatever configuration these words make.
    const std::optional<Config> c = parse(words);
    if (!c) return 0;
    const std::string line = shell_options(*c);
    if (line.empty()) return 0;  // a preset's own embeddings: no options spell them
    const std::optional<Config> again = parse(checked_words(line));
    if (!again) bug("the printed line is refused by the parser", line);
    if (config_options(*again) != config_options(*c)) bug("the printed line makes another configuration", line);
    return 0;
}
