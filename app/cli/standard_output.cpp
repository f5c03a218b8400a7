#include "cli/standard_output.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <streambuf>

namespace headsplit::app {

namespace {

class CheckedOutput : public std::streambuf {
public:
    CheckedOutput() : by_line_(isatty(STDOUT_FILENO) == 1) { setp(buffer_, buffer_ + sizeof buffer_); }
    int error() const { return error_; }

protected:
    int_type overflow(int_type ch) override {
        send();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
            if (by_line_ && ch == '\n') send();
        }
        return error_ ? traits_type::eof() : traits_type::not_eof(ch);
    }

    std::streamsize xsputn(const char* s, std::streamsize n) override {
        for (std::streamsize done = 0; done < n;) {
            if (pptr() == epptr()) send();
            const std::streamsize room = epptr() - pptr(), take = std::min(room, n - done);
            std::memcpy(pptr(), s + done, static_cast<std::size_t>(take));
            pbump(static_cast<int>(take));
            done += take;
        }
        if (by_line_ && std::memchr(s, '\n', static_cast<std::size_t>(n))) send();
        return n;
    }

    int sync() override {
        send();
        return error_ ? -1 : 0;
    }

private:
    // Writes what is buffered; after a failure the rest is dropped (the run fails anyway).
    void send() {
        const char* at = pbase();
        while (error_ == 0 && at < pptr()) {
            const ssize_t n = ::write(STDOUT_FILENO, at, static_cast<std::size_t>(pptr() - at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) error_ = n < 0 ? errno : EIO;
            else at += n;
        }
        setp(buffer_, buffer_ + sizeof buffer_);
    }

    char buffer_[1 << 13];
    bool by_line_;
    int error_ = 0;
};

// Never destroyed: std::cout flushes through it after main returns.
CheckedOutput& checked() {
    static CheckedOutput* const out = new CheckedOutput;
    return *out;
}

}  // namespace

void check_standard_output() { std::cout.rdbuf(&checked()); }

int standard_output_error() {
    std::cout.flush();
    return checked().error();
}

}  // namespace headsplit::app
