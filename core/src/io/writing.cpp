#include "headsplit/io/writing.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <mutex>

#include "headsplit/engine/config.hpp"

namespace headsplit {

namespace {

namespace fs = std::filesystem;

// The descriptor a path names when it is one this process already has open (/dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N with this PID); -1 otherwise. Such
// a path is written through the descriptor: opening it again would start at the file's first
// byte (over what standard output already holds), and renaming onto it would replace the
// file the shell opened.
int open_descriptor(const fs::path& p) {
    const std::string s = p.lexically_normal().string();
    if (s == "/dev/stdout") return 1;
    if (s == "/dev/stderr") return 2;
    for (const std::string& prefix :
         {std::string("/dev/fd/"), std::string("/proc/self/fd/"), "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
        if (s.size() <= prefix.size() || s.size() > prefix.size() + 9 || s.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string digits = s.substr(prefix.size());
        if (digits.find_first_not_of("0123456789") == std::string::npos) return std::stoi(digits);
    }
    return -1;
}

// Where the bytes for `path` go. A regular file (or none yet) is replaced through a
// temporary file and a rename: `file` is a symlink's target (the link stays a link). Anything
// else is written in place (`direct`): a descriptor already open (`fd`), or a named pipe, a
// device or a terminal opened for writing, since a rename would put a file where it was.
struct Target {
    std::string file;
    int fd = -1;
    bool direct = false;
};

Target output_target(const std::string& path) {
    std::error_code ec;
    fs::path p(path);
    for (int hops = 0;; ++hops) {
        if (const int fd = open_descriptor(p); fd >= 0) return {p.string(), fd, true};
        if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
        if (hops == 40) throw ConfigError(path + ": a symlink loop (the link leads back to itself); give a file name");
        const fs::path target = fs::read_symlink(p, ec);
        if (ec) throw ConfigError(path + ": a symlink that cannot be read (" + ec.message() + "); give a file name");
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    const fs::file_status st = fs::status(p, ec);
    if (fs::is_directory(st)) throw ConfigError(path + " is a folder; give a file name, e.g. " + (fs::path(path) / "out").string());
    if (fs::is_socket(st)) throw ConfigError(path + " is a socket, which cannot be opened as a file; give a file's name");
    return {p.string(), -1, fs::exists(st) && !fs::is_regular_file(st)};
}

// One line for a write that failed with `err`: the file size limit by its name.
std::string write_failure(const std::string& path, int err, const std::string& tail) {
    if (err == EFBIG) return "the file size limit (ulimit -f) was reached writing " + path + tail;
    return "cannot write " + path + ": " + std::strerror(err) + tail;
}

// The temporary file being written now, removed by a signal that ends the process (its
// default action ends it: see kEndingSignals) before it ends (a signal handler may only
// call async-signal-safe functions: unlink, rmdir, signal, raise).
char g_temporary[4096];

// A folder being filled (guard_folder), and the names of the files in it, each followed by a
// NUL; g_names_used grows only after a name's bytes are in.
char g_folder[4096];
char g_names[1 << 16];
volatile std::sig_atomic_t g_names_used = 0;

// Every signal whose default action ends the process, but those a fault raises (SIGSEGV,
// SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP) and the real-time ones: the terminal
// closed (SIGHUP), Ctrl-C and Ctrl-\, kill, timers (SIGALRM, SIGVTALRM, SIGPROF), the CPU
// limit (SIGXCPU), the user's own (SIGUSR1, SIGUSR2), a reader gone (SIGPIPE), and SIGIO,
// SIGPWR, SIGSTKFLT. SIGXFSZ has a handler of its own (file_size_limit).
constexpr int kEndingSignals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
                                  SIGUSR1, SIGUSR2, SIGPIPE, SIGIO,   SIGPWR,  SIGSTKFLT};

// While a HoldSignals lives the signal is only noted (whichever thread it reaches: a mask
// would hold it back from one thread only), and raised again when it ends. Atomics (lock-free
// ones are safe in a handler), sequentially consistent: the hold's end stores g_holding then
// reads g_held, a handler on another thread stores g_held then reads g_holding again, and at
// least one of the two sees the other's store, so the signal is never lost between them.
std::atomic<int> g_holding{0}, g_held{0};
static_assert(std::atomic<int>::is_always_lock_free);

void remove_temporary_and_die(int sig) {
    if (g_holding.load()) {
        g_held.store(sig);
        if (g_holding.load()) return;  // raised when the hold ends
        // The hold ended meanwhile, perhaps before its end looked at g_held: carry on here.
    }
    if (g_temporary[0]) unlink(g_temporary);
    if (g_folder[0]) {
        char path[sizeof g_folder + 256];
        for (std::sig_atomic_t i = 0; i < g_names_used;) {
            std::size_t n = 0;
            for (const char* p = g_folder; *p && n + 1 < sizeof path; ++p) path[n++] = *p;
            if (n + 1 < sizeof path) path[n++] = '/';
            for (; g_names[i] && n + 1 < sizeof path; ++i) path[n++] = g_names[i];
            for (; g_names[i]; ++i) {
            }
            ++i;  // the NUL
            path[n] = '\0';
            unlink(path);
        }
        rmdir(g_folder);
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// SIGXFSZ from the kernel (si_pid is the writer's own) comes with a write past the file size
// limit (ulimit -f); with a handler that returns, the write fails with EFBIG instead of
// ending the process, and the failure is reported and cleaned up like any other, naming the
// limit (write_failure). Sent by another process, it ends this one as the others do.
void file_size_limit(int sig, siginfo_t* info, void*) {
    if (info && info->si_code == SI_USER && info->si_pid == ::getpid()) return;
    remove_temporary_and_die(sig);
}

// Sets `handler` for `sig` unless the signal is ignored (it stays ignored).
void set_handler(int sig, void (*handler)(int), void (*action)(int, siginfo_t*, void*)) {
    struct sigaction was {}, now {};
    if (sigaction(sig, nullptr, &was) != 0 || was.sa_handler == SIG_IGN) return;
    sigemptyset(&now.sa_mask);
    now.sa_flags = SA_RESTART | (action ? SA_SIGINFO : 0);
    if (action) now.sa_sigaction = action;
    else now.sa_handler = handler;
    sigaction(sig, &now, nullptr);
}

// The handlers are set once.
void guard_signals() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (int sig : kEndingSignals) set_handler(sig, remove_temporary_and_die, nullptr);
        set_handler(SIGXFSZ, nullptr, file_size_limit);
    });
}

// Marks `tmp` as the file to remove on a signal ("" clears it).
void guard_temporary(const std::string& tmp) {
    guard_signals();
    std::snprintf(g_temporary, sizeof g_temporary, "%s", tmp.size() < sizeof g_temporary ? tmp.c_str() : "");
}

// The temporary name for `target`, try `attempt`: beside it, "NAME.tmp.PID" (".N" after a
// name already taken), with NAME cut short where the whole would pass NAME_MAX bytes, so that
// a legal name of up to NAME_MAX bytes can be written.
std::string temporary_name(const std::string& target, int attempt) {
    const std::string suffix = ".tmp." + std::to_string(::getpid()) + (attempt ? "." + std::to_string(attempt) : "");
    const auto slash = target.rfind('/');
    const std::string folder = slash == std::string::npos ? "" : target.substr(0, slash + 1);
    std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
    if (name.size() + suffix.size() > NAME_MAX) name.resize(NAME_MAX - suffix.size());
    return folder + name + suffix;
}

// A new temporary file for `target` (never one that is there already: O_EXCL), guarded from
// the moment it exists, made with `mode` (less the umask); its name in `tmp`.
std::FILE* open_temporary(const std::string& path, const std::string& target, std::string* tmp, mode_t mode = 0666) {
    for (int attempt = 0;; ++attempt) {
        *tmp = temporary_name(target, attempt);
        guard_temporary(*tmp);
        const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0 && errno == EEXIST && attempt < 100) continue;
        std::FILE* f = fd < 0 ? nullptr : fdopen(fd, "wb");
        if (f) return f;
        const int err = errno;
        if (fd >= 0) ::close(fd), ::unlink(tmp->c_str());
        guard_temporary("");
        throw std::runtime_error(write_failure(path, err, "; choose a path in a folder you can write to"));
    }
}

// Writes all of `piece` to `fd`; the errno of the write that failed, else 0.
int write_all(int fd, const std::string& piece) {
    for (std::size_t done = 0; done < piece.size();) {
        const ssize_t n = ::write(fd, piece.data() + done, piece.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

// A descriptor open for writing, or the reason it is not.
void check_open_for_writing(const std::string& path, int fd) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
        throw std::runtime_error("cannot write " + path + ": descriptor " + std::to_string(fd) +
                                 (fd == 1 ? " (standard output)" : fd == 2 ? " (standard error)" : "") +
                                 " is not open for writing; redirect it to a file");
}

// Writes in place, in order after what this process has printed to the same descriptor.
void write_directly(const Target& t, const std::string& path, const std::function<void(const TextSink&)>& produce) {
    int fd = t.fd;
    if (fd >= 0) {
        check_open_for_writing(path, fd);
        if (fd == 1) std::cout.flush();  // what was printed before comes first
        std::fflush(fd == 2 ? stderr : stdout);
    } else {
        fd = ::open(t.file.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error(write_failure(path, errno, ""));
    }
    struct Failed {};
    int err = 0;
    try {
        produce([&](const std::string& piece) {
            if ((err = write_all(fd, piece)) != 0) throw Failed{};
        });
    } catch (const Failed&) {
    } catch (...) {
        if (t.fd < 0) ::close(fd);
        throw;
    }
    if (t.fd < 0 && ::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    if (err) throw std::runtime_error(write_failure(path, err, ""));
}

// What a path names for two outputs to be told apart: its device and inode when it exists
// (hard links and every spelling of it alike), else its absolute path with the symlinks
// followed.
std::string output_identity(const std::string& path) {
    const Target t = output_target(path);
    struct stat info {};
    if (t.fd >= 0 ? fstat(t.fd, &info) == 0 : ::stat(t.file.c_str(), &info) == 0)
        return "inode " + std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino);
    std::error_code ec;
    return "path " + fs::weakly_canonical(fs::absolute(t.file, ec), ec).string();
}

}  // namespace

void catch_ending_signals() { guard_signals(); }

void refuse_shared_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
    std::vector<std::string> ids;
    for (const auto& [option, path] : outputs) ids.push_back(path.empty() ? "" : output_identity(path));
    for (std::size_t i = 0; i < outputs.size(); ++i)
        for (std::size_t j = i + 1; j < outputs.size(); ++j) {
            if (ids[i].empty() || ids[i] != ids[j]) continue;
            struct stat info {};
            if (::stat(outputs[i].second.c_str(), &info) == 0 && S_ISCHR(info.st_mode)) continue;  // /dev/null, a terminal
            throw ConfigError(outputs[i].first + " and " + outputs[j].first + " both name " +
                              (outputs[i].second == outputs[j].second ? outputs[i].second
                                                                      : outputs[i].second + " (as " + outputs[j].second + ")") +
                              "; give each output a file of its own");
        }
}

void guard_folder(const std::string& folder) {
    guard_signals();
    g_names_used = 0;
    std::snprintf(g_folder, sizeof g_folder, "%s", folder.size() < sizeof g_folder ? folder.c_str() : "");
}

void guard_folder_file(const std::string& name) {
    const std::size_t at = static_cast<std::size_t>(g_names_used);
    if (!g_folder[0] || name.empty() || at + name.size() + 1 > sizeof g_names) return;
    std::memcpy(g_names + at, name.c_str(), name.size() + 1);
    g_names_used = static_cast<std::sig_atomic_t>(at + name.size() + 1);
}

HoldSignals::HoldSignals() {
    guard_signals();
    g_holding.store(1);
}

HoldSignals::~HoldSignals() {
    g_holding.store(0);
    if (const int sig = g_held.load()) std::raise(sig);
}

void check_writable(const std::string& path) {
    const Target target = output_target(path);
    if (target.fd >= 0) return check_open_for_writing(path, target.fd);
    if (target.direct) {
        if (access(target.file.c_str(), W_OK) != 0) throw std::runtime_error(write_failure(path, errno, ""));
        return;
    }
    std::string tmp;
    std::fclose(open_temporary(path, target.file, &tmp));
    std::remove(tmp.c_str());
    guard_temporary("");
}

void write_file_atomically(const std::string& path, const std::string& text) {
    write_file_atomically(path, [&](const TextSink& out) { out(text); });
}

namespace {

// Through a temporary file beside `target` and a rename. `owner_only`: the temporary file is
// made 0600 and stays so, whatever the file it replaces had.
void replace_file(const std::string& path, const std::string& target, const std::function<void(const TextSink&)>& produce,
                  bool owner_only) {
    std::string tmp;
    std::FILE* f = open_temporary(path, target, &tmp, owner_only ? 0600 : 0666);
    // Written, flushed and synced before the rename: a full disk is found here, and what was
    // at `path` stays as it was. The first piece that fails stops the rest.
    struct Failed {};
    bool ok = true;
    int err = 0;
    try {
        produce([&](const std::string& piece) {
            if (std::fwrite(piece.data(), 1, piece.size(), f) != piece.size()) {
                err = errno;
                throw Failed{};
            }
        });
    } catch (const Failed&) {
        ok = false;
    } catch (...) {  // the producer's own failure (out of memory): nothing is left behind
        std::fclose(f);
        std::remove(tmp.c_str());
        guard_temporary("");
        throw;
    }
    if (ok && std::fflush(f) != 0) ok = false, err = errno;
    // The file it replaces keeps its permissions (a private file stays private, a script stays
    // executable; not set-id bits); a new one gets the usual ones (0666 less the umask). Where the
    // file system will not set them (vfat, some FUSE mounts) the write goes on.
    struct stat before {}, now {};
    if (ok && !owner_only && ::stat(target.c_str(), &before) == 0 && fstat(fileno(f), &now) == 0 &&
        (before.st_mode & 0777) != (now.st_mode & 0777))
        (void)fchmod(fileno(f), before.st_mode & 0777);
    if (ok && fsync(fileno(f)) != 0 && errno != EINVAL) ok = false, err = errno;  // EINVAL: a file system that does not sync
    if (std::fclose(f) != 0 && ok) ok = false, err = errno;
    if (ok && std::rename(tmp.c_str(), target.c_str()) != 0) ok = false, err = errno;
    if (!ok) std::remove(tmp.c_str());
    guard_temporary("");
    if (!ok) throw std::runtime_error(write_failure(path, err, "; nothing there was replaced"));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(const TextSink&)>& produce) {
    const Target t = output_target(path);
    if (t.direct) return write_directly(t, path, produce);
    replace_file(path, t.file, produce, false);
}

void write_private_file_atomically(const std::string& path, const std::string& text) {
    const Target t = output_target(path);
    if (t.direct)
        throw ConfigError("cannot write " + path + ": a private file is kept only as a regular file; remove what is there");
    replace_file(path, t.file, [&](const TextSink& out) { out(text); }, true);
}

}  // namespace headsplit
