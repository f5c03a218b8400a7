#pragma once
// The take-home script: one trace as a standalone Python program, PyTorch or NumPy only.
// It holds the trace's inputs and weights, runs the same steps in the same order and mode,
// prints each step's row as `headsplit trace` does, and at the end checks every value it
// computed against the trace's own (embedded too), within kScriptTolerance.
#include <cstdint>
#include <string>

#include "headsplit/engine/trace.hpp"

namespace headsplit {

enum class ScriptKind { PyTorch, NumPy };
const char* script_kind_name(ScriptKind kind);  // "PyTorch" | "NumPy"

// Absolute tolerance of the script's check. The script and the engine are both float32 but
// add the dot products in different orders; at the sizes a script holds (sums of at most a
// few hundred terms of magnitude about 1) that moves values by about 1e-7 .. 1e-6.
constexpr double kScriptTolerance = 1e-5;

// The most values a script embeds (inputs, weights, the dropout mask and every tensor of
// every step), about 3 MB of Python: the teaching sizes fit many times over, gpt2-small's
// weights alone (2.4 million) do not.
constexpr std::int64_t kMaxScriptValues = 250000;

// How many values a script of `trace` embeds, counted from shapes: plan()'s trace (no
// values) gives the count before anything runs.
std::int64_t script_values(const Trace& trace);

// Throws ConfigError, one line with the count, the limit and what would fit, when `trace`
// is too large for a script.
void check_script_size(const Trace& trace);

// The script's text. `trace` must be a recorded run (values in every tensor; a plan() has
// none: std::invalid_argument). Throws ConfigError as check_script_size() does.
std::string export_script(const Trace& trace, ScriptKind kind);

}  // namespace headsplit
