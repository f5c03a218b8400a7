#pragma once
// The OPTIONS shared by `trace`, `bench`, `--screenshot` and the GUI: parsed as text and
// checked here, so every bad value gets one line that names it and says what works.
#include <string>

#include <CLI/CLI.hpp>

#include "headsplit/engine/config.hpp"
#include "headsplit/engine/engine.hpp"

namespace headsplit::app {

struct ConfigOptions {
    std::string preset = "cat-sleeps";
    std::vector<std::string> texts;     // --text, once per sentence of the batch
    std::vector<std::string> contexts;  // --context, once (shared) or once per sentence
    std::string tokens, d_in, d_out, heads, seed, dropout, mode, block, backend, memory_budget, time_budget, weights, layer;
    std::string kv_heads, context_tokens, d_context, decode_from, dout;
    bool causal = true;
    bool backward = false;
    bool no_out_proj = false;
    bool scale_first = false;
    bool qkv_bias = false;
    CLI::Option* text_option = nullptr;    // tells --text "" from no --text
    CLI::Option* causal_option = nullptr;  // tells --causal given from the default
};

// Adds --preset --text --tokens --d-in --d-out --heads --kv-heads --context --context-tokens
// --d-context --decode-from --seed --causal/--no-causal --mode --block --backend --dropout
// --no-out-proj --scale-first --qkv-bias --backward --dout --memory-budget --time-budget to `cmd`.
void add_config_options(CLI::App& cmd, ConfigOptions& o);
// A progress bar on stderr when it is a terminal ("[####....] 3/8 what"), wiped at the end;
// nothing otherwise.
void progress(std::int64_t done, std::int64_t total, const std::string& what);

// Refuses an empty value of an option that names a file or a folder (`--json ""` would
// otherwise write nothing and say nothing); returns the option.
CLI::Option* needs_a_path(CLI::Option* option);

// The Config they describe (the preset, then each option given on top), through the one
// validation entry, check_config(), which counts the words of a narrated trace. Throws
// ConfigError.
CheckedConfig make_config(const ConfigOptions& o);

// Refuses --backward where `where` (the window, export, handout, bench) does not show the
// backward pass yet: one line that says where it does (headsplit trace --backward).
void refuse_backward(const Config& c, const std::string& where);

// A parse error (not a call for help) in one line, CLI11's words made plain ("--heads needs a
// value"), ending with `hint`.
std::string command_line_problem(const CLI::ParseError& e, const std::string& hint);

// Text with its line breaks made spaces and no trailing space: the user gets one line.
std::string one_line(std::string s);

// Refuses a value with a blank (a space, a tab, a line break) before or after it, as every
// number, size and scale of the command line is: one line that shows the value quoted, so the
// blank can be seen, and the value without it. Blanks are refused rather than trimmed: a
// value read from a script with a stray space is more likely a mistake than meant.
void refuse_blanks(const char* name, const std::string& value);

// Parses "--name value" as a real number; throws ConfigError naming it.
double parse_real(const char* name, const std::string& value);

// Parses "--name value" as a whole number in [lo, hi]; throws ConfigError naming it.
std::int64_t parse_count(const char* name, const std::string& value, std::int64_t lo, std::int64_t hi);

}  // namespace headsplit::app
