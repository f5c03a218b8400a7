// The why tab's measurement without a window: the modes timed in rounds and their ratios
// paired round by round, the T sweep, a shape too quick to time moved to a longer length,
// the time kept to, the variants' modes.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>

#include "gui/model/why.hpp"
#include "headsplit/engine/engine.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/model/presets.hpp"

using namespace headsplit;
using namespace headsplit::gui;

TEST_CASE("why weight splits: the modes measured and a T sweep growing as T^2, flash's tiles beside it", "[gui][why]") {
    Config c;  // the cat example, on each backend, with and without dropout (the job's first
    c.backend = GENERATE(BackendKind::Cpu, BackendKind::Gl);  // runs record nothing: issue 10's crash)
    c.dropout = GENERATE(0.0, 0.1);
    std::atomic<int> done{0}, total{0};
    const WhyResult r = measure_why(c, 5, done, total);
    REQUIRE(r.error.empty());
    CHECK(done == total);
    // Flash runs without dropout: left out with it, and said why.
    REQUIRE(r.modes.size() == (c.dropout > 0 ? 3u : 4u));
    CHECK((c.dropout > 0) == (r.notice.find("flash left out") != std::string::npos));
    CHECK(r.modes[0].mode == Mode::Loop);
    CHECK(r.modes[0].matmuls == 11);
    CHECK(r.modes[1].matmuls == 6);
    CHECK(r.modes[2].matmuls == 4);
    // Timed at T = 256 (timing_config): blocks of 64, 4 + 3 + 2 + 1 tiles under the mask.
    REQUIRE(r.timed.num_tokens() == 256);
    if (c.dropout == 0) CHECK(r.modes[3].matmuls == 3 + 2 * 10 + 1);
    for (const BenchResult& b : r.modes) CHECK(b.median_ms > 0);
    REQUIRE(r.sweep.size() >= 4);
    for (std::size_t i = 1; i < r.sweep.size(); ++i) {
        CHECK(r.sweep[i].tokens == 2 * r.sweep[i - 1].tokens);
        CHECK(r.sweep[i].score_bytes == 4 * r.sweep[i - 1].score_bytes);  // quadratic in T
        CHECK((r.sweep[i].flash_ms > 0) == (c.dropout == 0));
    }
    // Past one block (64) flash holds a tile and two numbers per row: linear in T, not T^2.
    const SweepPoint& last = r.sweep.back();
    REQUIRE(last.tokens >= 128);
    CHECK(last.flash_bytes == 4.0 * c.heads * (64 * 64 + 2.0 * last.tokens));
    CHECK(last.flash_bytes < last.score_bytes / 2);
}

TEST_CASE("why weight splits pairs the modes' rounds for their ratios", "[gui][why]") {
    // The machine twice as slow every other round: each mode's figure takes some of it, the
    // ratio of two modes timed side by side in one round does not. Split takes 2 ms, fused
    // 1.6 ms in a quick round (1.25x); one round fused sat out.
    WhyResult r;
    BenchResult split, fused, loop;
    split.mode = Mode::Split, fused.mode = Mode::Fused, loop.mode = Mode::Loop;
    r.round_best = {{2, 4, 2, 4, 2}, {1.6, 3.2, 1.6, 0, 1.6}};
    split.median_ms = 4, fused.median_ms = 1.6;  // medians that met the slow rounds unevenly
    r.modes = {split, fused};
    CHECK(why_ratio(r, Mode::Split, Mode::Fused) == Approx(1.25));
    CHECK(why_ratio(r, Mode::Fused, Mode::Split) == Approx(0.8));
    CHECK(why_ratio(r, Mode::Loop, Mode::Split) == 0);  // not measured
    // Fewer than 3 rounds paired: the figures' ratio.
    r.round_best = {{2, 4, 0, 0, 0}, {1.6, 3.2, 0, 0, 0}};
    CHECK(why_ratio(r, Mode::Split, Mode::Fused) == Approx(2.5));
    r.round_best.clear();  // one round only
    CHECK(why_ratio(r, Mode::Split, Mode::Fused) == Approx(2.5));
}

