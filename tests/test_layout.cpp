// The stage's layout logic without a window: after view, transpose and merge every cell
// lands where its value says it should, and is matched to the cell it came from.
#include <algorithm>
#include <cmath>
#include <set>

#include <catch2/catch.hpp>

#include "gui/view/layout.hpp"
#include "helpers.hpp"

using namespace headsplit;
using namespace headsplit::gui;

namespace {

// Flattened values of a step's tensors, in match_cells' order.
std::vector<float> flat_values(const Step& s) {
    std::vector<float> v;
    for (const auto& t : s.tensors) v.insert(v.end(), t.values().begin(), t.values().end());
    return v;
}

// Every element of `to` has a match in `from` holding the very same value.
void check_every_cell_traced(const Step& from, const Step& to) {
    INFO(op_name(from.op) << " -> " << op_name(to.op));
    const std::vector<int> m = match_cells(from, to);
    const auto a = flat_values(from), b = flat_values(to);
    REQUIRE(m.size() == b.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
        REQUIRE(m[i] >= 0);
        CHECK(a[static_cast<std::size_t>(m[i])] == b[i]);
    }
}

}  // namespace

TEST_CASE("view, transpose, transpose back and merge keep every value traceable", "[layout]") {
    const Trace tr = test::run_cpu(Config{});  // the 12 steps tabled in tests/test_steps.cpp
    check_every_cell_traced(tr.steps[1], tr.steps[2]);   // project -> view
    check_every_cell_traced(tr.steps[2], tr.steps[3]);   // view -> transpose
    check_every_cell_traced(tr.steps[1], tr.steps[3]);   // project -> transpose, skipping a step
    check_every_cell_traced(tr.steps[3], tr.steps[1]);   // and backwards
    // scores -> mask works in place: every cell is itself, some now -inf.
    const std::vector<int> in_place = match_cells(tr.steps[4], tr.steps[5]);
    for (std::size_t i = 0; i < in_place.size(); ++i) CHECK(in_place[i] == static_cast<int>(i));
    check_every_cell_traced(tr.steps[8], tr.steps[9]);   // context -> transpose back
    check_every_cell_traced(tr.steps[9], tr.steps[10]);  // transpose back -> merge (a copy)
    check_every_cell_traced(tr.steps[10], tr.steps[9]);  // and backwards across the copy
    // Softmax makes new values: nothing to trace back to.
    for (int m : match_cells(tr.steps[6], tr.steps[7])) CHECK(m == -1);
}

