// The safetensors reader (issue 15's first piece): files are built here byte by byte from
// the format's description, with values whose encodings are worked out by hand (F16 0x3C00
// is 1, BF16 0x3F80 is 1, ...), and every corruption the issue lists must be refused in one
// line naming the file.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <unistd.h>

#include "headsplit/model/safetensors.hpp"

using namespace headsplit;
using Catch::Matchers::Contains;

namespace {

// 8-byte little-endian header length, the header, the data.
std::string file_bytes(const std::string& header, const std::string& data) {
    std::string out;
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
    return out + header + data;
}

std::string le16(std::initializer_list<std::uint16_t> values) {
    std::string s;
    for (std::uint16_t v : values) s += static_cast<char>(v & 0xFF), s += static_cast<char>(v >> 8);
    return s;
}

std::string le32(std::initializer_list<float> values) {
    std::string s;
    for (float f : values) {
        std::uint32_t b;
        std::memcpy(&b, &f, 4);
        for (int i = 0; i < 4; ++i) s += static_cast<char>((b >> (8 * i)) & 0xFF);
    }
    return s;
}

struct TempFile {
    std::string path;
    explicit TempFile(const std::string& bytes) {
        char name[] = "/tmp/headsplit_st_XXXXXX";
        const int fd = mkstemp(name);
        REQUIRE(fd >= 0);
        close(fd);
        path = name;
        std::ofstream(path, std::ios::binary) << bytes;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

std::string refusal(const std::string& bytes) {
    TempFile f(bytes);
    try {
        SafetensorsFile st(f.path);
        (void)st;
    } catch (const ConfigError& e) {
        const std::string msg = e.what();
        CHECK(msg.find('\n') == std::string::npos);
        CHECK(msg.rfind(f.path + ": ", 0) == 0);  // names the file first
        return msg;
    }
    return "";
}

}  // namespace

TEST_CASE("safetensors: F32, F16 and BF16 tensors read back as the floats they encode", "[safetensors]") {
    // a: F32 [2, 2]; b: F16 [5] = 1, -2.5, 65504 (the largest half), 2^-24 (the smallest
    // subnormal), -0; c: BF16 [2] = 1, -3.140625 (0xC049).
    const std::string header = R"({"__metadata__":{"format":"pt"},)"
                               R"("a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                               R"("b":{"dtype":"F16","shape":[5],"data_offsets":[16,26]},)"
                               R"("c":{"dtype":"BF16","shape":[2],"data_offsets":[26,30]}})";
    const std::string data = le32({0.5f, -1.0f, 3.25f, 1e-3f}) + le16({0x3C00, 0xC100, 0x7BFF, 0x0001, 0x8000}) +
                             le16({0x3F80, 0xC049});
    TempFile f(file_bytes(header, data));
    SafetensorsFile st(f.path);
    REQUIRE(st.entries().size() == 3);
    CHECK(st.read("a", {2, 2}) == std::vector<float>{0.5f, -1.0f, 3.25f, 1e-3f});
    const std::vector<float> b = st.read("b", {5});
    CHECK(b[0] == 1.0f);
    CHECK(b[1] == -2.5f);
    CHECK(b[2] == 65504.0f);
    CHECK(b[3] == std::ldexp(1.0f, -24));
    CHECK((b[4] == 0.0f && std::signbit(b[4])));
    CHECK(st.read("c", {2}) == std::vector<float>{1.0f, -3.140625f});
    CHECK(half_to_float(0x7C00) == INFINITY);
    CHECK(std::isnan(half_to_float(0x7E00)));
    CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));  // the smallest normal half
}

TEST_CASE("safetensors: rows of a matrix read alone are the rows, in the order asked", "[safetensors]") {
    // m: F16 [3, 2] = rows (1, -2.5), (65504, 2^-24), (0.5, -0); n: F32 [2, 3].
    const std::string header = R"({"m":{"dtype":"F16","shape":[3,2],"data_offsets":[0,12]},)"
                               R"("n":{"dtype":"F32","shape":[2,3],"data_offsets":[12,36]}})";
    const std::string data = le16({0x3C00, 0xC100, 0x7BFF, 0x0001, 0x3800, 0x8000}) + le32({1, 2, 3, 4, 5, 6});
    TempFile f(file_bytes(header, data));
    SafetensorsFile st(f.path);
    CHECK(st.read_rows("m", {3, 2}, {2, 0, 2}) == std::vector<float>{0.5f, -0.0f, 1.0f, -2.5f, 0.5f, -0.0f});
    CHECK(st.read_rows("m", {3, 2}, {1}) == std::vector<float>{65504.0f, std::ldexp(1.0f, -24)});
    CHECK(st.read_rows("n", {2, 3}, {1}) == std::vector<float>{4, 5, 6});
    CHECK(st.read_rows("n", {2, 3}, {}).empty());
    // A row past the end, a negative row, a wrong shape: one line naming the file.
    for (const std::int64_t bad : {std::int64_t{3}, std::int64_t{-1}}) {
        try {
            (void)st.read_rows("m", {3, 2}, {0, bad});
            FAIL("row " << bad << " was read");
        } catch (const ConfigError& e) {
            CHECK_THAT(e.what(), Contains(f.path + ": row " + std::to_string(bad)) && Contains("is not one of its 3 rows (0 to 2)"));
        }
    }
    CHECK_THROWS_WITH(st.read_rows("n", {3, 2}, {0}), Contains("is [2, 3], expected [3, 2]"));
}

