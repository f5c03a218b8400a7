#include "char_class.hpp"

#include <unicode/uchar.h>

namespace headsplit {

unsigned char_class(char32_t u) {
    const auto c = static_cast<UChar32>(u);
    unsigned out = kShows;
    if (u_hasBinaryProperty(c, UCHAR_WHITE_SPACE) || u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT) ||
        u_charType(c) == U_FORMAT_CHAR)
        out |= kNoInk;
    if (u_hasBinaryProperty(c, UCHAR_BIDI_CONTROL)) out |= kReorders;
    if (u_charType(c) == U_CONTROL_CHAR) out |= kControl | kNoInk;
    return out;
}

}  // namespace headsplit