TEST_CASE("cells land where their index says", "[layout]") {
    const Trace tr = test::run_cpu(Config{});
    const Step& project = tr.steps[1];
    const std::int64_t T = 3, H = 2, hd = 3, D = 6;
    const StepLayout p = layout_step(project, H, hd);
    const StepLayout v = layout_step(tr.steps[2], H, hd);
    const StepLayout t = layout_step(tr.steps[3], H, hd);
    const StepLayout m = layout_step(tr.steps[10], H, hd);
    const auto& q = project.tensors[0].values();  // queries [1, 3, 6]
    for (std::int64_t tok = 0; tok < T; ++tok)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t d = 0; d < hd; ++d) {
                const std::int64_t f = h * hd + d;
                INFO("token " << tok << " head " << h << " d " << d);
                // project: row = token, column = feature, coloured by the head it will go to
                const Cell* at[4] = {p.tensors[0].cell_at(tok * D + f), v.tensors[0].cell_at((tok * H + h) * hd + d),
                                     t.tensors[0].cell_at((h * T + tok) * hd + d), m.tensors[0].cell_at(tok * D + f)};
                for (const Cell* c : at) REQUIRE(c);  // every element of these small tensors is shown
                const Cell& cp = *at[0];
                CHECK(cp.x == f);
                CHECK(cp.y == tok);
                CHECK(cp.head == h);
                // view [1, 3, 2, 3]: one panel per token (stacked), its heads as rows under its title
                const Cell& cv = *at[1];
                CHECK(cv.x == d);
                CHECK(cv.y == Approx(tok * (kPanelTitle + H + kPanelRowGap) + kPanelTitle + h));
                CHECK(cv.head == h);
                CHECK(tr.steps[2].tensors[0].values()[(tok * H + h) * hd + d] == q[tok * D + f]);
                // transpose [1, 2, 3, 3]: head panels stacked, the token a row inside its panel
                const Cell& ct = *at[2];
                CHECK(ct.x == d);
                CHECK(ct.y == Approx(h * (kPanelTitle + T + kPanelRowGap) + kPanelTitle + tok));
                CHECK(ct.head == h);
                CHECK(tr.steps[3].tensors[0].values()[(h * T + tok) * hd + d] == q[tok * D + f]);
                // merge [1, 3, 6]: flat again, token row, feature column
                const Cell& cm = *at[3];
                CHECK(cm.x == f);
                CHECK(cm.y == tok);
                CHECK(tr.steps[10].tensors[0].values()[tok * D + f] ==
                      tr.steps[8].tensors[0].values()[(h * T + tok) * hd + d]);
            }
    // queries, keys and values stand side by side.
    CHECK(t.tensors[1].x == Approx(t.tensors[0].width + kTensorGap));
    // The panels: three tokens after the view, two heads after the transpose, none for a matrix.
    REQUIRE(v.tensors[0].panels.size() == 3);
    CHECK(v.tensors[0].token_panels);
    CHECK(v.tensors[0].panels[2].index == 2);
    CHECK(v.tensors[0].panels[2].y == Approx(2 * (kPanelTitle + H + kPanelRowGap)));
    REQUIRE(t.tensors[0].panels.size() == 2);
    CHECK_FALSE(t.tensors[0].token_panels);
    CHECK(t.tensors[0].panels[1].h == Approx(kPanelTitle + T));
    CHECK(p.tensors[0].panels.empty());
    CHECK(m.tensors[0].panels.empty());
}

TEST_CASE("a tensor's panels stand in a grid of the columns asked for", "[layout]") {
    const Trace tr = test::run_cpu(Config{});
    LayoutLimits lim;
    lim.panel_cols = 2;  // three token panels: two in the first row, one under them
    const StepLayout v = layout_step(tr.steps[2], 2, 3, lim);
    const TensorLayout& q = v.tensors[0];
    // Element [0, tok, h, d] of the view is at flat index (tok * 2 + h) * 3 + d.
    const Cell* last = q.cell_at((2 * 2 + 1) * 3 + 2);  // token 2, head 1, feature 2
    REQUIRE(last);
    CHECK(last->x == Approx(2.0f));
    CHECK(last->y == Approx(kPanelTitle + 2 + kPanelRowGap + kPanelTitle + 1));
    const Cell* second = q.cell_at((1 * 2 + 0) * 3 + 0);  // token 1, head 0, feature 0: beside token 0
    REQUIRE(second);
    CHECK(second->x == Approx(3 + kPanelGap));
    CHECK(second->y == Approx(kPanelTitle));
    CHECK(q.width == Approx(2 * 3 + kPanelGap));
    CHECK(q.height == Approx(2 * (kPanelTitle + 2) + kPanelRowGap));
    // More columns than panels: all in one row.
    lim.panel_cols = 16;
    CHECK(layout_step(tr.steps[2], 2, 3, lim).tensors[0].height == Approx(kPanelTitle + 2));
}

TEST_CASE("tensors of a step stand in the rows of tensors asked for", "[layout]") {
    CHECK(tensors_per_row(3, 1) == 3);
    CHECK(tensors_per_row(3, 2) == 2);  // queries and keys, values under them
    CHECK(tensors_per_row(3, 3) == 1);
    CHECK(tensors_per_row(4, 3) == 2);  // the first rows full: 2 + 2
    CHECK(tensors_per_row(0, 2) == 1);
    const Trace tr = test::run_cpu(Config{});
    LayoutLimits lim;
    lim.tensor_rows = 2;
    const StepLayout p = layout_step(tr.steps[1], 2, 3, lim);  // the project step: three [1, 3, 6]
    REQUIRE(p.tensors.size() == 3);
    CHECK(p.tensors[0].x == 0);
    CHECK(p.tensors[0].y == 0);
    CHECK(p.tensors[1].x == Approx(6 + kTensorGap));
    CHECK(p.tensors[1].y == 0);
    CHECK(p.tensors[2].x == 0);
    CHECK(p.tensors[2].y == Approx(3 + kTensorRowGap));  // under a row 3 cells tall and the names' gap
    CHECK(p.width == Approx(6 + kTensorGap + 6));
    CHECK(p.height == Approx(3 + kTensorRowGap + 3));
    // Values' first cell (token 0, feature 0) stands at the start of the second row.
    REQUIRE(p.tensors[2].cell_at(0));
    CHECK(p.tensors[2].cell_at(0)->x == 0);
    CHECK(p.tensors[2].cell_at(0)->y == Approx(3 + kTensorRowGap));
    lim.tensor_rows = 1;
    CHECK(layout_step(tr.steps[1], 2, 3, lim).height == Approx(3));
}

