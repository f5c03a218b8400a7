// Flash mode (issue 14): tiled attention with an online softmax. Each expectation comes from
// elsewhere than the tile loop: the output from split mode (which holds the whole score
// grid), a tile's running max from split's own masked, scaled scores, the tile count from
// counting blocks by hand, the memory from the [B, H, T, T] grid split would allocate.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

#include "gui/view/explain.hpp"
#include "headsplit/io/export.hpp"
#include "headsplit/backends/gl_backend.hpp"
#include "helpers.hpp"

using namespace headsplit;
using Catch::Matchers::Contains;

namespace {

const std::vector<float>& result(const Trace& tr) { return tr.steps.back().tensors.back().values(); }

Config small(std::int64_t T, std::int64_t d, std::int64_t heads, std::int64_t block) {
    Config c;
    c.tokens = synthetic_tokens(T);
    c.d_in = d;
    c.d_out = d;
    c.heads = heads;
    c.mode = Mode::Flash;
    c.block = block;
    c.seed = static_cast<std::uint64_t>(T * 17 + d + block);
    return c;
}

Config as_split(Config c) {
    c.mode = Mode::Split;
    c.block = 0;
    return c;
}

Backend& gl_backend() {
    static std::unique_ptr<Backend> gl = make_gl_backend();
    return *gl;
}

Trace run_on(const Config& c, Backend& be, bool values = true) {
    const Inputs in = make_inputs(c);
    const Weights w = make_weights(c);
    Runner r(c, in, w, be);
    RunOptions o;
    o.record_values = values;
    return r.run(o);
}

std::string error_of(const Config& c) {
    return test::refusal_of([&] { check_config(c, kNoWords); });
}

}  // namespace

TEST_CASE("flash gives split's numbers for every block size, mask and variant", "[flash]") {
    struct Shape5 {
        std::int64_t T, d, heads, block, kv_heads;
        bool causal, padded, cross;
    };
    const Shape5 shapes[] = {
        {3, 6, 2, 1, 0, true, false, false},   {3, 6, 2, 2, 0, true, false, false},
        {3, 6, 2, 3, 0, true, false, false},   {7, 8, 2, 3, 0, true, false, false},
        {7, 8, 2, 3, 0, false, false, false},  {16, 16, 4, 4, 0, true, false, false},
        {13, 12, 4, 5, 2, true, false, false}, {13, 12, 4, 5, 1, false, false, false},
        {9, 8, 2, 4, 0, true, true, false},    {6, 8, 2, 4, 0, false, false, true},
        {6, 8, 4, 2, 2, false, true, true},    {40, 32, 4, 16, 0, true, false, false},
        // The GL kernel's other paths: head_dim 130 (acc kept in the buffers, not registers),
        // block 135 (the tile's scores computed again in pass 2), with a key mask.
        {5, 260, 2, 2, 0, true, false, false}, {140, 8, 2, 135, 0, true, true, false},
        // The CPU's pass that records nothing takes 128 query rows against 512 keys at a time:
        // rows and keys that cross those pieces (a partial last piece of each), padded, and
        // cross-attention with grouped heads (703 keys, no causal mask).
        {600, 16, 2, 48, 0, true, true, false}, {700, 16, 4, 64, 2, false, false, true},
        // llvmpipe's flash by chunks of 16384 / head_dim keys: three chunks of a head of 64
        // (padded; cross-attention with grouped heads) and of 128, the rows past the kept
        // tiles going on from their state.
        {600, 128, 2, 64, 0, true, true, false}, {300, 256, 2, 32, 0, true, false, false},
        {520, 256, 4, 64, 2, false, false, true},
    };
    const bool on_gl = GENERATE(false, true);
    for (const Shape5& k : shapes) {
        Config c = small(k.T, k.d, k.heads, k.block);
        c.kv_heads = k.kv_heads;
        c.causal = k.causal;
        if (k.padded) c.set_sentences({synthetic_tokens(k.T), synthetic_tokens(k.T - 2)});
        if (k.cross) c.context = {synthetic_tokens(k.T + 3)};
        INFO("T=" << k.T << " d=" << k.d << " heads=" << k.heads << " block=" << k.block << " kv=" << k.kv_heads
                  << " causal=" << k.causal << " padded=" << k.padded << " cross=" << k.cross << " gl=" << on_gl);
        auto cpu = make_cpu_backend();
        Backend& be = on_gl ? gl_backend() : *cpu;
        const Trace flash = run_on(c, be), split = run_on(as_split(c), *cpu);
        CHECK(test::max_abs_diff(result(flash), result(split)) < 1e-5);
        // Recording nothing runs every tile in one pass: the same output (to rounding, where
        // the CPU takes larger pieces than the tiles).
        const Trace quiet = run_on(c, be, false);
        CHECK(test::max_abs_diff(result(quiet), result(flash)) < 1e-6);
        // The only scores ever held are one tile's: at most block x block per head.
        for (const Step& s : flash.steps)
            for (const TensorRecord& t : s.tensors)
                if (t.name.find("scores") != std::string::npos || t.name.find("weights") != std::string::npos) {
                    CHECK(t.name == "tile_scores");
                    CHECK(t.shape[2] <= k.block);
                    CHECK(t.shape[3] <= k.block);
                }
    }
}

