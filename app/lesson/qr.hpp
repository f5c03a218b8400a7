#pragma once
// The student address as a QR code (libqrencode), for the teacher's window to draw.
#include <cstdint>
#include <string>
#include <vector>

namespace headsplit::lesson {

struct QrCode {
    int size = 0;                       // modules per side (21 + 4 x (version - 1))
    int version = 0;
    std::vector<std::uint8_t> modules;  // size x size, row by row, 1 dark; no quiet zone
};

// `text` as 8-bit data at error correction level M, the smallest version that holds it.
// Throws std::runtime_error when it cannot be encoded (too long for version 40).
QrCode make_qr(const std::string& text);

}  // namespace headsplit::lesson