TEST_CASE("fused: the chunk views are the qkv cells", "[layout]") {
    Config c;
    c.mode = Mode::Fused;
    const Trace tr = test::run_cpu(c);
    check_every_cell_traced(tr.steps[1], tr.steps[2]);  // qkv -> chunk
    const StepLayout qkv = layout_step(tr.steps[1], 2, 3);
    REQUIRE(qkv.tensors[0].cell_at(6));
    REQUIRE(qkv.tensors[0].cell_at(9));
    CHECK(qkv.tensors[0].cell_at(6)->head == 0);   // keys' first feature: head 0 of keys
    CHECK(qkv.tensors[0].cell_at(9)->head == 1);
    CHECK(qkv.tensors[0].colours.of_element(9) == 1);  // the same answer for any element
}

// 40 tokens, D_out 96, 6 heads of 16: larger than any window of the stage.
Trace forty_tokens() {
    Config c;
    c.tokens = synthetic_tokens(40);
    c.d_in = c.d_out = 96;
    c.heads = 6;
    return test::run_cpu(c);
}

TEST_CASE("large tensors show a window of cells", "[layout]") {
    const Trace tr = forty_tokens();
    const StepLayout t = layout_step(tr.steps[3], 6, 16);  // [1, 6, 40, 16]
    const auto visible = static_cast<std::int64_t>(t.tensors[0].cells.size());
    CHECK(visible == 4 * 16 * 12);  // 4 heads x 16 tokens x 12 features by default
    CHECK(t.tensors[0].hidden == 3840 - 768);  // 6 x 40 x 16 elements
    // Only the window's cells are kept, in row-major order, each naming its element.
    for (std::size_t i = 1; i < t.tensors[0].cells.size(); ++i)
        CHECK(t.tensors[0].cells[i - 1].index < t.tensors[0].cells[i].index);
    // A hidden element still has its head's colour (the memory strip shows every element):
    // element [0, 5, 39, 15] lies in head 5, outside the 4 heads shown.
    CHECK(t.tensors[0].cell_at((5 * 40 + 39) * 16 + 15) == nullptr);
    CHECK(t.tensors[0].colours.of_element((5 * 40 + 39) * 16 + 15) == 5);
}

TEST_CASE("a score grid's colour scale is its largest finite magnitude, hidden cells included", "[layout]") {
    // The teaching example's masked scores, made by hand: 1 where finite, -7.25 at [0, 0, 0, 0]
    // (key 0 of query 0, never masked), -inf above the diagonal.
    const Trace small = test::run_cpu(Config{});
    Step mask = small.steps[5];
    REQUIRE(mask.op == Op::Mask);
    std::vector<float> v = mask.tensors[0].values();
    REQUIRE(std::isinf(v[1]));  // query 0 sees key 0 only
    for (float& x : v)
        if (std::isfinite(x)) x = 1.0f;
    v[0] = -7.25f;
    mask.tensors[0].data = v;
    mask.tensors[0].deferred = nullptr;
    CHECK(layout_step(mask, 2, 3).tensors[0].colour_scale == 7.25f);
    // Not a grid: no scale.
    CHECK(layout_step(small.steps[1], 2, 3).tensors[0].colour_scale == 0.0f);
    // 40 tokens: the largest value in the last head, outside the window of cells shown.
    const Trace tr = forty_tokens();
    Step scores = tr.steps[4];
    REQUIRE(scores.op == Op::Scores);
    std::vector<float> g = scores.tensors[0].values();
    for (float& x : g) x = std::clamp(x, -2.0f, 2.0f);
    g.back() = 9.5f;  // [0, 5, 39, 39]
    scores.tensors[0].data = g;
    scores.tensors[0].deferred = nullptr;
    const StepLayout l = layout_step(scores, 6, 16);
    CHECK(l.tensors[0].cell_at(static_cast<std::int64_t>(g.size()) - 1) == nullptr);
    CHECK(l.tensors[0].colour_scale == 9.5f);
}

