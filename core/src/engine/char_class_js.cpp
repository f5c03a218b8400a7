#include "char_class.hpp"

#include <emscripten.h>

namespace headsplit {

namespace {

// Whether code point `u` matches `pattern` (a RegExp with the u flag, whose property escapes
// know Unicode's properties); each pattern compiled once and kept on the module.
EM_JS(int, js_matches, (const char* pattern, unsigned u), {
    var source = UTF8ToString(pattern);
    var kept = Module.headsplitPatterns || (Module.headsplitPatterns = {});
    var re = kept[source] || (kept[source] = new RegExp(source, "u"));
    return re.test(String.fromCodePoint(u)) ? 1 : 0;
});

}  // namespace

unsigned char_class(char32_t u) {
    const auto has = [u](const char* pattern) { return js_matches(pattern, static_cast<unsigned>(u)) != 0; };
    unsigned out = kShows;
    if (has("^[\\p{White_Space}\\p{Default_Ignorable_Code_Point}\\p{Cf}]$")) out |= kNoInk;
    if (has("^\\p{Bidi_Control}$")) out |= kReorders;
    if (has("^\\p{Cc}$")) out |= kControl | kNoInk;
    return out;
}

}  // namespace headsplit
