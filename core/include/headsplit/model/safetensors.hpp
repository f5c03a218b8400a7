#pragma once
// Reading tensors from a safetensors file (Hugging Face's checkpoint format): 8 bytes of
// little-endian header length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets":
// [begin, end]}, "__metadata__": {...}}, then the data, offsets counted from its start.
// The file is untrusted: the header's length, JSON, dtypes, shapes and offsets are checked
// against the file's size before a tensor is read, and every problem is one ConfigError line
// that names the file and what is wrong with it.
#include <cstdint>
#include <string>
#include <vector>

#include "headsplit/engine/config.hpp"
#include "headsplit/base/tensor.hpp"

namespace headsplit {

struct SafetensorsEntry {
    std::string name;
    std::string dtype;  // "F32", "F16" or "BF16" (others are refused)
    Shape shape;
    std::uint64_t begin = 0, end = 0;  // bytes, from the start of the data
};

// The largest header accepted (the format's own reference implementation uses 100 MB).
constexpr std::uint64_t kMaxSafetensorsHeader = 100ull << 20;

// Checks a whole header (the JSON of `header_len` bytes) against `data_bytes`, the bytes that
// follow it; `file` names the file in messages. Entries come back sorted by begin offset.
std::vector<SafetensorsEntry> parse_safetensors_header(const std::string& file, const char* header,
                                                       std::size_t header_len, std::uint64_t data_bytes);

// The same for a whole file held in memory (the fuzzer's entry).
std::vector<SafetensorsEntry> parse_safetensors(const std::string& file, const std::uint8_t* bytes,
                                                std::size_t size);

// IEEE half and bfloat16 to float, exactly.
float half_to_float(std::uint16_t h);
float bfloat16_to_float(std::uint16_t b);

// A safetensors file on disk: the header is read and checked when it is opened; a tensor's
// bytes are read only when asked for, one tensor at a time.
class SafetensorsFile {
public:
    explicit SafetensorsFile(std::string path);
    const std::string& path() const { return path_; }
    const std::vector<SafetensorsEntry>& entries() const { return entries_; }
    // The entry `name`, which must have `shape`; ConfigError naming the file otherwise.
    const SafetensorsEntry& get(const std::string& name, const Shape& shape) const;
    // Its values as floats, row-major.
    std::vector<float> read(const std::string& name, const Shape& shape) const;
    // Rows `rows` of the matrix `name` (which must have `shape`), [rows.size(), shape[1]]:
    // only their bytes are read (a token embedding table is not read whole).
    std::vector<float> read_rows(const std::string& name, const Shape& shape, const std::vector<std::int64_t>& rows) const;

private:
    std::string path_;
    std::uint64_t data_start_ = 0;
    std::vector<SafetensorsEntry> entries_;
};

}  // namespace headsplit