TEST_CASE("a panned window shows the cells it starts at, and stops at the tensor's ends", "[layout]") {
    const Trace tr = forty_tokens();
    const Step& s = tr.steps[3];  // [1, 6, 40, 16], head panels stacked, 16 x 12 x 4 shown
    LayoutLimits lim;
    lim.token0 = 30, lim.col0 = 10, lim.head0 = 5;  // past the ends: clamped to 24, 4, 2
    const StepLayout L = layout_step(s, 6, 16, lim);
    const TensorLayout& t = L.tensors[0];
    CHECK(t.token0 == 24);
    CHECK(t.col0 == 4);
    CHECK(t.head0 == 2);
    CHECK(L.max_token0 == 24);
    CHECK(L.max_col0 == 4);
    CHECK(L.max_head0 == 2);
    // Element [0, h, tok, f] is at flat index (h * 40 + tok) * 16 + f.
    auto at = [&](int h, int tok, int f) { return t.cell_at((h * 40 + tok) * 16 + f); };
    REQUIRE(at(2, 24, 4));
    CHECK(at(2, 24, 4)->x == 0.0f);
    CHECK(at(2, 24, 4)->y == kPanelTitle);  // under its panel's title
    CHECK(at(2, 24, 4)->head == 2);
    REQUIRE(at(5, 39, 15));  // the last element is the window's last cell
    CHECK(at(5, 39, 15)->x == 11.0f);
    CHECK(at(5, 39, 15)->y == Approx(3 * (kPanelTitle + 16 + kPanelRowGap) + kPanelTitle + 15));
    CHECK(t.cells.back().index == (5 * 40 + 39) * 16 + 15);
    CHECK_FALSE(at(2, 23, 4));
    CHECK_FALSE(at(2, 24, 3));
    CHECK_FALSE(at(1, 30, 8));
    CHECK(t.cells.size() == 4 * 16 * 12);

    SECTION("a drag moves whole cells, keeps the fraction, and clamps at the ends") {
        LayoutLimits l;  // starts at 0, 0, 0
        const StepLayout L0 = layout_step(s, 6, 16, l);
        Pan p = pan_window(l, L0, -3.5f, -5.25f);  // content follows the pointer: up-left shows later cells
        CHECK(p.pans_x);
        CHECK(p.pans_y);
        CHECK(l.col0 == 3);
        CHECK(l.token0 == 5);
        CHECK(p.rest_x == Approx(-0.5f));
        CHECK(p.rest_y == Approx(-0.25f));
        p = pan_window(l, L0, 100.0f, -100.0f);
        CHECK(l.col0 == 0);
        CHECK(l.token0 == 24);
        CHECK(std::fabs(p.rest_x) < 1.0f);  // what was lost at the end is not owed back
    }
    SECTION("the teaching example's windows show everything: a drag scrolls the panel instead") {
        const Trace small = test::run_cpu(Config{});
        LayoutLimits l;
        const StepLayout Ls = layout_step(small.steps[3], 2, 3, l);
        const Pan p = pan_window(l, Ls, 4.0f, 4.0f);
        CHECK_FALSE(p.pans_x);
        CHECK_FALSE(p.pans_y);
        CHECK(l.token0 == 0);
        CHECK(l.col0 == 0);
    }
}

