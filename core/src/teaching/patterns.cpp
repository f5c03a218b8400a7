#include "headsplit/teaching/patterns.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace headsplit {

namespace {

constexpr double kLeastWeight = 0.25;  // a pattern's rows give it a quarter of their weight,
constexpr double kLeastLift = 2.0;     // twice what a flat row would,
constexpr double kClearOf = 1.5;       // and half again what they give any other pattern
constexpr std::int64_t kLeastTokens = 6;
constexpr std::int64_t kMostTokens = 64;
constexpr std::int64_t kFirstRow = 2;  // the rows before have one or two keys: anything is likely

// The four patterns, each the keys it names for row t (none: the row is not counted).
enum Pattern { Before, First, Itself, AfterCopy, kPatterns };
const std::array<const char*, kPatterns> kNames = {"the token before", "the first token", "itself",
                                                   "what followed its last copy"};

}  // namespace

std::vector<HeadPattern> head_patterns(const std::vector<float>& weights, const Shape& shape,
                                       const std::vector<std::string>& tokens) {
    if (shape.size() != 4 || shape[2] != shape[3] || shape[0] < 1) return {};
    const std::int64_t H = shape[1], T = shape[2];
    if (static_cast<std::int64_t>(weights.size()) < H * T * T) return {};
    std::vector<HeadPattern> out(static_cast<std::size_t>(H));
    if (T < kLeastTokens || static_cast<std::int64_t>(tokens.size()) < T) return out;
    // Each row's keys for each pattern: the token before, the first, itself, and the one after
    // each earlier copy of the row's token.
    std::vector<std::array<std::vector<std::int64_t>, kPatterns>> keys(static_cast<std::size_t>(T));
    for (std::int64_t t = kFirstRow; t < T; ++t) {
        auto& k = keys[static_cast<std::size_t>(t)];
        k[Before] = {t - 1}, k[First] = {0}, k[Itself] = {t};
        for (std::int64_t j = 0; j < t; ++j)
            if (tokens[static_cast<std::size_t>(j)] == tokens[static_cast<std::size_t>(t)]) k[AfterCopy].push_back(j + 1);
    }
    for (std::int64_t h = 0; h < H; ++h) {
        std::array<HeadPattern, kPatterns> all;
        for (int p = 0; p < kPatterns; ++p) {
            double on = 0, flat = 0;
            std::int64_t rows = 0;
            for (std::int64_t t = kFirstRow; t < T; ++t) {
                const std::vector<std::int64_t>& k = keys[static_cast<std::size_t>(t)][static_cast<std::size_t>(p)];
                if (k.empty()) continue;
                const float* row = &weights[static_cast<std::size_t>((h * T + t) * T)];
                std::int64_t open = 0;  // the keys the row may look at (masked ones are exactly 0)
                for (std::int64_t j = 0; j < T; ++j) open += row[j] > 0.0f;
                if (open == 0) continue;
                for (std::int64_t j : k) on += row[j];
                flat += static_cast<double>(k.size()) / static_cast<double>(open), ++rows;
            }
            if (rows == 0) continue;
            all[static_cast<std::size_t>(p)] = {kNames[static_cast<std::size_t>(p)], on / static_cast<double>(rows), on / flat};
        }
        // The highest lift of those that pass, where its weight stands clear of every other's.
        HeadPattern best;
        for (const HeadPattern& p : all)
            if (p.weight >= kLeastWeight && p.lift >= kLeastLift && p.lift > best.lift) best = p;
        for (const HeadPattern& p : all)
            if (p.name != best.name && p.weight * kClearOf > best.weight) best = {};
        out[static_cast<std::size_t>(h)] = best;
    }
    return out;
}

std::vector<HeadPattern> head_patterns(const Trace& t) {
    if (t.config.cross() || t.config.mode == Mode::Loop || t.config.mode == Mode::Flash) return {};
    for (const Step& s : t.steps) {
        if (s.op != Op::Softmax || s.tensors.empty()) continue;
        const TensorRecord& w = s.tensors.front();
        // (Up to a teaching sentence's length: a long run's weights are made only when shown.)
        if (w.shape.size() != 4 || w.shape[2] != w.shape[3] || w.shape[2] > kMostTokens || !w.has_values()) continue;
        std::vector<std::string> tokens;
        for (std::int64_t i = 0; i < w.shape[2]; ++i) tokens.push_back(t.config.token_at(0, i));
        return head_patterns(w.values(), w.shape, tokens);
    }
    return {};
}

}  // namespace headsplit