TEST_CASE("a CPU trace makes a tile's values when first read, as the GL backend computed them", "[flash][gl]") {
    // The CPU run computes its tiles in larger pieces and leaves each tile's scores, m, l
    // and acc to a replay; the GL run reads them back tile by tile. Padded, grouped heads,
    // 3 x 3 query and key blocks with a partial last one.
    // 2 x 4 heads x 40 rows x (40 + 16 + 2) values a tile: over the 16,384 from which they are deferred.
    Config c = small(100, 64, 4, 40);
    c.kv_heads = 2;
    c.set_sentences({synthetic_tokens(100), synthetic_tokens(93)});
    auto cpu_be = make_cpu_backend();
    const Trace cpu = run_on(c, *cpu_be), gl = run_on(c, gl_backend());
    REQUIRE(test::op_list(cpu) == test::op_list(gl));
    int tiles = 0;
    for (std::size_t i = 0; i < cpu.steps.size(); ++i) {
        if (cpu.steps[i].op != Op::Tile) continue;
        ++tiles;
        for (std::size_t t = 0; t < cpu.steps[i].tensors.size(); ++t) {
            const TensorRecord& mine = cpu.steps[i].tensors[t];
            const TensorRecord& theirs = gl.steps[i].tensors[t];
            INFO("step " << i << " " << mine.name);
            CHECK(mine.data.empty());  // not made by the run
            REQUIRE(mine.deferred);
            CHECK_FALSE(theirs.data.empty());
            // Made for one reader (the JSON writer's way), then kept by the next: the same numbers.
            std::vector<float> scratch;
            const std::vector<float> once = mine.values_once(scratch);
            CHECK(once == mine.values());
            REQUIRE(static_cast<std::int64_t>(mine.values().size()) == numel(mine.shape));
            // 1e-4 as for every GL step (test_gl.cpp): l sums up to 80 exponentials here.
            CHECK(test::max_abs_diff(mine.values(), theirs.values()) <= 1e-4);
        }
    }
    CHECK(tiles == 1 + 2 + 3);  // causal: query block i runs key blocks 0 .. i (both sentences in each step)
    CHECK(test::max_abs_diff(result(cpu), result(gl)) <= 1e-5);
}

TEST_CASE("the tiles: counted by hand, skipped above the diagonal, m is the running max of split's scores",
          "[flash]") {
    // T = 7 in blocks of 3: query blocks {0-2, 3-5, 6}, key blocks the same. Causal: tile
    // (i, j) runs when j <= i: 1 + 2 + 3 = 6 of 9.
    Config c = small(7, 8, 2, 3);
    const Trace flash = test::run_cpu(c);
    std::vector<std::pair<int, int>> tiles;
    for (const Step& s : flash.steps)
        if (s.op == Op::Tile) tiles.emplace_back(s.tile_q, s.tile_k);
    CHECK(tiles == std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}});
    CHECK(c.tiles_run() == 6);
    const Step* last_of_row0 = test::find_step(flash, Op::Tile);
    CHECK_THAT(last_of_row0->explain, Contains("Key blocks 1 to 2 lie wholly above the diagonal"));
    CHECK_THAT(test::find_step(flash, Op::Normalize)->explain, Contains("6 of 9 tiles (3 skipped"));

    // Split's scores after mask and scale: the running max of row i after key block j is
    // the max of its scores over keys 0 .. end of block j.
    const Trace split = test::run_cpu(as_split(c));
    const Step* scaled = nullptr;
    for (const Step& s : split.steps)
        if (s.op == Op::Scale) scaled = &s;
    REQUIRE(scaled);
    const TensorRecord& grid = scaled->result();  // [1, 2, 7, 7]
    for (const Step& s : flash.steps) {
        if (s.op != Op::Tile) continue;
        const TensorRecord& m = *s.find("m");  // [1, 2, nq]
        for (std::int64_t h = 0; h < 2; ++h)
            for (std::int64_t r = 0; r < m.shape[2]; ++r) {
                const std::int64_t i = s.tile_q * 3 + r, last_key = std::min<std::int64_t>(s.tile_k * 3 + 2, 6);
                float expect = -std::numeric_limits<float>::infinity();
                for (std::int64_t j = 0; j <= last_key; ++j) expect = std::max(expect, grid.values()[((h * 7) + i) * 7 + j]);
                CHECK(m.values()[h * m.shape[2] + r] == Approx(expect).margin(1e-6));
            }
    }
}