TEST_CASE("head panels side by side pan by whole heads when every column shows", "[layout]") {
    Config c;
    c.tokens = synthetic_tokens(8);
    c.d_in = c.d_out = 48;
    c.heads = 6;  // head_dim 8: all columns of a head show
    const Trace tr = test::run_cpu(c);
    LayoutLimits l = layout_variant(kArrangements + 1);  // 16 tokens, 4 heads, 12 features, panels in 2 columns
    const StepLayout L = layout_step(tr.steps[3], 6, 8, l);
    REQUIRE(L.max_col0 == 0);
    REQUIRE(L.max_head0 == 2);
    const Pan p = pan_window(l, L, -2 * (8 + kPanelGap) - 0.3f, 0);
    CHECK(p.pans_x);
    CHECK(l.head0 == 2);
    CHECK_FALSE(p.pans_y);
    const StepLayout moved = layout_step(tr.steps[3], 6, 8, l);
    REQUIRE(moved.tensors[0].cell_at(2 * 8 * 8));
    CHECK(moved.tensors[0].cell_at(2 * 8 * 8)->x == 0.0f);  // head 2's first cell leads
    CHECK(moved.tensors[0].cell_at(2 * 8 * 8)->head == 2);
}

TEST_CASE("sentences of a batch are blocks one under the other; shared keys take their group's colour", "[layout][variants]") {
    Config c;
    c.d_in = c.d_out = 8;
    c.heads = 4;
    c.kv_heads = 2;
    c.set_sentences({split_words("the cat sleeps"), split_words("a dog")});
    const Trace tr = test::run_cpu(c);
    for (const Step& s : tr.steps) {
        INFO("step " << s.index << " " << op_name(s.op));
        const StepLayout L = layout_step(s, c);
        for (std::size_t ti = 0; ti < L.tensors.size(); ++ti) {
            const TensorLayout& tl = L.tensors[ti];
            const TensorRecord& t = s.tensors[ti];
            // No two visible cells of a tensor share a place: the sentences do not overlap.
            std::set<std::pair<int, int>> places;
            for (const Cell& cell : tl.cells)
                CHECK(places.insert({static_cast<int>(std::lround(cell.x * 4)), static_cast<int>(std::lround(cell.y * 4))}).second);
            if (t.shape.size() < 3) continue;
            CHECK(tl.batches == 2);
            // Sentence 1's first cell sits a block and a gap under sentence 0's.
            const std::size_t per_sentence = static_cast<std::size_t>(numel(t.shape) / 2);
            REQUIRE(tl.cell_at(static_cast<std::int64_t>(per_sentence)));
            CHECK(tl.cell_at(static_cast<std::int64_t>(per_sentence))->y == Approx(tl.cells[0].y + tl.block_height + kBatchGap));
            CHECK(row_name(c, tl, 1, 2) == "<pad>");  // "a dog" padded to 3
        }
        // Keys with 2 key/value heads for 4 query heads: head g's cells take query head 2g's colour.
        if (s.op == Op::Transpose) {
            const TensorLayout& keys = L.tensors[1];
            CHECK(keys.kv_heads);
            const std::int64_t per_head = 3 * 2;  // T x head_dim
            REQUIRE(keys.cell_at(0));
            REQUIRE(keys.cell_at(per_head));
            CHECK(keys.cell_at(0)->head == 0);
            CHECK(keys.cell_at(per_head)->head == 2);
        }
        if (s.op == Op::RepeatKv) {
            const TensorLayout& keys = L.tensors[0];  // [2, 4, 3, 2]: heads 0, 1 share kv 0
            CHECK_FALSE(keys.kv_heads);
            REQUIRE(keys.cell_at(6));
            REQUIRE(keys.cell_at(12));
            CHECK(keys.cell_at(6)->head == 0);   // query head 1's copy: its group's colour
            CHECK(keys.cell_at(12)->head == 2);  // query head 2: kv head 1
        }
    }
    // One sentence shown from the second: its rows are the second sentence's tokens.
    LayoutLimits one;
    one.batch = 1;
    one.batch0 = 1;
    const StepLayout L = layout_step(tr.steps[0], c, one);
    CHECK(L.tensors[0].batch0 == 1);
    CHECK(row_name(c, L.tensors[0], 1, 0) == "a");
    CHECK(L.tensors[0].cell_at(0) == nullptr);  // sentence 0 is not drawn
    CHECK(L.tensors[0].cells.front().index == 3 * 8);  // sentence 1's first element (3 tokens x 8)
}

