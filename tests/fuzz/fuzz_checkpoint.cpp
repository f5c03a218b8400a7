// Fuzz target over the files a checkpoint folder holds. The first byte picks the format:
// even, the rest is a whole safetensors file (header length, JSON header, data); odd, the rest
// is vocab.json, a NUL, then merges.txt, and an accepted vocabulary encodes a fixed text.
// Refusals (ConfigError, one line) are expected; anything else (a crash, another exception,
// a sanitizer report) is a bug.
#include <cstdint>
#include <string>

#include "headsplit/formats/bpe.hpp"
#include "headsplit/model/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    try {
        if (data[0] % 2 == 0) {
            const auto entries = headsplit::parse_safetensors("fuzz.safetensors", data + 1, size - 1);
            // What is accepted lies inside the data, in order, without overlap.
            std::uint64_t last = 0;
            for (const auto& e : entries) {
                if (e.begin < last || e.end < e.begin) __builtin_trap();
                last = e.end;
            }
        } else {
            const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
            const std::size_t nul = rest.find('\0');
            const std::string vocab = rest.substr(0, nul), merges = nul == std::string::npos ? "" : rest.substr(nul + 1);
            const headsplit::Gpt2Tokenizer tok(vocab, merges, "vocab.json", "merges.txt");
            for (const auto& t : tok.encode("ab ab's naïve 🙂  x\n")) (void)t;
        }
    } catch (const headsplit::ConfigError& e) {
        const std::string msg = e.what();
        if (msg.find('\n') != std::string::npos) __builtin_trap();  // one line
    }
    return 0;
}
