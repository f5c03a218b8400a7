#pragma once
// Every file HeadSplit writes goes through here: written whole or not at all (a temporary file
// beside it and a rename), or in place where the target is not a file to rename over; the
// signals that end the process clean up what was being made; one path for two outputs refused.
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace headsplit {

// Where a writer hands its text, piece by piece.
using TextSink = std::function<void(const std::string&)>;

// Writes `text` to `path`. A regular file (or a new one) is written through a temporary file
// in the same folder and a rename, so a failure never leaves half a file and the old one
// stays. Anything else is written in place, never renamed over: /dev/stdout, /dev/fd/N and
// /proc/self/fd/N through the descriptor already open (after what was printed to it), a pipe,
// a named pipe, a device or a terminal opened for writing. Throws std::runtime_error with one
// line naming the path (the file size limit by its name); ConfigError for a folder, a socket
// or a symlink loop.
void write_file_atomically(const std::string& path, const std::string& text);
// The same, with the text made piece by piece: `produce` hands each piece to its sink.
void write_file_atomically(const std::string& path, const std::function<void(const TextSink&)>& produce);
// The same for a file only its owner may read (a private key): the temporary file is made
// 0600 before a byte is written and the file stays 0600, whatever the one it replaces had. Only
// a regular file (or a new one) is written; anything else is refused (ConfigError).
void write_private_file_atomically(const std::string& path, const std::string& text);
// Throws the same one line when `path` could not be written there, before any long work;
// leaves nothing behind.
void check_writable(const std::string& path);
// Refuses, in one line naming both options, two outputs (option, path) that name one file:
// the same file by another spelling, through a symlink or a hard link, or the same new path
// (a character device such as /dev/null may take both). Empty paths are skipped.
void refuse_shared_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// Sets the handlers of every signal that ends the process by default (but a fault's): each
// removes the temporary file or folder being written, then ends the process as the signal
// would have. SIGXFSZ from a write past the file size limit makes that write fail instead,
// reported in one line. Called at start, so that no output is ever unguarded; every writer
// here calls it too.
void catch_ending_signals();

// A folder being filled before its files move into place (a handout's pictures): a signal
// that ends the process (as for write_file_atomically's temporary file) removes the files
// named here and the folder. guard_folder("") forgets it; guard_folder_file adds a file's
// name (not its path) as it is written.
void guard_folder(const std::string& folder);
void guard_folder_file(const std::string& name);

// Signals that end the process (those of catch_ending_signals) held back while it lives (a
// handout's pictures move into place all or none), acted on when it ends.
class HoldSignals {
public:
    HoldSignals();
    ~HoldSignals();
    HoldSignals(const HoldSignals&) = delete;
    HoldSignals& operator=(const HoldSignals&) = delete;
};

}  // namespace headsplit