TEST_CASE("one head large with thumbnails: the strip goes where the large map's cells are larger", "[layout]") {
    // Worked by hand: 4 heads of 10 tokens in 460 x 400 px, 110 px of row labels and 64 px of
    // title and key labels per map, 10 px gaps, thumbnails 40 px under a 30 px title.
    // Along the right: 5 fit a column (400 / 80), one column of 50 px; the large map gets
    // min((410 - 120) / 10, (400 - 74) / 10) = 29 px. Along the bottom: 9 fit a row, one row of
    // 80 px; min((460 - 120) / 10, (320 - 74) / 10) = 24.6 px. The right wins.
    const FocusTiling t = focus_tiling(4, 10, 460, 400, 110, 64, 10, 40, 30, 30, 10);
    CHECK(t.right);
    CHECK(t.per_line == 5);
    CHECK(t.strip == Approx(50));
    CHECK(t.thumb == Approx(40));
    CHECK(t.cell == Approx(29));
    // A wide panel (800 x 400): along the right the height limits, and nothing stands under
    // the large map there, so no gap is kept below it: min((750 - 120) / 10,
    // (400 - 64) / 10) = 33.6 px (32.6 with the gap); along the bottom (320 - 74) / 10.
    const FocusTiling w = focus_tiling(4, 10, 800, 400, 110, 64, 10, 40, 30, 30, 10);
    CHECK(w.right);
    CHECK(w.cell == Approx(33.6));
    // A narrow, tall panel (300 x 900): along the right, min((250 - 120) / 10, ...) = 13 px;
    // along the bottom, 6 a row in one 80 px row, min((300 - 120) / 10, (820 - 74) / 10) = 18 px.
    const FocusTiling b = focus_tiling(4, 10, 300, 900, 110, 64, 10, 40, 30, 30, 10);
    CHECK_FALSE(b.right);
    CHECK(b.per_line == 6);
    CHECK(b.strip == Approx(80));
    CHECK(b.cell == Approx(18));
    // Twelve heads in a small panel: the thumbnails shrink until the strip takes 40% of the
    // side at most, so the large map keeps the rest.
    const FocusTiling s = focus_tiling(12, 10, 300, 200, 60, 40, 10, 40, 30, 30, 10);
    CHECK(s.thumb < 40);
    CHECK(s.strip <= 0.4f * (s.right ? 300 : 200) + 1e-3f);
    CHECK(s.cell > 0);
}

TEST_CASE("long lines break at spaces only, never inside a name or a number", "[layout]") {
    const auto chars = [](const std::string& t) { return static_cast<float>(t.size()); };  // 1 a letter
    const std::string code = "queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)";
    const std::vector<std::string> lines = lines_at_spaces(code, 30, chars);
    // Worked by hand: 23 letters, then 16 (16 + 1 + 14 = 31 would pass 30), then 14 + 1 + 15 = 30.
    CHECK(lines == std::vector<std::string>{"queries, keys, values =", "self.W_query(x),", "self.W_key(x), self.W_value(x)"});
    // Each line ends where the next word would pass the width; a word wider than it stands alone.
    CHECK(lines_at_spaces("0.04551 x 2", 3, chars) == std::vector<std::string>{"0.04551", "x 2"});
    // A word wider than a line: cut after its brackets and commas, then after its dots.
    CHECK(lines_at_spaces("a = attn.masked_fill_(self.mask.bool()[:n, :n], x)", 20, chars) ==
          std::vector<std::string>{"a =", "attn.masked_fill_(", "self.mask.bool()[:n,", ":n], x)"});
    CHECK(lines_at_spaces("one.two.three", 8, chars) == std::vector<std::string>{"one.two.", "three"});
    CHECK(lines_at_spaces("", 10, chars) == std::vector<std::string>{""});
    CHECK(lines_at_spaces("a  b", 10, chars) == std::vector<std::string>{"a  b"});  // spaces kept inside a line
    CHECK(lines_at_spaces("abc  def", 3, chars) == std::vector<std::string>{"abc", "def"});  // no empty line at a break
}

