#pragma once
// The lesson's own TLS certificate for `headsplit lesson --https`: a self-signed one (EC P-256,
// SHA-256, valid kCertificateDays) that names the machine's addresses, kept in the user's data
// folder and used again while it still fits. Students' browsers warn about it once; the
// fingerprint printed beside it lets the teacher say which one to accept.
//
// The files are read as untrusted: each at most kMaxCertificateFileBytes, parsed by OpenSSL,
// and taken only when the certificate and the key parse, belong together, are in their
// validity (a day to spare), name every wanted address and the key is readable by its owner
// only. Anything else is replaced, and why is said in one line.
#include <cstdint>
#include <string>
#include <vector>

namespace headsplit::lesson {

inline constexpr int kCertificateDays = 825;
inline constexpr std::uint64_t kMaxCertificateFileBytes = 64 * 1024;

struct Certificate {
    std::string cert_path, key_path;  // PEM files
    std::string fingerprint;          // SHA-256 of the certificate (DER), "AB:CD:..."
    bool made = false;                // made now rather than kept from an earlier lesson
    std::string replaced;             // why the one that was there was not kept; "" when none was
};

// The folder the certificate is kept in: the user's data folder for HeadSplit
// (XDG_DATA_HOME/headsplit, else ~/.local/share/headsplit; user_folder's rules). Neither set
// to an absolute path: std::runtime_error, one line that says which and what would work.
std::string certificate_folder();

// The certificate in `folder` (made, with its parents, when missing) that names every one of
// `names` (IPv4 or IPv6 addresses, or host names): the one there when it fits, else a new one
// naming them all. Throws std::runtime_error with one line naming the folder or file and what
// would work when it cannot be written.
Certificate lesson_certificate(const std::string& folder, const std::vector<std::string>& names);

// The names a PEM certificate's SubjectAltName holds, addresses as text ("127.0.0.1", "::1")
// and host names as they are; empty when the text is no certificate.
std::vector<std::string> certificate_names(const std::string& pem);

}  // namespace headsplit::lesson
