#include "bpe_pieces.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include "headsplit/engine/config.hpp"

namespace headsplit {

namespace {

const icu::RegexPattern& pattern() {
    static std::unique_ptr<icu::RegexPattern> compiled;
    static std::once_flag once;
    std::call_once(once, [] {
        UErrorCode status = U_ZERO_ERROR;
        UParseError where;
        compiled.reset(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(kGpt2Pattern), where, status));
        if (U_FAILURE(status) || !compiled) throw std::runtime_error("the BPE pattern does not compile in ICU");
    });
    return *compiled;
}

}  // namespace

std::vector<std::string> gpt2_pieces(const std::string& text) {
    const icu::UnicodeString u = icu::UnicodeString::fromUTF8(text);
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> m(pattern().matcher(u, status));
    std::vector<std::string> out;
    while (U_SUCCESS(status) && m && m->find(status)) {
        std::string piece;
        m->group(status).toUTF8String(piece);
        out.push_back(std::move(piece));
    }
    if (U_FAILURE(status)) throw ConfigError("the text could not be split into GPT-2 pieces (ICU error)");
    return out;
}

}  // namespace headsplit
