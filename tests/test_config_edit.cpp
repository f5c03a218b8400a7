// The rules for changing a configuration one setting at a time (config_edit.hpp): each leaves a
// configuration check_config accepts, and the names round-trip.
#include <catch2/catch.hpp>

#include "headsplit/engine/config_edit.hpp"
#include "headsplit/engine/engine.hpp"

using namespace headsplit;

TEST_CASE("mode and backend names read back as what mode_name and backend_name write", "[config_edit]") {
    // The names the README and --help give, written out here, not taken from the code.
    const std::pair<const char*, Mode> modes[] = {
        {"loop", Mode::Loop}, {"split", Mode::Split}, {"fused", Mode::Fused}, {"flash", Mode::Flash}};
    for (const auto& [name, mode] : modes) {
        Mode m = Mode::Split;
        REQUIRE(mode_from_name(name, &m));
        CHECK(m == mode);
        CHECK(std::string(mode_name(mode)) == name);
    }
    Mode m = Mode::Fused;
    CHECK_FALSE(mode_from_name("Split", &m));
    CHECK_FALSE(mode_from_name("", &m));
    CHECK(m == Mode::Fused);  // untouched when refused
    BackendKind b = BackendKind::Cpu;
    CHECK(backend_from_name("gl", &b));
    CHECK(b == BackendKind::Gl);
    CHECK_FALSE(backend_from_name("cuda", &b));
}

TEST_CASE("key/value heads fit in whole groups, worked by hand", "[config_edit]") {
    Config c;
    c.d_out = 12;
    c.heads = 6;
    for (std::int64_t kv : {1, 2, 3, 6}) {
        c.kv_heads = kv;
        CHECK(kv_heads_fit(c));
    }
    for (std::int64_t kv : {4, 5, 7, 12, -1}) {
        c.kv_heads = kv;
        CHECK_FALSE(kv_heads_fit(c));
    }
    CHECK(divisor_list(12) == "1, 2, 3, 4, 6, 12");
    // 6 heads with 3 KV heads; 4 heads leave 3 without whole groups: the nearest divisor below is 2.
    c.kv_heads = 3;
    const std::string why = set_heads(c, 4);
    CHECK(c.kv_heads == 2);
    CHECK(why == "3 KV heads cannot serve 4 heads in equal groups; now 2 KV heads");
    REQUIRE_NOTHROW(check_config(c, kNoWords));
    // D_out 10 with 4 heads: 2 heads (the largest divisor of 10 at most 4), and the KV heads follow.
    const std::string d = set_d_out(c, 10);
    CHECK(c.heads == 2);
    CHECK(c.kv_head_count() == 2);  // 2 KV heads for 2 heads: plain multi-head attention
    CHECK_FALSE(c.grouped());
    CHECK(d.find("now 2 heads") != std::string::npos);
    REQUIRE_NOTHROW(check_config(c, kNoWords));
}

TEST_CASE("mode, decoding and cross-attention switches leave a configuration that runs", "[config_edit]") {
    Config c;
    c.set_sentences({split_words("a b c d e f g h i")});
    c.dropout = 0.2;
    set_decoding(c, true);
    CHECK(c.decode_from == 4);  // half of 9
    CHECK(c.dropout == 0);
    REQUIRE_NOTHROW(check_config(c, kNoWords));
    set_mode(c, Mode::Flash);
    CHECK(c.block == 3);  // about three blocks of queries
    CHECK(c.decode_from == 0);
    REQUIRE_NOTHROW(check_config(c, kNoWords));
    set_mode(c, Mode::Loop);
    CHECK(c.block == 0);
    set_cross(c, true);
    CHECK_FALSE(c.causal);
    REQUIRE_NOTHROW(check_config(c, kNoWords));
    set_cross(c, false);
    REQUIRE_NOTHROW(check_config(c, kNoWords));
}

TEST_CASE("a new text keeps the run's settings, fitted to its length", "[config_edit]") {
    Config run;
    run.set_sentences({split_words("one two three four five six seven eight")});
    set_mode(run, Mode::Flash);
    run.block = 8;
    run.seed = 7;
    run.scale_first = true;
    run.backend = BackendKind::Gl;
    Config next;  // three words
    keep_run_settings(run, next);
    CHECK(next.mode == Mode::Flash);
    CHECK(next.block == 3);  // the tile block clamped to the shorter text
    CHECK(next.seed == 7);
    CHECK(next.scale_first);
    CHECK(next.backend == BackendKind::Gl);
    CHECK(next.tokens == std::vector<std::string>{"the", "cat", "sleeps"});
    REQUIRE_NOTHROW(check_config(next, kNoWords));

    Config decoding = run;
    set_mode(decoding, Mode::Split);
    set_decoding(decoding, true);
    decoding.decode_from = 7;
    Config short_text;
    short_text.set_sentences({split_words("a b")});
    keep_run_settings(decoding, short_text);
    CHECK(short_text.decode_from == 1);  // one round left after the prefill
    REQUIRE_NOTHROW(check_config(short_text, kNoWords));
    short_text.set_sentences({split_words("a")});
    fit_to_text(short_text);
    CHECK(short_text.decode_from == 0);  // one token: no decoding
}
