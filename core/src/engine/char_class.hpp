#pragma once
// What a code point does on screen, by Unicode's own properties: ICU's on the desktop
// (char_class_icu.cpp), the browser's RegExp property escapes in the page (char_class_js.cpp),
// since ICU is not built for wasm. The text rules (validate_text) refuse words by these.
namespace headsplit {

enum CharClass : unsigned {
    kShows = 0,
    kNoInk = 1,      // draws nothing: White_Space or Default_Ignorable_Code_Point (joiners,
                     // variation selectors, tags, fillers such as U+3164), or a format character
    kReorders = 2,   // Bidi_Control: turns the direction of the text around it (U+202E)
    kControl = 4,    // a control character (Cc): C0, DEL, C1; a terminal acts on some of them
};

// The classes `u` has, or'ed (kShows when none).
unsigned char_class(char32_t u);

}  // namespace headsplit
