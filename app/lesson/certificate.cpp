#include "lesson/certificate.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "headsplit/formats/files.hpp"
#include "headsplit/io/terminal.hpp"
#include "headsplit/io/writing.hpp"

namespace headsplit::lesson {

namespace {

// OpenSSL's objects, freed by their own functions.
struct FreeBio { void operator()(BIO* b) const { BIO_free(b); } };
struct FreeKey { void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); } };
struct FreeKeyContext { void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); } };
struct FreeCert { void operator()(X509* x) const { X509_free(x); } };
struct FreeNames { void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); } };
struct FreeBignum { void operator()(BIGNUM* b) const { BN_free(b); } };
struct FreeExtension { void operator()(X509_EXTENSION* e) const { X509_EXTENSION_free(e); } };
using Bio = std::unique_ptr<BIO, FreeBio>;
using Key = std::unique_ptr<EVP_PKEY, FreeKey>;
using KeyContext = std::unique_ptr<EVP_PKEY_CTX, FreeKeyContext>;
using Cert = std::unique_ptr<X509, FreeCert>;
using Names = std::unique_ptr<GENERAL_NAMES, FreeNames>;
using Bignum = std::unique_ptr<BIGNUM, FreeBignum>;
using Extension = std::unique_ptr<X509_EXTENSION, FreeExtension>;

constexpr const char* kCertName = "lesson-https-cert.pem";
constexpr const char* kKeyName = "lesson-https-key.pem";
// The names every lesson certificate holds besides the machine's addresses.
constexpr const char* kAlwaysNamed[] = {"127.0.0.1", "::1", "localhost"};

// OpenSSL's failure as an exception; its error queue is left empty for the next caller
// (libwebsockets reads it when it loads the files).
[[noreturn]] void openssl_failed(const std::string& what) {
    const unsigned long code = ERR_get_error();
    char text[256] = "";
    if (code) ERR_error_string_n(code, text, sizeof text);
    ERR_clear_error();
    throw std::runtime_error("cannot make the lesson's certificate (" + what + (code ? std::string(": ") + text : "") + ")");
}

// A key file that asks for a pass phrase is not the lesson's: it is never prompted for.
int no_pass_phrase(char*, int, int, void*) { return -1; }

bool is_address(const std::string& name) {
    unsigned char buf[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, name.c_str(), buf) == 1 || ::inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

std::vector<std::string> wanted_names(const std::vector<std::string>& names) {
    std::vector<std::string> out(std::begin(kAlwaysNamed), std::end(kAlwaysNamed));
    for (const std::string& n : names)
        if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    return out;
}

std::string pem_of(const std::function<int(BIO*)>& write) {
    Bio bio(BIO_new(BIO_s_mem()));
    if (!bio || write(bio.get()) != 1) openssl_failed("writing PEM");
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(std::max(0L, n)));
}

void add_extension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
    Extension ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) openssl_failed(std::string("adding ") + OBJ_nid2sn(nid));
}

struct Made {
    std::string cert_pem, key_pem;
};

