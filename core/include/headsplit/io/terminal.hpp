#pragma once
// Text on its way to a terminal: a message, a table, a path. What a user typed may hold bytes
// a terminal acts on (ESC starts a sequence that can retitle the window, move the cursor or
// recolour the rest; C1 controls do the same in one byte), so every such byte is shown as an
// escape and never sent.
#include <string>

namespace headsplit {

// `s` with every control character escaped: C0 as \t, \n, \r or \xHH (ESC is \x1b), DEL as
// \x7f, a C1 control (U+0080 to U+009F) as \u0080 .. \u009f, and every byte that starts no
// valid UTF-8 character (an overlong form, a surrogate, a stray continuation byte) as \xHH.
// Printable text, UTF-8 included, is left as it is.
std::string terminal_text(const std::string& s);

// An option's value as a message shows it: as it is when it is printable ASCII without
// spaces; otherwise between double quotes, escaped as terminal_text does (and " as \"), so
// that a blank before or after it, an empty value or an invisible byte can be seen:
// `--heads "2 "`, `--mode ""`, `--preset "\x1b]0;x\x07"`.
std::string shown_value(const std::string& value);

}  // namespace headsplit
