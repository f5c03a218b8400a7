#include "headsplit/model/safetensors.hpp"

#include "headsplit/formats/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <fstream>

#include <nlohmann/json.hpp>

#include "headsplit/base/numbers.hpp"

namespace headsplit {

namespace {

// Deeper JSON than this is refused before it is parsed (a deeply nested value would exhaust
// the stack when freed); a checkpoint's header is two levels deep.
constexpr int kMaxDepth = 32;

[[noreturn]] void bad(const std::string& file, const std::string& what,
                      const char* hint = "is it a safetensors checkpoint, downloaded whole?") {
    throw ConfigError(file + ": " + what + "; " + hint);
}

std::uint64_t dtype_bytes(const std::string& dtype) {
    if (dtype == "F32") return 4;
    if (dtype == "F16" || dtype == "BF16") return 2;
    return 0;
}

// The deepest nesting of [ and { outside strings.
int nesting(const char* s, std::size_t n) {
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < n; ++i) {
        const char c = s[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > kMaxDepth) return deepest;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

std::string shown(const std::string& name) { return quote_name(name); }

std::uint64_t read_u64_le(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

}  // namespace

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
    float v;
    if (exp == 0) v = std::ldexp(static_cast<float>(frac), -24);  // zero and subnormals
    else if (exp == 31) v = frac ? std::nanf("") : INFINITY;
    else v = std::ldexp(static_cast<float>(frac | 0x400u), static_cast<int>(exp) - 25);
    return sign ? -v : v;
}

float bfloat16_to_float(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

std::vector<SafetensorsEntry> parse_safetensors_header(const std::string& file, const char* header,
                                                       std::size_t header_len, std::uint64_t data_bytes) {
    if (nesting(header, header_len) > kMaxDepth)
        bad(file, "the header nests deeper than " + std::to_string(kMaxDepth) + " levels");
    const nlohmann::json doc = nlohmann::json::parse(header, header + header_len, nullptr, false);
    if (doc.is_discarded()) bad(file, "the header is not valid JSON");
    if (!doc.is_object()) bad(file, "the header is not a JSON object of tensors");
    std::vector<SafetensorsEntry> out;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it.key() == "__metadata__") continue;
        const std::string name = shown(it.key());
        const nlohmann::json& t = it.value();
        if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets"))
            bad(file, "tensor " + name + " lacks dtype, shape or data_offsets");
        SafetensorsEntry e;
        e.name = it.key();
        if (!t["dtype"].is_string()) bad(file, "tensor " + name + " has a dtype that is not a string");
        e.dtype = t["dtype"].get<std::string>();
        const std::uint64_t width = dtype_bytes(e.dtype);
        if (width == 0)
            bad(file, "tensor " + name + " is " + shown(e.dtype) + "; HeadSplit reads F32, F16 and BF16");
        const nlohmann::json& shape = t["shape"];
        if (!shape.is_array() || shape.size() > 8) bad(file, "tensor " + name + " has a shape that is not a list of up to 8 sizes");
        std::uint64_t count = 1;
        for (const auto& d : shape) {
            if (!d.is_number_unsigned() || d.get<std::uint64_t>() > (1ull << 40))
                bad(file, "tensor " + name + " has a size that is not a whole number up to 2^40");
            const std::uint64_t n = d.get<std::uint64_t>();
            if (n != 0 && count > (1ull << 60) / n) bad(file, "tensor " + name + " has more elements than fit in memory");
            count *= n;
            e.shape.push_back(static_cast<std::int64_t>(n));
        }
        const nlohmann::json& off = t["data_offsets"];
        if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            bad(file, "tensor " + name + "'s data_offsets are not two whole numbers");
        e.begin = off[0].get<std::uint64_t>();
        e.end = off[1].get<std::uint64_t>();
        if (e.begin > e.end) bad(file, "tensor " + name + " ends (" + std::to_string(e.end) + ") before it begins (" + std::to_string(e.begin) + ")");
        if (e.end > data_bytes)
            bad(file, "tensor " + name + " ends at byte " + std::to_string(e.end) + " of the data, past its " +
                          std::to_string(data_bytes) + " bytes (a truncated file?)");
        if (e.end - e.begin != count * width)
            bad(file, "tensor " + name + " holds " + std::to_string(e.end - e.begin) + " bytes, but " + e.dtype + " " +
                          shape_str(e.shape) + " needs " + std::to_string(count * width));
        out.push_back(std::move(e));
    }
    std::sort(out.begin(), out.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    for (std::size_t i = 1; i < out.size(); ++i)
        if (out[i].begin < out[i - 1].end)
            bad(file, "tensors " + shown(out[i - 1].name) + " and " + shown(out[i].name) + " overlap");
    return out;
}

std::vector<SafetensorsEntry> parse_safetensors(const std::string& file, const std::uint8_t* bytes, std::size_t size) {
    if (size < 8) bad(file, "the file has " + std::to_string(size) + " bytes, fewer than the 8 of its header length");
    const std::uint64_t n = read_u64_le(bytes);
    if (n > kMaxSafetensorsHeader || n > size - 8)
        bad(file, "the header claims " + std::to_string(n) + " bytes, more than the file's " + std::to_string(size - 8) +
                      " after its length (or than 100 MB)");
    return parse_safetensors_header(file, reinterpret_cast<const char*>(bytes + 8), static_cast<std::size_t>(n),
                                    size - 8 - n);
}

SafetensorsFile::SafetensorsFile(std::string path) : path_(std::move(path)) {
    check_readable_file(path_, std::numeric_limits<std::uint64_t>::max(), "give the checkpoint's model.safetensors");
    std::ifstream in(path_, std::ios::binary | std::ios::ate);
    if (!in) throw ConfigError(path_ + ": cannot open it: " + std::strerror(errno) + "; give the checkpoint's path");
    const std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
    if (size < 8) bad(path_, "the file has " + std::to_string(size) + " bytes, fewer than the 8 of its header length");
    std::uint8_t len[8];
    in.seekg(0);
    in.read(reinterpret_cast<char*>(len), 8);
    const std::uint64_t n = read_u64_le(len);
    if (!in || n > kMaxSafetensorsHeader || n > size - 8)
        bad(path_, "the header claims " + std::to_string(n) + " bytes, more than the file's " + std::to_string(size - 8) +
                       " after its length (or than 100 MB)");
    std::string header(static_cast<std::size_t>(n), '\0');
    in.read(header.data(), static_cast<std::streamsize>(n));
    if (!in) bad(path_, "the header could not be read whole");
    data_start_ = 8 + n;
    entries_ = parse_safetensors_header(path_, header.data(), header.size(), size - data_start_);
}

const SafetensorsEntry& SafetensorsFile::get(const std::string& name, const Shape& shape) const {
    for (const SafetensorsEntry& e : entries_) {
        if (e.name != name) continue;
        if (e.shape != shape)
            bad(path_, "tensor " + shown(name) + " is " + shape_str(e.shape) + ", expected " + shape_str(shape),
                "does its config.json match the checkpoint?");
        return e;
    }
    bad(path_, "there is no tensor " + shown(name), "is it a GPT-2 checkpoint in the Hugging Face layout?");
}

namespace {

// Little-endian F32, F16 or BF16 values to floats.
void to_floats(const std::string& dtype, const unsigned char* p, std::size_t count, float* out) {
    const std::size_t width = static_cast<std::size_t>(dtype_bytes(dtype));
    for (std::size_t i = 0; i < count; ++i, p += width) {
        if (width == 4) {
            const std::uint32_t bits = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                                       static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
            std::memcpy(&out[i], &bits, sizeof bits);
        } else {
            const std::uint16_t bits = static_cast<std::uint16_t>(p[0] | p[1] << 8);
            out[i] = dtype == "F16" ? half_to_float(bits) : bfloat16_to_float(bits);
        }
    }
}

// Where the first value of v[0, n) that is not a finite number lies (n: none).
std::size_t first_non_finite(const float* v, std::size_t n) {
    return static_cast<std::size_t>(std::find_if(v, v + n, [](float x) { return !std::isfinite(x); }) - v);
}

// "NaN at [2, 5]": the value at row-major index `flat` of a tensor of `shape`.
std::string non_finite_at(float value, std::size_t flat, const Shape& shape) {
    std::string at;
    for (std::size_t d = shape.size(); d-- > 0;) {
        const auto n = static_cast<std::size_t>(std::max<std::int64_t>(shape[d], 1));
        at = std::to_string(flat % n) + (at.empty() ? "" : ", ") + at;
        flat /= n;
    }
    return std::string(std::isnan(value) ? "NaN" : "Inf") + " at [" + at + "]";
}

}  // namespace

std::vector<float> SafetensorsFile::read(const std::string& name, const Shape& shape) const {
    const SafetensorsEntry& e = get(name, shape);
    std::ifstream in(path_, std::ios::binary);
    std::vector<char> raw(static_cast<std::size_t>(e.end - e.begin));
    in.seekg(static_cast<std::streamoff>(data_start_ + e.begin));
    in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
    if (!in) bad(path_, "tensor " + shown(name) + " could not be read (the file changed since it was opened?)");
    std::vector<float> out(raw.size() / static_cast<std::size_t>(dtype_bytes(e.dtype)));
    to_floats(e.dtype, reinterpret_cast<const unsigned char*>(raw.data()), out.size(), out.data());
    if (const std::size_t i = first_non_finite(out.data(), out.size()); i < out.size())
        bad(path_, "tensor " + shown(name) + " holds " + non_finite_at(out[i], i, shape),
            "a checkpoint's weights must be finite numbers");
    return out;
}

std::vector<float> SafetensorsFile::read_rows(const std::string& name, const Shape& shape,
                                              const std::vector<std::int64_t>& rows) const {
    const SafetensorsEntry& e = get(name, shape);
    if (shape.size() != 2) bad(path_, "tensor " + shown(name) + " is not a matrix");
    const std::size_t cols = static_cast<std::size_t>(shape[1]);
    const std::size_t row_bytes = cols * static_cast<std::size_t>(dtype_bytes(e.dtype));
    std::ifstream in(path_, std::ios::binary);
    std::vector<char> raw(row_bytes);
    std::vector<float> out(rows.size() * cols);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r] < 0 || rows[r] >= shape[0])
            bad(path_, "row " + std::to_string(rows[r]) + " of tensor " + shown(name) + " is not one of its " +
                           std::to_string(shape[0]) + " rows (0 to " + std::to_string(shape[0] - 1) + ")");
        in.seekg(static_cast<std::streamoff>(data_start_ + e.begin + static_cast<std::uint64_t>(rows[r]) * row_bytes));
        in.read(raw.data(), static_cast<std::streamsize>(row_bytes));
        if (!in) bad(path_, "tensor " + shown(name) + " could not be read (the file changed since it was opened?)");
        to_floats(e.dtype, reinterpret_cast<const unsigned char*>(raw.data()), cols, &out[r * cols]);
        if (const std::size_t i = first_non_finite(&out[r * cols], cols); i < cols)
            bad(path_, "tensor " + shown(name) + " holds " +
                           non_finite_at(out[r * cols + i], static_cast<std::size_t>(rows[r]) * cols + i, shape),
                "a checkpoint's weights must be finite numbers");
    }
    return out;
}

}  // namespace headsplit
