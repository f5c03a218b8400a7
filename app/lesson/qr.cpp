#include "lesson/qr.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <qrencode.h>

namespace headsplit::lesson {

QrCode make_qr(const std::string& text) {
    // Version 0: the smallest that holds the text; case sensitive, so that a URL's query
    // stays as it is.
    std::unique_ptr<QRcode, void (*)(QRcode*)> code(QRcode_encodeString(text.c_str(), 0, QR_ECLEVEL_M, QR_MODE_8, 1),
                                                    QRcode_free);
    if (!code) throw std::runtime_error("cannot make a QR code of " + text + ": " + std::strerror(errno));
    QrCode out;
    out.size = code->width;
    out.version = code->version;
    const std::size_t n = static_cast<std::size_t>(code->width) * static_cast<std::size_t>(code->width);
    out.modules.resize(n);
    for (std::size_t i = 0; i < n; ++i) out.modules[i] = code->data[i] & 1;  // bit 0: dark
    return out;
}

}  // namespace headsplit::lesson
