#pragma once
// Which file of the site folder an HTTP request path names, if any. Only regular files whose
// real path (symlinks followed) lies inside the site's real path are served; a folder serves
// its index.html or nothing (no listing). The path is checked as the server received it,
// already percent-decoded once: what is still encoded ('%'), a "." or ".." segment, a
// backslash or a control character is refused rather than interpreted.
#include <optional>
#include <string>
#include <string_view>

namespace headsplit::lesson {

// The site folder's real path, or empty when `folder` is not a readable folder.
std::string site_root(const std::string& folder);

struct SiteFile {
    std::string path;          // the real path, inside the root
    const char* content_type;  // from the file name's extension
};
// `root` as site_root() returned it; `request` the URL's path ("/", "/app.js").
std::optional<SiteFile> resolve_site_file(const std::string& root, std::string_view request);

const char* content_type_of(std::string_view file_name);

}  // namespace headsplit::lesson
