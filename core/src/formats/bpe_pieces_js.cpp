#include "bpe_pieces.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <emscripten.h>

#include "headsplit/engine/config.hpp"

namespace headsplit {

namespace {

// The browser's RegExp (the u flag knows \p{L}, \p{N} and \p{Z}) over the text decoded as a
// TextDecoder decodes it. The answer is one malloc'd block: the piece count, each piece's
// length in bytes (uint32 each), then the pieces' UTF-8 bytes; 0 when the pattern fails.
// The heap may be shared memory (threads), which TextDecoder does not read: copied first.
EM_JS(std::uint32_t*, js_gpt2_pieces, (const char* pattern, const char* text, int length), {
    try {
        const re = new RegExp(UTF8ToString(pattern), "gu");
        const str = new TextDecoder().decode(HEAPU8.slice(text, text + length));
        const enc = new TextEncoder();
        const pieces = (str.match(re) || []).map(function(p) { return enc.encode(p); });
        let bytes = 0;
        for (const p of pieces) bytes += p.length;
        const head = 4 * (1 + pieces.length);
        const out = _malloc(head + bytes);
        if (!out) return 0;
        HEAPU32[out >> 2] = pieces.length;
        let at = out + head;
        pieces.forEach(function(p, i) {
            HEAPU32[(out >> 2) + 1 + i] = p.length;
            HEAPU8.set(p, at);
            at += p.length;
        });
        return out;
    } catch (e) {
        return 0;
    }
});

}  // namespace

std::vector<std::string> gpt2_pieces(const std::string& text) {
    std::uint32_t* block = js_gpt2_pieces(kGpt2Pattern, text.data(), static_cast<int>(text.size()));
    if (!block) throw ConfigError("the text could not be split into GPT-2 pieces (the browser's RegExp failed)");
    const std::uint32_t n = block[0];
    const char* bytes = reinterpret_cast<const char*>(block + 1 + n);
    std::vector<std::string> out;
    out.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        out.emplace_back(bytes, block[1 + i]);
        bytes += block[1 + i];
    }
    std::free(block);
    return out;
}

}  // namespace headsplit