// A new EC P-256 key and a certificate for it: a server's extensions, SubjectAltName holding
// `names`, signed with the key itself (SHA-256); both as PEM.
Made make_certificate(const std::vector<std::string>& names) {
    KeyContext kctx(EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nullptr));
    EVP_PKEY* raw_key = nullptr;
    if (!kctx || EVP_PKEY_keygen_init(kctx.get()) != 1 ||
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid(kctx.get(), NID_X9_62_prime256v1) != 1 ||
        EVP_PKEY_keygen(kctx.get(), &raw_key) != 1)
        openssl_failed("an EC P-256 key");
    Key key(raw_key);

    Cert cert(X509_new());
    Bignum serial(BN_new());
    if (!cert || !serial || X509_set_version(cert.get(), 2) != 1 || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
        !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())))
        openssl_failed("a serial number");
    // An hour back, for a student's clock that is a little behind.
    if (!X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60) ||
        !X509_time_adj_ex(X509_getm_notAfter(cert.get()), kCertificateDays, 0, nullptr))
        openssl_failed("its validity");
    X509_NAME* subject = X509_get_subject_name(cert.get());
    const auto* cn = reinterpret_cast<const unsigned char*>("HeadSplit lesson");
    if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, cn, -1, -1, 0) != 1 ||
        X509_set_issuer_name(cert.get(), subject) != 1 || X509_set_pubkey(cert.get(), key.get()) != 1)
        openssl_failed("its names");

    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
    add_extension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), &ctx, NID_key_usage, "critical,digitalSignature");
    add_extension(cert.get(), &ctx, NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
    Names alt(GENERAL_NAMES_new());
    if (!alt) openssl_failed("SubjectAltName");
    for (const std::string& n : names) {
        GENERAL_NAME* g = nullptr;
        if (is_address(n)) {
            ASN1_OCTET_STRING* ip = a2i_IPADDRESS(n.c_str());
            if (ip) g = GENERAL_NAME_new();
            if (g) GENERAL_NAME_set0_value(g, GEN_IPADD, ip);
            else ASN1_OCTET_STRING_free(ip);
        } else {
            ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
            if (dns && ASN1_STRING_set(dns, n.data(), static_cast<int>(n.size())) == 1) g = GENERAL_NAME_new();
            if (g) GENERAL_NAME_set0_value(g, GEN_DNS, dns);
            else ASN1_IA5STRING_free(dns);
        }
        if (!g || sk_GENERAL_NAME_push(alt.get(), g) <= 0) {
            GENERAL_NAME_free(g);
            openssl_failed("the name " + n);
        }
    }
    if (X509_add1_ext_i2d(cert.get(), NID_subject_alt_name, alt.get(), 0, X509V3_ADD_DEFAULT) != 1)
        openssl_failed("SubjectAltName");

    if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) openssl_failed("signing");

    Made out;
    out.cert_pem = pem_of([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
    out.key_pem = pem_of([&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
    return out;
}

Cert read_cert(const std::string& pem) {
    Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    Cert cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, no_pass_phrase, nullptr) : nullptr);
    ERR_clear_error();
    return cert;
}

std::string fingerprint_of(X509* cert) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (X509_digest(cert, EVP_sha256(), md, &n) != 1) openssl_failed("its fingerprint");
    std::string out;
    char byte[4];
    for (unsigned int i = 0; i < n; ++i) {
        std::snprintf(byte, sizeof byte, "%02X", md[i]);
        if (i) out += ':';
        out += byte;
    }
    return out;
}

// The file's text, or why it cannot be had (the size is checked before a byte is read).
std::string read_small_file(const std::string& path, std::string* why) {
    try {
        check_readable_file(path, kMaxCertificateFileBytes, "");
    } catch (const std::exception& e) {
        *why = e.what();
        return {};
    }
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) *why = path + ": cannot be read";
    else if (text.size() > kMaxCertificateFileBytes) *why = path + ": grew past its size limit while it was read";
    return text;
}

// Why the pair in the files cannot serve `names` now; "" when it can (its fingerprint then in
// `fingerprint`).
std::string why_not_kept(const std::string& cert_path, const std::string& key_path, const std::vector<std::string>& names,
                         std::string* fingerprint) {
    std::string why;
    const std::string cert_pem = read_small_file(cert_path, &why);
    if (!why.empty()) return why;
    const std::string key_pem = read_small_file(key_path, &why);
    if (!why.empty()) return why;
    struct stat key_info {};
    if (::stat(key_path.c_str(), &key_info) != 0) return key_path + ": cannot be read";
    if (key_info.st_mode & 077) return key_path + " could be read by other users";

    const Cert cert = read_cert(cert_pem);
    if (!cert) return cert_path + " holds no PEM certificate";
    Bio bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
    const Key key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, no_pass_phrase, nullptr) : nullptr);
    ERR_clear_error();
    if (!key) return key_path + " holds no PEM private key without a pass phrase";
    const bool pair = X509_check_private_key(cert.get(), key.get()) == 1;
    ERR_clear_error();
    if (!pair) return key_path + " is not the key of " + cert_path;

    std::time_t spare = std::time(nullptr) + 24 * 60 * 60;
    if (X509_cmp_current_time(X509_get0_notBefore(cert.get())) >= 0) return cert_path + " is not valid yet";
    if (X509_cmp_time(X509_get0_notAfter(cert.get()), &spare) <= 0)
        return cert_path + " has expired or expires within a day";
    for (const std::string& n : names) {
        const int covered = is_address(n) ? X509_check_ip_asc(cert.get(), n.c_str(), 0)
                                          : X509_check_host(cert.get(), n.c_str(), n.size(), 0, nullptr);
        ERR_clear_error();
        if (covered != 1) return cert_path + " does not name " + n;
    }
    *fingerprint = fingerprint_of(cert.get());
    return {};
}

