#pragma once
// The trace as the versioned "headsplit-trace" JSON (its fields: docs/trace-format.md).
#include <functional>
#include <string>

#include "headsplit/engine/trace.hpp"

namespace headsplit {

constexpr int kTraceFormatVersion = 3;  // 2: every tensor has "from" links; 3: axes, rows, keys

// The whole document as text. -inf (masked scores) is written as null.
std::string trace_to_json(const Trace& trace);

// The same text in pieces, handed to `out` one after another (each value array in pieces of
// at most kJsonPieceValues), so that no writer holds the whole document
// (MemoryEstimate::json_bytes).
using TextSink = std::function<void(const std::string&)>;
void write_trace_json(const Trace& trace, const TextSink& out);

// Writes `text` to `path` through a temporary file in the same folder and a rename, so a
// failure never leaves half a file. Throws std::runtime_error with one line naming the path.
void write_file_atomically(const std::string& path, const std::string& text);
// The same, with the text made piece by piece: `produce` hands each piece to its sink.
void write_file_atomically(const std::string& path, const std::function<void(const TextSink&)>& produce);
// Throws the same one line when `path` could not be written there, before any long work;
// leaves nothing behind.
void check_writable(const std::string& path);

// A folder being filled before its files move into place (a handout's pictures): a signal
// that ends the process (as for write_file_atomically's temporary file) removes the files
// named here and the folder. guard_folder("") forgets it; guard_folder_file adds a file's
// name (not its path) as it is written.
void guard_folder(const std::string& folder);
void guard_folder_file(const std::string& name);

// Signals that end the process (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT) held back while it
// lives (a handout's pictures move into place all or none), acted on when it ends.
class HoldSignals {
public:
    HoldSignals();
    ~HoldSignals();
    HoldSignals(const HoldSignals&) = delete;
    HoldSignals& operator=(const HoldSignals&) = delete;
};

}  // namespace headsplit