TEST_CASE("why weight splits times a shape too quick to time at a longer length, and says which", "[gui][why]") {
    // The cat example: D = 6, 2 heads of 3, causal, with the output projection. Its forward's
    // FLOPs (necessary_flops) at length T: projections 4 x 2 T 6 6 = 288 T, QK^T and P @ V
    // 2 x 2 x 2 T T 3, halved by the mask: 12 T^2. T = 3: 972; T = 128: 233,472; T = 256:
    // 860,160, the first of 8, 16, ... past kWhyMinFlops.
    Config c;
    REQUIRE(necessary_flops(c) == 972);
    REQUIRE(necessary_flops(at_length(c, 128)) < kWhyMinFlops);
    REQUIRE(necessary_flops(at_length(c, 256)) >= kWhyMinFlops);
    Config timed = timing_config(c);
    CHECK(timed.num_tokens() == 256);
    CHECK(timed.heads == c.heads);
    CHECK(timed.d_in == c.d_in);
    CHECK(timed.d_out == c.d_out);
    CHECK(timed.causal == c.causal);
    CHECK(timing_note(c, timed) == "timed at T = 256: T = 3 is too quick");
    // The mode on screen is kept, its block left to the default (a block of 1 chosen for
    // three tokens would make 32,896 tiles at 256).
    c.mode = Mode::Flash, c.block = 1;
    timed = timing_config(c);
    CHECK(timed.mode == Mode::Flash);
    CHECK(timed.block == 0);
    REQUIRE_NOTHROW(check_config(timed, kNoWords));
    // A batch keeps its sentences, each with its context; decoding, its share of the tokens
    // read at once (2 of 3: 170 of 256). Each the same sentence.
    Config two;
    two.set_sentences({split_words("the cat sleeps"), split_words("a dog")});
    two.context = {split_words("le chat dort"), split_words("un chien")};
    two.causal = false;
    timed = timing_config(two);
    CHECK(timed.batch == 2);
    CHECK(timed.context == two.context);
    // Its keys stay 3: 2 sentences x (Q and output projections 2 x 2 T 6 6, scores and
    // P @ V 2 x 2 x 2 T 3 3) + K and V 2 x 2 x 2 x 3 x 6 x 6 = 432 T + 864 FLOPs, under
    // kWhyMinFlops even at kWhyLongest: the longest it is.
    CHECK(timed.num_tokens() == kWhyLongest);
    CHECK(necessary_flops(timed) == 432 * kWhyLongest + 864);
    CHECK(timing_note(two, timed) == "timed at T = 1024: T = 3 is too quick");
    REQUIRE_NOTHROW(check_config(timed, kNoWords));
    Config decoding;
    decoding.decode_from = 2;
    timed = timing_config(decoding);
    CHECK(timed.decode_from == 170);
    REQUIRE_NOTHROW(check_config(timed, kNoWords));
    // A shape whose forward is long enough is timed as it is: gpt2-small's sizes at T = 3
    // (4 x 2 x 3 x 768 x 768 FLOPs of projections alone).
    Config wide;
    wide.d_in = wide.d_out = 768;
    wide.heads = 12;
    REQUIRE(necessary_flops(wide) >= kWhyMinFlops);
    CHECK(timing_config(wide).num_tokens() == 3);
    CHECK(timing_note(wide, timing_config(wide)).empty());
    // So is one already at the longest length, and one the memory budget keeps from growing.
    Config long_one;
    long_one.set_sentences({synthetic_tokens(kWhyLongest)});
    long_one.d_in = long_one.d_out = 2, long_one.heads = 1;
    CHECK(timing_config(long_one).num_tokens() == kWhyLongest);
    Config tight;
    tight.memory_budget = static_cast<std::uint64_t>(estimate_memory(tight, kNoWords).total()) + 1;
    CHECK(timing_config(tight).num_tokens() == 3);
}

