#include "headsplit/config.hpp"

#include <cmath>
#include <sstream>

namespace headsplit {

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::Loop: return "loop";
        case Mode::Split: return "split";
        case Mode::Fused: return "fused";
    }
    return "?";
}

const char* backend_name(BackendKind b) {
    return b == BackendKind::Gl ? "gl" : "cpu";
}

std::vector<std::string> split_words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

std::vector<std::string> synthetic_tokens(std::int64_t n) {
    std::vector<std::string> out;
    for (std::int64_t i = 1; i <= n; ++i) out.push_back("t" + std::to_string(i));
    return out;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
    std::vector<std::int64_t> low, high;
    for (std::int64_t d = 1; n >= 1 && d <= n / d; ++d)
        if (n % d == 0) {
            low.push_back(d);
            if (d != n / d) high.push_back(n / d);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

std::string human_bytes(double bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5) {
        bytes /= 1024.0;
        ++u;
    }
    std::ostringstream s;
    s.precision(u == 0 ? 0 : (bytes < 10 ? 2 : 1));
    s << std::fixed << bytes << ' ' << units[u];
    return s.str();
}

namespace {

std::string join(const std::vector<std::int64_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s;
}

void check_dim(const char* what, std::int64_t v) {
    if (v < 1 || v > kMaxDim)
        throw ConfigError(std::string(what) + " = " + std::to_string(v) +
                          " is not a valid size; use a whole number from 1 to " +
                          std::to_string(kMaxDim));
}

}  // namespace

void validate(const Config& c) {
    if (c.tokens.empty())
        throw ConfigError("the text has no tokens; give at least one word, e.g. --text \"the cat sleeps\"");
    if (c.num_tokens() > kMaxTokens)
        throw ConfigError("the text has " + std::to_string(c.num_tokens()) +
                          " tokens; at most " + std::to_string(kMaxTokens) + " fit");
    if (c.batch != 1)
        throw ConfigError("batch = " + std::to_string(c.batch) + " is not supported; the batch is 1");
    check_dim("D_in", c.d_in);
    check_dim("D_out", c.d_out);
    if (c.heads < 1)
        throw ConfigError("heads = " + std::to_string(c.heads) + " is not a valid head count; heads that divide " +
                          std::to_string(c.d_out) + ": " + join(divisors(c.d_out)));
    if (c.d_out % c.heads != 0) {
        std::ostringstream ratio;
        ratio << static_cast<double>(c.d_out) / static_cast<double>(c.heads);
        throw ConfigError("D_out = " + std::to_string(c.d_out) + " cannot be split into " +
                          std::to_string(c.heads) + " heads (" + std::to_string(c.d_out) + " / " +
                          std::to_string(c.heads) + " = " + ratio.str() + "); heads that divide " +
                          std::to_string(c.d_out) + ": " + join(divisors(c.d_out)));
    }
    if (!(c.dropout >= 0.0 && c.dropout < 1.0)) {
        std::ostringstream p;
        p << c.dropout;
        throw ConfigError("dropout p = " + p.str() +
                          " is outside [0, 1); use 0 for none or a probability such as 0.1");
    }
    if (!c.embeddings.empty() &&
        static_cast<std::int64_t>(c.embeddings.size()) != c.num_tokens() * c.d_in)
        throw ConfigError("the fixed embeddings hold " + std::to_string(c.embeddings.size()) +
                          " numbers but T x D_in = " + std::to_string(c.num_tokens()) + " x " +
                          std::to_string(c.d_in) + "; drop them or match the text and D_in");
}

}  // namespace headsplit
