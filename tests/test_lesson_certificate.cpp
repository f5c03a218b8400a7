// The lesson's own certificate for --https (lesson/certificate.hpp): made in a folder, kept
// while it fits, remade when it no longer names the addresses; a key only its owner reads;
// files that are damaged, cut short, huge or not files at all replaced or refused in one line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "lesson/certificate.hpp"

using namespace headsplit::lesson;
namespace fs = std::filesystem;

namespace {

struct TempFolder {
    fs::path path;
    TempFolder() {
        char tmpl[] = "/tmp/headsplit-cert-XXXXXX";
        REQUIRE(::mkdtemp(tmpl));
        path = tmpl;
    }
    ~TempFolder() {
        std::error_code ec;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path, ec);
    }
};

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool holds(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

unsigned mode_of(const std::string& path) {
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    return info.st_mode & 0777;
}

}  // namespace

TEST_CASE("a lesson certificate is made, named and kept", "[lesson][certificate]") {
    TempFolder tmp;
    const std::string folder = (tmp.path / "data" / "headsplit").string();  // made with its parents
    const Certificate first = lesson_certificate(folder, {"192.0.2.7"});
    CHECK(first.made);
    CHECK(first.replaced.empty());
    CHECK(first.fingerprint.size() == 32 * 3 - 1);  // 32 bytes as "AB:" less the last colon
    CHECK(mode_of(first.key_path) == 0600);

    const std::vector<std::string> names = certificate_names(read(first.cert_path));
    CHECK(holds(names, "127.0.0.1"));
    CHECK(holds(names, "::1"));
    CHECK(holds(names, "localhost"));
    CHECK(holds(names, "192.0.2.7"));
    CHECK(certificate_names(read(first.key_path)).empty());  // a key is no certificate

    SECTION("kept while it fits") {
        const Certificate again = lesson_certificate(folder, {"192.0.2.7"});
        CHECK_FALSE(again.made);
        CHECK(again.fingerprint == first.fingerprint);
        const Certificate fewer = lesson_certificate(folder, {});
        CHECK_FALSE(fewer.made);
    }
    SECTION("remade for an address it does not name") {
        const Certificate moved = lesson_certificate(folder, {"198.51.100.3"});
        CHECK(moved.made);
        CHECK(moved.replaced.find("198.51.100.3") != std::string::npos);
        CHECK(moved.fingerprint != first.fingerprint);
        CHECK(holds(certificate_names(read(moved.cert_path)), "198.51.100.3"));
    }
    SECTION("a key that others could read is replaced, and the new one is private") {
        fs::permissions(first.key_path, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
        const Certificate fixed = lesson_certificate(folder, {"192.0.2.7"});
        CHECK(fixed.made);
        CHECK(fixed.replaced.find("other users") != std::string::npos);
        CHECK(mode_of(fixed.key_path) == 0600);
    }
}

TEST_CASE("damaged certificate files are replaced in one line", "[lesson][certificate]") {
    TempFolder tmp;
    const std::string folder = tmp.path.string();
    const Certificate good = lesson_certificate(folder, {});
    const std::string cert_pem = read(good.cert_path);
    const std::string key_pem = read(good.key_path);

    struct Damage {
        const char* what;
        std::string cert, key;
        const char* said;
    };
    const std::vector<Damage> damages = {
        {"a certificate cut short", cert_pem.substr(0, cert_pem.size() / 2), key_pem, "no PEM certificate"},
        {"a key cut short", cert_pem, key_pem.substr(0, key_pem.size() / 2), "no PEM private key"},
        {"garbage", std::string(300, '\x9c'), std::string("\0\1\2", 3), "no PEM certificate"},
        {"an empty certificate", "", key_pem, "no PEM certificate"},
        {"a huge certificate", std::string(kMaxCertificateFileBytes + 1, 'A'), key_pem, "more than"},
        {"the certificate in the key's place", cert_pem, cert_pem, "no PEM private key"},
    };
    for (const Damage& d : damages) {
        INFO(d.what);
        std::ofstream(good.cert_path, std::ios::binary | std::ios::trunc) << d.cert;
        std::ofstream(good.key_path, std::ios::binary | std::ios::trunc) << d.key;
        fs::permissions(good.key_path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
        const Certificate fixed = lesson_certificate(folder, {});
        CHECK(fixed.made);
        CHECK(fixed.replaced.find(d.said) != std::string::npos);
        CHECK(fixed.replaced.find('\n') == std::string::npos);
        CHECK(holds(certificate_names(read(fixed.cert_path)), "127.0.0.1"));
        CHECK(mode_of(fixed.key_path) == 0600);
    }
    // Another pair's key: both parse, they do not belong together.
    TempFolder other;
    const Certificate stranger = lesson_certificate(other.path.string(), {});
    std::ofstream(good.key_path, std::ios::binary | std::ios::trunc) << read(stranger.key_path);
    const Certificate fixed = lesson_certificate(folder, {});
    CHECK(fixed.made);
    CHECK(fixed.replaced.find("is not the key of") != std::string::npos);
}

TEST_CASE("a certificate that cannot be kept is refused in one line", "[lesson][certificate]") {
    TempFolder tmp;
    SECTION("a folder where the certificate goes") {
        fs::create_directories(tmp.path / "lesson-https-cert.pem");
        try {
            lesson_certificate(tmp.path.string(), {});
            FAIL("a folder in the certificate's place was taken");
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            CHECK(what.find(tmp.path.string()) != std::string::npos);
            CHECK(what.find("XDG_DATA_HOME") != std::string::npos);
            CHECK(what.find('\n') == std::string::npos);
        }
    }
    SECTION("a file where the folder goes") {
        std::ofstream(tmp.path / "file") << "x";
        CHECK_THROWS_WITH(lesson_certificate((tmp.path / "file" / "headsplit").string(), {}),
                          Catch::Contains("XDG_DATA_HOME") && Catch::Contains((tmp.path / "file").string()));
    }
    SECTION("a folder it may not write to") {
        if (::geteuid() == 0) return;  // root writes anywhere
        fs::permissions(tmp.path, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);
        CHECK_THROWS_WITH(lesson_certificate(tmp.path.string(), {}),
                          Catch::Contains("cannot keep the lesson's certificate in " + tmp.path.string()) &&
                              Catch::Contains("XDG_DATA_HOME"));
    }
    SECTION("no folder at all") {
        CHECK_THROWS_WITH(lesson_certificate("", {}), Catch::Contains("XDG_DATA_HOME"));
    }
}

TEST_CASE("the folder's files are its own: no pipe waited on, no link written through", "[lesson][certificate]") {
    TempFolder tmp;
    const std::string folder = (tmp.path / "headsplit").string();
    fs::create_directories(folder);
    const std::string cert = folder + "/lesson-https-cert.pem", key = folder + "/lesson-https-key.pem";
    SECTION("a named pipe as the certificate: refused in one line, at once") {
        REQUIRE(::mkfifo(cert.c_str(), 0600) == 0);
        // Should the write wait for a reader, one comes after 5 s, so that the case fails
        // rather than hangs.
        std::atomic<bool> done{false};
        std::thread reader([&] {
            for (int i = 0; i < 50 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (done) return;
            const int fd = ::open(cert.c_str(), O_RDONLY | O_NONBLOCK);
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            if (fd >= 0) ::close(fd);
        });
        const auto start = std::chrono::steady_clock::now();
        std::string what;
        try {
            lesson_certificate(folder, {});
        } catch (const std::runtime_error& e) {
            what = e.what();
        }
        done = true;
        reader.join();
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
        CHECK(what.find(cert) != std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
        struct stat info {};
        CHECK((::lstat(cert.c_str(), &info) == 0 && S_ISFIFO(info.st_mode)));
    }
    for (const bool key_link : {true, false}) {
        DYNAMIC_SECTION("a symlink as the " << (key_link ? "key" : "certificate") << " to a file elsewhere") {
            const std::string outside = (tmp.path / "outside.pem").string();
            std::ofstream(outside) << "the user's own file\n";
            fs::permissions(outside, fs::perms::all, fs::perm_options::replace);  // world-readable: not kept
            fs::create_symlink(outside, key_link ? key : cert);
            const Certificate made = lesson_certificate(folder, {});
            CHECK(made.made);
            CHECK(read(outside) == "the user's own file\n");
            CHECK(mode_of(outside) == 0777);
            CHECK_FALSE(fs::is_symlink(key_link ? key : cert));
            CHECK(mode_of(key) == 0600);
        }
    }
    SECTION("a certificate of mode 000 remade: the new one is readable") {
        const Certificate first = lesson_certificate(folder, {});
        std::ofstream(cert, std::ios::trunc) << "damaged\n";  // remade whoever runs the test (root reads mode 000)
        fs::permissions(cert, fs::perms::none, fs::perm_options::replace);
        const Certificate again = lesson_certificate(folder, {});
        CHECK(again.made);
        CHECK(again.fingerprint != first.fingerprint);
        CHECK(mode_of(cert) == 0644);
        CHECK(mode_of(key) == 0600);
        CHECK_FALSE(lesson_certificate(folder, {}).made);  // and kept next time
    }
}

TEST_CASE("the certificate's folder is found from absolute paths only", "[lesson][certificate]") {
    // Each variable put back as it was after the case.
    struct Env {
        const char* name;
        std::string was;
        bool had;
        explicit Env(const char* n) : name(n), had(::getenv(n) != nullptr) { was = had ? ::getenv(n) : ""; }
        ~Env() { had ? ::setenv(name, was.c_str(), 1) : ::unsetenv(name); }
    } home("HOME"), data("XDG_DATA_HOME");
    ::setenv("HOME", "/home/someone", 1);
    ::setenv("XDG_DATA_HOME", "/srv/data", 1);
    CHECK(certificate_folder() == "/srv/data/headsplit");
    // The XDG spec: a relative path in an XDG variable is invalid, and ignored.
    ::setenv("XDG_DATA_HOME", "data", 1);
    CHECK(certificate_folder() == "/home/someone/.local/share/headsplit");
    // A relative HOME would put the key under the working folder: refused in one line.
    ::setenv("HOME", "someone", 1);
    CHECK_THROWS_WITH(certificate_folder(), Catch::Contains("HOME=someone is not an absolute path") &&
                                                Catch::Contains("XDG_DATA_HOME") && !Catch::Contains("\n"));
    ::unsetenv("HOME");
    ::unsetenv("XDG_DATA_HOME");
    CHECK_THROWS_WITH(certificate_folder(), Catch::Contains("neither XDG_DATA_HOME nor HOME"));
}