TEST_CASE("safetensors: every corruption is refused in one line naming the file", "[safetensors][bad-input]") {
    const std::string ok_header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    const std::string ok_data = le32({1, 2});
    CHECK(refusal(file_bytes(ok_header, ok_data)).empty());
    const std::string whole = file_bytes(ok_header, ok_data);

    CHECK_THAT(refusal(whole.substr(0, 5)), Contains("fewer than the 8 of its header length"));
    CHECK_THAT(refusal(whole.substr(0, whole.size() - 3)), Contains("past its 5 bytes"));  // truncated data
    std::string longer = whole;
    longer[0] = static_cast<char>(0xFF);  // header length 255 + ..., past the end
    CHECK_THAT(refusal(longer), Contains("more than the file's"));
    std::string huge = whole;
    huge[7] = static_cast<char>(0x7F);  // a header length near 2^63
    CHECK_THAT(refusal(huge), Contains("more than the file's"));
    CHECK_THAT(refusal(file_bytes("{\"w\":", ok_data)), Contains("not valid JSON"));
    CHECK_THAT(refusal(file_bytes("[1,2]", ok_data)), Contains("not a JSON object"));
    CHECK_THAT(refusal(file_bytes(std::string(100, '[') + std::string(100, ']'), "")), Contains("nests deeper"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"F32","shape":[2]}})", ok_data)), Contains("lacks dtype, shape or data_offsets"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", ok_data)),
               Contains("\"I64\"; HeadSplit reads F32, F16 and BF16"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", ok_data)),
               Contains("not a whole number"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", ok_data)),
               Contains("holds 8 bytes, but F32 [3] needs 12"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", ok_data)),
               Contains("before it begins"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", ok_data)),
               Contains("past its 8 bytes"));
    CHECK_THAT(refusal(file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                  R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                  ok_data)),
               Contains("overlap"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"F32","shape":[1099511627777,2],"data_offsets":[0,8]}})", ok_data)),
               Contains("up to 2^40"));
    CHECK_THAT(refusal(file_bytes(R"({"w":{"dtype":"F32","shape":[1073741824,1073741824,16],"data_offsets":[0,8]}})", ok_data)),
               Contains("more elements than fit"));

    // A missing tensor and a wrong shape are found when asked for.
    TempFile f(whole);
    SafetensorsFile st(f.path);
    CHECK_THROWS_WITH(st.read("h.0.attn.c_attn.weight", {2}), Contains("there is no tensor \"h.0.attn.c_attn.weight\""));
    CHECK_THROWS_WITH(st.read("w", {1, 2}), Contains("is [2], expected [1, 2]"));
    CHECK_THROWS_WITH(SafetensorsFile("/nonexistent/model.safetensors"), Contains("/nonexistent/model.safetensors: not found"));
}

TEST_CASE("safetensors: the in-memory parse agrees with the file reader", "[safetensors]") {
    const std::string bytes = file_bytes(R"({"x":{"dtype":"BF16","shape":[1,3],"data_offsets":[2,8]},)"
                                         R"("y":{"dtype":"F16","shape":[],"data_offsets":[0,2]}})",
                                         le16({0x3C00, 0x3F80, 0x4000, 0xBF80}));
    const auto entries = parse_safetensors("mem", reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].name == "y");  // sorted by offset
    CHECK(entries[1].shape == Shape{1, 3});
    TempFile f(bytes);
    SafetensorsFile st(f.path);
    CHECK(st.read("x", {1, 3}) == std::vector<float>{1.0f, 2.0f, -1.0f});
    CHECK(st.read("y", {}) == std::vector<float>{1.0f});
}
