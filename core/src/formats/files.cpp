#include "headsplit/formats/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "headsplit/engine/config.hpp"

namespace headsplit {

namespace {

std::string why_not(int err) {
    switch (err) {
        case ENOENT: return "not found";
        case EACCES: return "permission denied (the file, or a folder on its path)";
        case ELOOP: return "a symlink loop (the link points back to itself)";
        case ENOTDIR: return "a part of the path is a file, not a folder";
        case ENAMETOOLONG: return "the path is too long";
        default: return std::strerror(err);
    }
}

}  // namespace

std::string user_folder(const char* xdg_variable, const char* home_part, std::string* why) {
    // The XDG Base Directory spec: a relative path in an XDG variable is invalid and ignored.
    if (const char* xdg = std::getenv(xdg_variable); xdg && *xdg == '/') return std::string(xdg) + "/headsplit";
    const char* home = std::getenv("HOME");
    if (home && *home == '/') return std::string(home) + "/" + home_part + "/headsplit";
    if (why)
        *why = home && *home ? "HOME=" + std::string(home) + " is not an absolute path, nor is " + xdg_variable +
                                   " set to one; set " + xdg_variable + " to a folder such as /home/NAME/" + home_part
                             : std::string("neither ") + xdg_variable + " nor HOME is set to an absolute path; set " +
                                   xdg_variable + " to a folder you can write to";
    return "";
}

std::uint64_t check_readable_file(const std::string& path, std::uint64_t max_bytes, const std::string& hint) {
    const std::string tail = hint.empty() ? "" : "; " + hint;
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) throw ConfigError(path + ": " + why_not(errno) + tail);
    const char* kind = S_ISDIR(info.st_mode)    ? "a folder"
                       : S_ISFIFO(info.st_mode) ? "a named pipe (reading it could wait forever)"
                       : S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) ? "a device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                       : nullptr;
    if (kind || !S_ISREG(info.st_mode)) throw ConfigError(path + ": " + (kind ? kind : "not a regular file") + ", not a file" + tail);
    if (access(path.c_str(), R_OK) != 0) throw ConfigError(path + ": " + why_not(errno) + tail);
    const auto size = static_cast<std::uint64_t>(info.st_size);
    if (size > max_bytes)
        throw ConfigError(path + ": " + human_bytes(static_cast<double>(size)) + ", more than the " +
                          human_bytes(static_cast<double>(max_bytes)) + " such a file may have" + tail);
    return size;
}

std::string shell_word(const std::string& w) {
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("_-.,:/=+@%", ch) != nullptr;
    });
    if (plain) return w;
    std::string out = "'";
    for (char ch : w) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::string shell_path(const std::string& path) {
    return shell_word(!path.empty() && path.front() == '-' ? "./" + path : path);
}

}  // namespace headsplit