bool exists(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0 || errno != ENOENT;
}

// `text` as the folder's own file `path`: a new regular file of `mode`, whatever was there (a
// remade certificate does not take the mode of the one it replaces). A symlink is replaced
// itself, never written through to the file it names elsewhere; anything else that is not a
// regular file (a named pipe, whose writer would wait for a reader forever) is refused.
void keep_file(const std::string& path, const std::string& text, mode_t mode) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode) && ::unlink(path.c_str()) != 0)
        throw std::runtime_error("cannot replace the symlink " + path + ": " + std::strerror(errno));
    write_private_file_atomically(path, text);  // made 0600 before a byte is written
    if (mode != 0600 && ::chmod(path.c_str(), mode) != 0)
        throw std::runtime_error("cannot make " + path + " readable: " + std::strerror(errno));
}

[[noreturn]] void cannot_keep(const std::string& folder, const std::string& why) {
    throw std::runtime_error("cannot keep the lesson's certificate in " + folder + " (" + why +
                             "); set XDG_DATA_HOME to a folder you can write to");
}

}  // namespace

std::string certificate_folder() {
    std::string why;
    const std::string folder = user_folder("XDG_DATA_HOME", ".local/share", &why);
    if (folder.empty()) throw std::runtime_error("no folder for the lesson's certificate: " + terminal_text(why));
    return folder;
}

Certificate lesson_certificate(const std::string& folder, const std::vector<std::string>& names) {
    namespace fs = std::filesystem;
    if (folder.empty())
        throw std::runtime_error("no folder for the lesson's certificate: neither XDG_DATA_HOME nor HOME is set; set XDG_DATA_HOME to a folder you can write to");
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) cannot_keep(folder, ec.message());
    if (!fs::is_directory(folder, ec)) cannot_keep(folder, "it is not a folder");

    Certificate out;
    out.cert_path = (fs::path(folder) / kCertName).string();
    out.key_path = (fs::path(folder) / kKeyName).string();
    const std::vector<std::string> wanted = wanted_names(names);
    if (exists(out.cert_path) || exists(out.key_path)) {
        out.replaced = why_not_kept(out.cert_path, out.key_path, wanted, &out.fingerprint);
        if (out.replaced.empty()) return out;
    }

    const Made made = make_certificate(wanted);
    try {
        keep_file(out.key_path, made.key_pem, 0600);
        keep_file(out.cert_path, made.cert_pem, 0644);
    } catch (const std::exception& e) {
        cannot_keep(folder, e.what());
    }
    const Cert cert = read_cert(made.cert_pem);
    if (!cert) openssl_failed("reading it back");
    out.fingerprint = fingerprint_of(cert.get());
    out.made = true;
    return out;
}

std::vector<std::string> certificate_names(const std::string& pem) {
    std::vector<std::string> out;
    const Cert cert = read_cert(pem);
    if (!cert) return out;
    const Names alt(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
    ERR_clear_error();
    if (!alt) return out;
    for (int i = 0; i < sk_GENERAL_NAME_num(alt.get()); ++i) {
        const GENERAL_NAME* g = sk_GENERAL_NAME_value(alt.get(), i);
        if (g->type == GEN_DNS) {
            const ASN1_IA5STRING* s = g->d.dNSName;
            out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), static_cast<std::size_t>(ASN1_STRING_length(s)));
        } else if (g->type == GEN_IPADD) {
            const ASN1_OCTET_STRING* s = g->d.iPAddress;
            const int n = ASN1_STRING_length(s);
            char text[INET6_ADDRSTRLEN] = "";
            if ((n == 4 || n == 16) && ::inet_ntop(n == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(s), text, sizeof text))
                out.emplace_back(text);
        }
    }
    return out;
}

}  // namespace headsplit::lesson
