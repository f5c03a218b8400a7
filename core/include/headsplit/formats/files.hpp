#pragma once
// What every reader of a file the user names does first: a checkpoint's config.json and
// model.safetensors, a vocabulary. Only a regular file is opened (a named pipe could block
// forever, a device such as /dev/zero never ends), and its size is checked before a byte is
// read.
#include <cstdint>
#include <string>

namespace headsplit {

// The size of the regular file at `path` (symlinks followed). ConfigError, one line that
// names the path, otherwise: not found, permission denied, a symlink loop, a folder, a named
// pipe, a device or a socket, or larger than `max_bytes`. `hint` ends the line (what the file
// should be, e.g. "--weights takes a Hugging Face GPT-2 folder").
std::uint64_t check_readable_file(const std::string& path, std::uint64_t max_bytes, const std::string& hint);

// HeadSplit's own folder among the user's: $VARIABLE/headsplit when the XDG variable holds an
// absolute path (XDG_CONFIG_HOME, XDG_DATA_HOME; a relative one is ignored, as the XDG Base
// Directory spec says), else $HOME/HOME_PART/headsplit (".config", ".local/share") when HOME
// is absolute. "" otherwise (a relative path would put the user's files under whatever folder
// the program runs in), and `why`, when given, says so in words, naming HOME's value raw (the
// caller escapes it for a terminal). Nothing is made here.
std::string user_folder(const char* xdg_variable, const char* home_part, std::string* why = nullptr);

// One word for a POSIX shell: as it is when it holds only characters no shell treats
// specially, else in single quotes (each ' inside closed, escaped and reopened), so that a
// sentence or a path such as say "hi" $(rm -rf ~) is pasted back as text and runs nothing.
// Every command line HeadSplit prints quotes its words with it.
std::string shell_word(const std::string& w);

// A file's path as one shell word (shell_word) that a command cannot take for an option: a
// path that starts with "-" gets "./" before it ("python3 -mthis" would run Python's module).
std::string shell_path(const std::string& path);

}  // namespace headsplit