TEST_CASE("a corrupted tile is caught by the explanation's recomputation", "[flash]") {
    Config c = small(5, 6, 2, 2);
    Trace tr = test::run_cpu(c);
    Step* tile = nullptr;
    for (Step& s : tr.steps)
        if (s.op == Op::Tile && s.tile_k == 1) tile = &s;
    REQUIRE(tile);
    // l after the second tile of a row = l before * exp(m_old - m_new) + this tile's sum: the
    // record must agree before corruption and disagree after.
    TensorRecord& l = const_cast<TensorRecord&>(*tile->find("l"));
    const Step* before = tr.source_step(l.from.front());  // updated in place: the rows before come first
    REQUIRE(before);
    const TensorRecord& scores = *tile->find("tile_scores");
    const TensorRecord& m_new = *tile->find("m");
    const TensorRecord& m_old = *before->find("m");
    const TensorRecord& l_old = *before->find("l");
    double sum = 0;
    for (std::int64_t j = 0; j < scores.shape[3]; ++j) {
        const float sc = scores.values()[static_cast<std::size_t>(j)];
        if (!std::isinf(sc)) sum += std::exp(sc - m_new.values()[0]);
    }
    const double expect = l_old.values()[0] * std::exp(m_old.values()[0] - m_new.values()[0]) + sum;
    CHECK(l.values()[0] == Approx(expect).epsilon(1e-5));
    const int l_at = static_cast<int>(tile->find("l") - tile->tensors.data());
    const gui::Explanation clean = gui::explain_cell(tr, tile->index, l_at, 0);
    CHECK(clean.recomputed == Approx(expect).epsilon(1e-5));
    // Corrupt a score the update read: the explanation's l no longer matches the record.
    TensorRecord& s_rec = const_cast<TensorRecord&>(*tile->find("tile_scores"));
    REQUIRE(std::isfinite(s_rec.values()[0]));
    s_rec.data = s_rec.values();  // held in the record: a CPU run defers a tile's values
    s_rec.data[0] += 0.5f;
    const gui::Explanation bad = gui::explain_cell(tr, tile->index, l_at, 0);
    CHECK(bad.recomputed != Approx(l.values()[0]).epsilon(1e-3));
}

TEST_CASE("flash at T = 8192 fits the budget that split's score grid breaks", "[flash][memory]") {
    Config c;
    c.tokens = synthetic_tokens(8192);
    c.d_in = c.d_out = 768;
    c.heads = 12;
    c.mode = Mode::Flash;
    const CheckedConfig flash = check_config(c, narration_bytes);
    CHECK(flash.fits_budget());
    CHECK(flash.memory.total() < 2.0 * 1024 * 1024 * 1024);
    // Split holds [1, 12, 8192, 8192] floats at least twice (scores, weights): 3 GiB each.
    const CheckedConfig split = check_config(as_split(c), narration_bytes);
    CHECK_FALSE(split.fits_budget());
    CHECK(split.memory.backend_bytes > 2 * 3.0 * 1024 * 1024 * 1024);
    // The plan keeps the first tiles' values only, and says which.
    const Trace plan_ = plan(flash);
    bool seen_dropped = false;
    int tiles = 0;
    for (const Step& s : plan_.steps) {
        if (s.op != Op::Tile) continue;
        ++tiles;
        if (!s.tile_values) seen_dropped = true;
        else CHECK_FALSE(seen_dropped);  // a prefix
    }
    CHECK(seen_dropped);
    CHECK(tiles == c.tiles_run());
    CHECK(tiles == 128 * 129 / 2);  // 8192 / 64 = 128 query blocks, causal
}

