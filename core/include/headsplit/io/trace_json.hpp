#pragma once
// The trace as the versioned "headsplit-trace" JSON (its fields: docs/trace-format.md).
#include <string>

#include "headsplit/engine/trace.hpp"
#include "headsplit/io/writing.hpp"

namespace headsplit {

constexpr int kTraceFormatVersion = 4;  // 2: every tensor has "from" links; 3: axes, rows, keys; 4: pass, dout

// The whole document as text. -inf (masked scores) is written as null.
std::string trace_to_json(const Trace& trace);

// The same text in pieces, handed to `out` one after another (each value array in pieces of
// at most kJsonPieceValues), so that no writer holds the whole document
// (MemoryEstimate::json_bytes).
void write_trace_json(const Trace& trace, const TextSink& out);

}  // namespace headsplit
