#include "lesson/site.hpp"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>

namespace headsplit::lesson {

namespace {

std::optional<std::string> real_path(const std::string& path) {
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf)) return std::nullopt;
    return std::string(buf);
}

bool inside(const std::string& root, const std::string& path) {
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

// Every segment a plain name: no "", ".", "..", no '%', '\\' or control character.
bool plain_request(std::string_view request) {
    if (request.empty() || request.front() != '/' || request.size() > 1024) return false;
    std::string_view rest = request.substr(1);
    while (true) {
        const std::size_t slash = rest.find('/');
        const std::string_view segment = rest.substr(0, slash);
        const bool last = slash == std::string_view::npos;
        if (segment.empty() && !last) return false;  // "//"
        if (segment == "." || segment == "..") return false;
        for (char c : segment) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7f || c == '%' || c == '\\') return false;
        }
        if (last) return true;
        rest = rest.substr(slash + 1);
    }
}

}  // namespace

std::string site_root(const std::string& folder) {
    const auto real = real_path(folder);
    struct stat st {};
    if (!real || *real == "/" || ::stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
    return *real;
}

std::optional<SiteFile> resolve_site_file(const std::string& root, std::string_view request) {
    if (root.empty() || !plain_request(request)) return std::nullopt;
    std::string wanted = root + std::string(request);
    for (int attempt = 0; attempt < 2; ++attempt) {
        const auto real = real_path(wanted);
        if (!real || (*real != root && !inside(root, *real))) return std::nullopt;
        struct stat st {};
        if (::stat(real->c_str(), &st) != 0) return std::nullopt;
        if (S_ISREG(st.st_mode)) return SiteFile{*real, content_type_of(*real)};
        if (!S_ISDIR(st.st_mode) || attempt == 1) return std::nullopt;
        wanted = *real + "/index.html";
    }
    return std::nullopt;
}

const char* content_type_of(std::string_view file_name) {
    static constexpr std::pair<std::string_view, const char*> kTypes[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".wasm", "application/wasm"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".webmanifest", "application/manifest+json"},
        {".png", "image/png"},
        {".svg", "image/svg+xml"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
    };
    for (const auto& [ext, type] : kTypes)
        if (file_name.size() >= ext.size() && file_name.substr(file_name.size() - ext.size()) == ext) return type;
    return "application/octet-stream";
}

}  // namespace headsplit::lesson