TEST_CASE("the default block gives 2 x 2 tiles from two tokens and keys, 64 for long sequences", "[flash]") {
    // T = 3: block ceil(3 / 2) = 2, blocks {0-1, 2} of queries and of keys; causal, tile
    // (0, 1) lies above the diagonal: 3 of 4 run.
    Config c = small(3, 6, 2, 0);
    CHECK(c.flash_block() == 2);
    CHECK(c.query_blocks() == 2);
    CHECK(c.key_blocks() == 2);
    CHECK(c.tiles_run() == 3);
    CHECK(test::run_cpu(c).steps.size() == test::run_cpu(small(3, 6, 2, 2)).steps.size());
    // T = 1: nothing to split, one tile of one.
    c = small(1, 6, 2, 0);
    CHECK(c.flash_block() == 1);
    CHECK(c.tiles_run() == 1);
    // T = 2: blocks of one, 2 x 2.
    CHECK(small(2, 6, 2, 0).flash_block() == 1);
    // T = 127 rounds up to 64; T = 1000: 64, ceil(1000 / 64) = 16 blocks.
    CHECK(small(127, 6, 2, 0).flash_block() == 64);
    c = small(1000, 6, 2, 0);
    CHECK(c.flash_block() == 64);
    CHECK(c.query_blocks() == 16);
    // Cross-attention: the shorter side decides. 10 queries and 3 keys: block 2, 5 x 2 tiles;
    // 3 queries and 10 keys: block 2, 2 x 5.
    Config cross = small(10, 6, 2, 0);
    cross.causal = false;
    cross.context = {synthetic_tokens(3)};
    CHECK(cross.flash_block() == 2);
    CHECK(cross.query_blocks() == 5);
    CHECK(cross.key_blocks() == 2);
    cross.set_sentences({synthetic_tokens(3)});
    cross.context = {synthetic_tokens(10)};
    CHECK(cross.flash_block() == 2);
    CHECK(cross.key_blocks() == 5);
    REQUIRE_NOTHROW(check_config(cross, kNoWords));
    // A block given is kept (at most T).
    CHECK(small(3, 6, 2, 3).flash_block() == 3);
    CHECK(small(1000, 6, 2, 100).flash_block() == 100);
}

TEST_CASE("the tiles run are those tile_runs lets through, counted one by one", "[flash]") {
    // Every (query block, key block) pair asked, against the count per row; with a context of
    // more keys than queries too.
    for (const bool causal : {true, false}) {
        for (const bool cross : {false, true}) {
            for (const std::int64_t T : {1, 2, 3, 7, 64, 65, 130}) {
                for (const std::int64_t block : {0, 1, 2, 3, 5, 64}) {
                    Config c = small(T, 6, 2, block);
                    c.causal = causal;
                    if (cross) c.context = {synthetic_tokens(T + 3)};
                    std::int64_t n = 0;
                    for (std::int64_t i = 0; i < c.query_blocks(); ++i)
                        for (std::int64_t j = 0; j < c.key_blocks(); ++j) n += c.tile_runs(i, j) ? 1 : 0;
                    INFO("T " << T << " block " << block << " causal " << causal << " cross " << cross);
                    CHECK(c.tiles_run() == n);
                }
            }
        }
    }
    // Without the mask every tile runs.
    Config c = small(3, 6, 2, 1);
    c.context = {{"le", "chat", "dort", "sur", "le"}};
    c.causal = false;
    CHECK(c.tiles_run() == 3 * 5);
}

TEST_CASE("flash refuses what it cannot show, in one line", "[flash][validation]") {
    Config c = small(3, 6, 2, 4);
    CHECK_THAT(error_of(c), Contains("block = 4 is outside 1 to T = 3"));
    c.block = 2;
    c.dropout = 0.1;
    CHECK_THAT(error_of(c), Contains("drop --dropout or use --mode split"));
    c.dropout = 0;
    c.decode_from = 1;
    CHECK_THAT(error_of(c), Contains("drop --decode-from"));
    Config s = as_split(small(3, 6, 2, 2));
    s.block = 2;
    CHECK_THAT(error_of(s), Contains("add --mode flash or drop --block"));
}

TEST_CASE("take-home scripts send flash mode to split, whose numbers it gives", "[flash][export]") {
    const Trace tr = test::run_cpu(small(3, 6, 2, 2));
    CHECK_THROWS_WITH(export_script(tr, ScriptKind::PyTorch), Contains("so export --mode split"));
}