TEST_CASE("why weight splits keeps to its time: fewer timed runs and a shorter sweep, said", "[gui][why]") {
    Config c;
    c.backend = BackendKind::Cpu;
    // The cat example with time to spare (a day: no timing in the test): every mode's five
    // runs, the sweep to T = 1024, nothing said.
    std::atomic<int> done{0}, total{0};
    const WhyResult full = measure_why(c, 5, done, total, nullptr, 86400);
    REQUIRE(full.error.empty());
    for (const BenchResult& b : full.modes) CHECK(b.runs >= 5 + kWhyRounds - 1);  // a run a round at least
    REQUIRE(full.rounds.size() == full.modes.size());
    for (int rounds : full.rounds) CHECK(rounds == kWhyRounds);
    REQUIRE_FALSE(full.sweep.empty());
    CHECK(full.sweep.back().tokens == 1024);
    CHECK(full.sweep_end.empty());
    // A microsecond: one timed run a mode (a median of one), the first length of the sweep
    // only, the next one's prediction said, and the progress bar's total brought down to what ran.
    std::atomic<int> done2{0}, total2{0};
    const WhyResult cut = measure_why(c, 5, done2, total2, nullptr, 1e-6);
    REQUIRE(cut.error.empty());
    REQUIRE(cut.modes.size() == 4u);
    for (const BenchResult& b : cut.modes) CHECK(b.runs == 1);
    REQUIRE(cut.sweep.size() == 1u);
    CHECK(cut.sweep[0].tokens == 8);
    CHECK(cut.sweep_end.rfind("T >= 16 left out: ", 0) == 0);
    // Its time is a figure a reader can take in: never "0 s" (what the next length would take
    // is above zero), in ms or s.
    const std::string more = cut.sweep_end.substr(cut.sweep_end.find(": ") + 2);
    CHECK(std::stod(more) > 0);
    CHECK((more.find(" ms more") != std::string::npos || more.find(" s more") != std::string::npos));
    CHECK(done2 == total2);
    CHECK(total2 == 4 * kWhyRounds + 2);  // every round counted, the skipped ones too
    for (int rounds : cut.rounds) CHECK(rounds == 1);
}

TEST_CASE("why weight splits measures the variants, leaving out the modes they refuse", "[gui][why][variants]") {
    // A padded batch with one context per sentence (fused refused); decoding (loop refused).
    Config cross;
    cross.backend = BackendKind::Cpu;
    cross.set_sentences({split_words("the cat sleeps"), split_words("a dog")});
    cross.context = {split_words("le chat dort"), split_words("un chien")};
    cross.causal = false;
    cross.kv_heads = 1;
    Config decode;
    decode.backend = BackendKind::Cpu;
    decode.decode_from = 1;
    for (const Config& c : {cross, decode}) {
        std::atomic<int> done{0}, total{0};
        const WhyResult r = measure_why(c, 5, done, total);
        INFO(r.error << " / " << r.notice);
        REQUIRE(r.error.empty());
        CHECK(r.modes.size() == (c.decoding() ? 2u : 3u));  // flash takes the context, not decoding
        CHECK(r.notice.find(c.decoding() ? "loop left out" : "fused left out") != std::string::npos);
        CHECK(c.decoding() == (r.notice.find("flash left out") != std::string::npos));
        CHECK(r.sweep.size() >= 4);
    }
}

TEST_CASE("HEADSPLIT_WHY_SECONDS shortens the measurement; another value is refused in a line", "[gui][why]") {
    struct Restore {
        ~Restore() { unsetenv("HEADSPLIT_WHY_SECONDS"); }
    } restore;
    unsetenv("HEADSPLIT_WHY_SECONDS");
    std::string refused;
    CHECK(why_seconds(&refused) == kWhySeconds);
    CHECK(refused.empty());
    for (const char* good : {"0.5", "1e-6", "10"}) {
        setenv("HEADSPLIT_WHY_SECONDS", good, 1);
        CHECK(why_seconds(&refused) == std::strtod(good, nullptr));
        CHECK(refused.empty());
    }
    for (const char* bad : {"abc", "0", "-1", "10.5", "1e400", "nan", "inf", "5x", " 5 "}) {
        refused.clear();
        setenv("HEADSPLIT_WHY_SECONDS", bad, 1);
        CHECK(why_seconds(&refused) == kWhySeconds);
        CHECK(refused.find(std::string("\"") + bad + "\"") != std::string::npos);
        CHECK(refused.find("measuring for 10 s") != std::string::npos);
        CHECK(refused.find('\n') == std::string::npos);
    }
}
