#pragma once
// GPT-2's pre-split: the text cut into the pieces that BPE then merges within. The pattern has
// one home (here); two engines run it: ICU's regex on the desktop (bpe_pieces_icu.cpp) and the
// browser's own RegExp in the page (bpe_pieces_js.cpp), since ICU is not built for wasm.
#include <string>
#include <vector>

namespace headsplit {

// GPT-2's pattern as the JavaScript encoder writes it (/.../gu). JavaScript's \s is spelled
// out (ICU's leaves out \v and U+FEFF): tab, newline, \v, form feed, return, the separators
// \p{Z} and U+FEFF.
inline const char* const kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\t\\n\\u000B\\f\\r\\p{Z}\\uFEFF\\p{L}\\p{N}]+"
    "|[\\t\\n\\u000B\\f\\r\\p{Z}\\uFEFF]+(?![^\\t\\n\\u000B\\f\\r\\p{Z}\\uFEFF])|[\\t\\n\\u000B\\f\\r\\p{Z}\\uFEFF]+";

// The pieces of `text` (UTF-8), in order; bytes that are not UTF-8 become U+FFFD first, as a
// browser's TextDecoder does. Throws ConfigError when the engine fails.
std::vector<std::string> gpt2_pieces(const std::string& text);

}  // namespace headsplit
