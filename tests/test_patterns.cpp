// The heads' patterns read from attention weights: hand-made rows whose pattern is known, and
// the shipped tiny model, whose heads docs/checkpoints.md measured with PyTorch.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "headsplit/backends/cpu_backend.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/model/presets.hpp"
#include "headsplit/teaching/narration.hpp"
#include "headsplit/teaching/patterns.hpp"

using namespace headsplit;

namespace {

// Causal weights [1, H, T, T]: row t of head h from `row(h, t)` (its open keys 0..t).
template <typename Row>
std::vector<float> causal(std::int64_t H, std::int64_t T, Row row) {
    std::vector<float> w(static_cast<std::size_t>(H * T * T), 0.0f);
    for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t t = 0; t < T; ++t) {
            const std::vector<float> r = row(h, t);
            for (std::int64_t j = 0; j <= t; ++j) w[static_cast<std::size_t>((h * T + t) * T + j)] = r[static_cast<std::size_t>(j)];
        }
    return w;
}

// A row of t + 1 open keys: `on` on key k, the rest spread evenly (flat where k < 0).
std::vector<float> peaked(std::int64_t t, std::int64_t k, float on) {
    if (k < 0 || t == 0) return std::vector<float>(static_cast<std::size_t>(t + 1), 1.0f / static_cast<float>(t + 1));
    std::vector<float> r(static_cast<std::size_t>(t + 1), (1.0f - on) / static_cast<float>(t));
    r[static_cast<std::size_t>(k)] = on;
    return r;
}

}  // namespace

TEST_CASE("a head is named by the key its rows weigh most above chance", "[patterns]") {
    // "a b c a b c": head 0 puts 0.7 on the token before; head 1 is flat; head 2 puts 0.8 on
    // the token after the row's earlier copy (rows 3-5: keys 1, 2, 3), flat before that.
    const std::vector<std::string> tokens{"a", "b", "c", "a", "b", "c"};
    const std::vector<float> w = causal(3, 6, [](std::int64_t h, std::int64_t t) {
        if (h == 0) return peaked(t, t - 1, 0.7f);
        if (h == 2) return peaked(t, t >= 3 ? t - 2 : -1, 0.8f);
        return peaked(t, -1, 0.0f);
    });
    const std::vector<HeadPattern> p = head_patterns(w, {1, 3, 6, 6}, tokens);
    REQUIRE(p.size() == 3);
    CHECK(p[0].name == "the token before");
    CHECK(p[0].weight == Approx(0.7));
    // Flat rows over t + 1 keys, rows t = 2..5: 1/3 + 1/4 + 1/5 + 1/6 = 0.95 in all.
    CHECK(p[0].lift == Approx(0.7 * 4 / (1.0 / 3 + 1.0 / 4 + 1.0 / 5 + 1.0 / 6)));
    CHECK(p[1].name.empty());
    CHECK(p[2].name == "what followed its last copy");
    CHECK(p[2].lift == Approx(0.8 * 3 / (1.0 / 4 + 1.0 / 5 + 1.0 / 6)));
    // Without the copies (all tokens differ), head 2's rows name nothing the pattern needs.
    const std::vector<HeadPattern> plain = head_patterns(w, {1, 3, 6, 6}, {"a", "b", "c", "d", "e", "f"});
    CHECK(plain[2].name.empty());
    // Five tokens are too few rows to tell; a shape the weights do not fill names nothing.
    const std::vector<float> five = causal(1, 5, [](std::int64_t, std::int64_t t) { return peaked(t, t - 1, 0.9f); });
    const std::vector<HeadPattern> few = head_patterns(five, {1, 1, 5, 5}, {"a", "b", "c", "d", "e"});
    CHECK((few.size() == 1 && few[0].name.empty()));
    CHECK(head_patterns(five, {1, 2, 5, 5}, {"a", "b", "c", "d", "e"}).empty());
    CHECK(head_patterns(five, {1, 1, 5, 4}, {"a", "b", "c", "d", "e"}).empty());
}

TEST_CASE("the shipped tiny model's heads are named as PyTorch measured them", "[patterns][checkpoint]") {
    // docs/checkpoints.md, on the preset's sentence (tests/gpt2_checkpoint.py, PyTorch): head
    // 0.3 puts 0.30 of each row on the token before (the other layer-0 heads 0.05 to 0.09);
    // 0.0 puts 0.65 on the first token; 3.2 0.53 on the token after an earlier copy.
    const Config preset = config_from_preset("tiny-trained");
    const std::string text = "The cat sat on the mat, and the dog sat on the cat.";
    auto layer = [&](std::int64_t l) {
        Config c = gpt2_config(preset.weights_dir, text, l);
        c.backend = BackendKind::Cpu;
        auto backend = make_cpu_backend();
        Trace t = run(c, make_inputs(c), load_weights(c), *backend);
        narrate(t);
        return t;
    };
    const Trace first = layer(0);
    REQUIRE(first.head_notes.size() == 4);
    CHECK(first.head_notes[3] == "the token before");
    CHECK(first.head_notes[0] == "the first token");
    const std::vector<HeadPattern> p0 = head_patterns(first);
    CHECK(p0[3].weight == Approx(0.30).margin(0.02));
    CHECK(p0[0].weight == Approx(0.65).margin(0.02));
    const Trace last = layer(3);
    REQUIRE(last.head_notes.size() == 4);
    CHECK(last.head_notes[2] == "what followed its last copy");
    CHECK(head_patterns(last)[2].weight == Approx(0.53).margin(0.03));
}

TEST_CASE("random weights name no head, and the default example is too short to", "[patterns]") {
    // Seeded random weights keep every row near flat; three tokens are too few rows.
    Config c;
    c.backend = BackendKind::Cpu;
    auto notes_of = [](const Config& config) {
        auto backend = make_cpu_backend();
        Trace t = run(config, make_inputs(config), load_weights(config), *backend);
        narrate(t);
        return t.head_notes;
    };
    CHECK(notes_of(c) == std::vector<std::string>(2));
    c.tokens = {"the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "today"};
    c.d_in = c.d_out = 8;
    c.heads = 4;
    CHECK(notes_of(c) == std::vector<std::string>(4));
}
