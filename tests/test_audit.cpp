// The layout audit's rules, on hand-made frames: each rule fires on the frame that breaks
// it and stays quiet on the one that keeps it.
#include <algorithm>
#include <functional>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gui/runs/audit.hpp"

using namespace headsplit::gui;

namespace {

LayoutReport frame() {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1920, 1080, 1.5f, "test");
    a.begin_panel("timeline steps", 100, 100, 400, 300, 100, 100, 500, 400, false, false);  // a panel that may scroll
    a.label("queries", 110, 110, 80, 20);
    a.label("keys", 200, 110, 50, 20);                 // beside it: fine
    a.cell(".52", 110, 140, 40, 40, true, 30);         // shows its number
    a.cell("-.37", 160, 140, 20, 20, false, 30);       // too small for it: fine
    return a.report();
}

}  // namespace

TEST_CASE("a readable frame passes the audit", "[audit]") {
    CHECK(audit_problems(frame(), {}).empty());
}

TEST_CASE("overlapping labels, items out of their panel and hidden numbers are caught", "[audit]") {
    LayoutReport r = frame();
    r.items[1].x = 150;  // "keys" now covers the end of "queries"
    auto p = audit_problems(r, {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("overlaps") != std::string::npos);
    r.items[1].x = 189.5f;  // touching by half a pixel: within the 1 px tolerance
    CHECK(audit_problems(r, {}).empty());

    r = frame();
    r.items[0].x = 460;  // "queries" runs past the right edge of a panel that does not scroll
    p = audit_problems(r, {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("sticks out") != std::string::npos);
    r.panels[0].scroll_x = true;  // a panel that scrolls sideways may hold it
    CHECK(audit_problems(r, {}).empty());

    r = frame();
    r.items[3].w = r.items[3].h = 40;  // room for its number now, still not shown
    p = audit_problems(r, {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("has room") != std::string::npos);
}

TEST_CASE("the Controls' column cuts a row wider than itself", "[audit]") {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1280, 800, 1.25f, "test");
    // The column scrolls down; content wider than it (a button under the scroll bar) scrolls across.
    a.begin_panel("controls", 0, 0, 256, 800, 0, 0, 242, 800, false, true);
    a.label("head_dim = 6 / 2 = 3", 8, 300, 219, 24);
    CHECK(audit_problems(a.report(), {}).empty());
    LayoutReport r = a.report();
    r.panels[0].scroll_x = true;
    const auto p = audit_problems(r, {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("controls: a row is wider than the column") != std::string::npos);
}

TEST_CASE("the default example's numbers and the 32 px heatmap cells", "[audit]") {
    LayoutReport r = frame();
    AuditRules every;
    every.every_value_shown = true;
    CHECK(audit_problems(r, every).size() == 1);  // the small cell hides its number
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1920, 1080, 1, "heatmap");
    a.begin_panel("heatmaps", 0, 0, 800, 400, 0, 0, 800, 400, false, false);
    a.cell(".25", 10, 10, 31, 31, true, 20, true);
    AuditRules big;
    big.heatmap_cells_32 = true;
    CHECK(audit_problems(a.report(), big).size() == 1);
    CHECK(audit_problems(a.report(), {}).empty());
}

TEST_CASE("the default example's stage draws its step's cells", "[audit]") {
    // A stage of a heading alone (the picture left out under a quiz's verdict) hides every
    // number without a cell to judge.
    const auto stage = [](bool with_cell) {
        LayoutAudit a;
        a.enabled = true;
        a.begin_frame(1024, 768, 1.5f, "answered");
        a.begin_panel("stage", 0, 0, 700, 500, 0, 0, 700, 500, false, false);
        a.label("Not quite: it gives [1, 3 tokens, 6 features].", 10, 10, 500, 24);
        if (with_cell) a.cell(".52", 50, 60, 60, 60, true, 30);
        a.memory(10, 400, 20, 20, "queries", 0, {0});
        return a.report();
    };
    AuditRules every;
    every.every_value_shown = true;
    const std::vector<std::string> bare = audit_problems(stage(false), every);
    REQUIRE(bare.size() == 1);
    CHECK(bare.front().find("stage: draws no cell of the step") != std::string::npos);
    CHECK(audit_problems(stage(true), every).empty());
    CHECK(audit_problems(stage(false), {}).empty());  // other configurations: not judged
}

TEST_CASE("a number the stage hides counts as shown where the heatmaps show the same element", "[audit]") {
    // The stage's attn_scores[0][1][2][0] blank in a 20 px cell; the heads panel's map shows
    // that element's number. Another element, another step's tensor, or no map: not shown.
    auto frame_with = [](const std::string& map_of, std::vector<long long> map_index, bool map_shown) {
        LayoutAudit a;
        a.enabled = true;
        a.begin_frame(1366, 768, 1.25f, "scores");
        a.begin_panel("stage", 0, 0, 600, 200, 0, 0, 600, 200, false, false);
        a.cell("-.9", 10, 10, 20, 20, false, 30, false, "attn_scores", 1, 0, {0, 1, 2, 0}, "attn_scores at step 4");
        a.begin_panel("heatmaps", 0, 200, 600, 500, 0, 200, 600, 700, false, false);
        a.cell("-.86", 40, 240, 60, 60, map_shown, 30, true, "head 1", 1, 20, std::move(map_index), map_of);
        return a.report();
    };
    AuditRules every;
    every.every_value_shown = true;
    CHECK(audit_problems(frame_with("attn_scores at step 4", {0, 1, 2, 0}, true), every).empty());
    CHECK(audit_problems(frame_with("attn_scores at step 4", {0, 1, 2, 1}, true), every).size() == 1);
    CHECK(audit_problems(frame_with("attn_scores at step 5", {0, 1, 2, 0}, true), every).size() == 1);
    const auto hidden = audit_problems(frame_with("attn_scores at step 4", {0, 1, 2, 0}, false), every);
    CHECK(std::any_of(hidden.begin(), hidden.end(), [](const std::string& p) { return p.find("stage: cell \"-.9\"") != std::string::npos; }));
    CHECK(audit_problems(frame_with("", {0, 1, 2, 0}, true), every).size() == 1);
    // The report carries whose element each cell is.
    const nlohmann::json doc = nlohmann::json::parse(layout_report_json(frame_with("attn_scores at step 4", {0, 1, 2, 0}, true)));
    CHECK(doc["items"][1]["values_of"] == "attn_scores at step 4");
}

TEST_CASE("presenter mode's rules: numbers 2.5% of the height, the memory strip, no weights before they exist", "[audit]") {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1024, 768, 1.5f, "presenter");
    a.begin_panel("stage", 0, 0, 1024, 600, 0, 0, 1024, 600, false, false);
    a.cell(".52", 10, 10, 70, 70, true, 40, false, "queries", 0, 20.0f, {0, 0, 0, 0});  // digits of 20 px
    a.cell("-1.1", 80, 10, 70, 70, true, 40, false, "queries", 1, 18.0f, {0, 0, 1, 0});  // 18 px: under 19.2
    AuditRules presenter;
    presenter.number_min_h = 0.025f * 768;
    auto p = audit_problems(a.report(), presenter);
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("\"-1.1\"") != std::string::npos);
    CHECK(p[0].find("18 px tall, under the 19 px") != std::string::npos);
    CHECK(audit_problems(a.report(), {}).empty());  // the normal layout keeps no such rule

    AuditRules memory;
    memory.memory_strip = true;
    p = audit_problems(a.report(), memory);  // a view step drawn without its strip
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("no memory strip") != std::string::npos);
    a.memory(10, 300, 20, 20, "queries", 0, {0, 0, 0, 0});
    CHECK(audit_problems(a.report(), memory).empty());
    CHECK(a.report().items.back().memory);
    CHECK(a.report().items.back().index == std::vector<long long>{0, 0, 0, 0});

    AuditRules ahead;
    ahead.no_weights = true;
    CHECK(audit_problems(a.report(), ahead).empty());  // the stage's cells are not weights
    a.begin_panel("heatmaps", 600, 0, 424, 600, 600, 0, 1024, 600, false, false);
    a.cell(".33", 610, 10, 70, 70, true, 40, true, "head 0");
    p = audit_problems(a.report(), ahead);
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("outside the steps that compute and use them") != std::string::npos);
}

TEST_CASE("items scrolled out of the panel are not judged", "[audit]") {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(800, 600, 1, "scrolled");
    a.begin_panel("timeline steps", 0, 0, 200, 100, 0, 0, 200, 100, false, true);  // a panel that may scroll
    a.label("line 1", 0, 150, 60, 20);  // below the visible area
    a.label("line 1 again", 0, 150, 60, 20);
    CHECK_FALSE(a.report().items[0].visible);
    CHECK(audit_problems(a.report(), {}).empty());
}

TEST_CASE("a tensor's numbers show all or none", "[audit]") {
    // The bug this rule holds: "-.41" wider than its cell and ".41" not, so the positive cells
    // of one tensor showed numbers and the negative ones none, which a student reads as zeros.
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1024, 768, 1.5f, "mixed");
    a.begin_panel("stage", 0, 0, 600, 400, 0, 0, 600, 400, false, false);
    a.cell(".41", 10, 10, 30, 30, true, 20, false, "queries");
    a.cell("-.41", 40, 10, 30, 30, false, 28, false, "queries");
    a.cell("-.41", 70, 10, 30, 30, false, 28, false, "keys");  // another tensor, none shown: fine
    a.cell("-.41", 100, 10, 30, 30, false, 28, false, "keys");
    auto p = audit_problems(a.report(), {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("tensor queries shows the number of cell \".41\"") != std::string::npos);
    // The same tensor in another panel is another picture; a cell scrolled away is not judged.
    LayoutAudit b;
    b.enabled = true;
    b.begin_frame(1024, 768, 1.5f, "split");
    b.begin_panel("stage", 0, 0, 600, 400, 0, 0, 600, 400, false, false);
    b.cell(".41", 10, 10, 30, 30, true, 20, false, "queries");
    b.begin_panel("timeline steps", 0, 0, 600, 400, 0, 0, 600, 400, false, true);
    b.cell(".41", 10, 10, 30, 30, true, 20, false, "W_query");
    b.cell("-.41", 10, 500, 30, 30, false, 28, false, "W_query");  // below the visible area
    b.begin_panel("heatmaps", 0, 400, 600, 300, 0, 400, 600, 700, false, false);
    b.cell("-.41", 10, 410, 20, 20, false, 28, true, "queries");
    CHECK(audit_problems(b.report(), {}).empty());
}

TEST_CASE("the stage, the heatmaps, the code, the caption and the tabs never need scrolling", "[audit]") {
    // A frame broken on purpose: the stage's strides line drawn 30 px below the panel's visible
    // area (the bug: a scroll bar appeared and the line was reachable only by scrolling).
    auto frame_with = [](const std::string& panel, float y) {
        LayoutAudit a;
        a.enabled = true;
        a.begin_frame(1024, 768, 1.5f, "scroll");
        a.begin_panel(panel, 0, 0, 500, 300, 4, 30, 496, 296, false, true);
        a.label("strides [400, 100, 10, 1]", 10, y, 300, 28);
        return a.report();
    };
    CHECK(audit_problems(frame_with("stage", 200), {}).empty());
    for (const char* panel : {"stage", "heatmaps", "code", "caption", "why", "weights", "timeline"}) {
        const auto p = audit_problems(frame_with(panel, 290), {});
        REQUIRE(p.size() == 1);
        CHECK(p[0].find("would need scrolling") != std::string::npos);
    }
    CHECK(audit_problems(frame_with("timeline steps", 290), {}).empty());  // it scrolls: allowed
    // Under the title bar (above the visible area) counts too; so does a code line cut at the
    // right edge, a line that is not whole.
    CHECK(audit_problems(frame_with("code", 10), {}).size() == 1);
    LayoutAudit c;
    c.enabled = true;
    c.begin_frame(1024, 768, 1.5f, "code");
    c.begin_panel("code", 700, 100, 300, 400, 704, 130, 996, 496, false, false);
    c.label("self.W_query = nn.Linear(d_in, d_out, bias=False)", 710, 140, 420, 20);
    const auto p = audit_problems(c.report(), {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("self.W_query") != std::string::npos);
    // The report carries what the rule needs: the visible rectangle and the rule's flag.
    const nlohmann::json doc = nlohmann::json::parse(layout_report_json(c.report()));
    CHECK(doc["panels"][0]["visible"] == nlohmann::json::array({704.0, 130.0, 996.0, 496.0}));
    CHECK(doc["panels"][0]["must_fit"] == true);
}

TEST_CASE("every head of the heatmaps is on screen, as a map or a labelled thumbnail", "[audit]") {
    auto frame_with = [](std::vector<std::string> labels) {
        LayoutAudit a;
        a.enabled = true;
        a.begin_frame(1024, 768, 1.5f, "heads");
        a.begin_panel("heatmaps", 0, 0, 500, 500, 0, 0, 500, 500, false, false);
        a.expect_heads({0, 1, 2, 3});
        float y = 10;
        for (const std::string& l : labels) a.label(l, 10, y += 30, 60, 20);
        a.cell(".12", 100, 10, 30, 30, true, 20, true, "head 0", 0);  // head 0's map
        return a.report();
    };
    CHECK(audit_problems(frame_with({"h1", "h2", "h3"}), {}).empty());  // thumbnails name the others
    CHECK(audit_problems(frame_with({"head 1", "head 2: causal", "h3"}), {}).empty());
    // Head 2's title cut to "hea." and no thumbnail: not on screen.
    auto p = audit_problems(frame_with({"h1", "hea.", "h3"}), {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("head 2 of 4 shown is not on screen") != std::string::npos);
    // "head 12" and "h13" are not head 1 (with 4 heads, the label names another head).
    p = audit_problems(frame_with({"head 12", "h13", "h2", "h3"}), {});
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("head 1 of 4") != std::string::npos);
    // A head scrolled out of view is not on screen either.
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1024, 768, 1.5f, "heads");
    a.begin_panel("heatmaps", 0, 0, 500, 500, 0, 0, 500, 500, false, false);
    a.expect_heads({0, 1});
    a.label("head 0", 10, 10, 60, 20);
    a.label("head 1", 10, 600, 60, 20);
    p = audit_problems(a.report(), {});
    CHECK(p.size() == 2);  // outside the visible area, and so head 1 is not on screen
}

TEST_CASE("a layout has settled when its panels stand where they stood the frame before", "[audit]") {
    auto panels = [](float stage_h) {
        LayoutAudit a;
        a.enabled = true;
        a.begin_frame(1024, 768, 1.5f, "test");
        a.begin_panel("stage", 204, 143, 512, stage_h, 204, 143, 716, 143 + stage_h, false, false);
        a.begin_panel("heatmaps", 204, 143 + stage_h, 512, 625 - stage_h, 204, 143 + stage_h, 716, 768, false, false);
        a.label("the", 210, 150, 30, 20);
        return a.report();
    };
    LayoutSettle settle;
    CHECK_FALSE(settle.still(panels(226)));  // the first frame has nothing to compare with
    CHECK_FALSE(settle.still(panels(187)));  // the share moved
    CHECK(settle.moved() == "stage 226 x 512 at (204, 143) -> 187 x 512 at (204, 143)");
    CHECK(settle.still(panels(187.3f)));     // within half a pixel
    // The items may change (a cell's number, a label); only the panels count.
    LayoutReport more = panels(187);
    more.items.clear();
    CHECK(settle.still(more));
    // A panel more or less is a change.
    LayoutReport fewer = panels(187);
    fewer.panels.pop_back();
    CHECK_FALSE(settle.still(fewer));
    CHECK(settle.moved() == "the panels shown changed");
    settle.reset();
    CHECK_FALSE(settle.still(panels(187)));
    CHECK(settle.moved().empty());
}

TEST_CASE("the frame taken: from the third ready frame the first that stood still, else the 30th", "[audit]") {
    // Worked by hand: frames 1 and 2 are never taken, still or not (the tab switch and the
    // first share); the 3rd is when the panels stood still; one moving is waited for until
    // the 30th, which is taken as it is.
    CHECK(take_frame(1, true) == Take::Wait);
    CHECK(take_frame(2, true) == Take::Wait);
    CHECK(take_frame(3, true) == Take::Settled);
    CHECK(take_frame(3, false) == Take::Wait);
    CHECK(take_frame(29, false) == Take::Wait);
    CHECK(take_frame(30, false) == Take::StillMoving);
    CHECK(take_frame(30, true) == Take::Settled);
    CHECK(take_frame(0, false) == Take::Wait);
}

TEST_CASE("the layout from one step to the next: panels and maps keep their place", "[audit]") {
    auto two_panels = [](float split, float cell, int cells) {
        LayoutAudit a;
        a.enabled = true;
        a.begin_frame(1366, 768, 1.5f, "step");
        a.begin_panel("stage", 0, 0, 800, split, 0, 0, 800, split, false, false);
        a.begin_panel("heatmaps", 0, split, 800, 768 - split, 0, split, 800, 768, false, false);
        for (int i = 0; i < cells; ++i) a.cell(".1", 10 + cell * static_cast<float>(i), split + 40, cell, cell, true, 20, true, "head 0");
        return a.report();
    };
    const LayoutReport before = two_panels(400, 40, 9);
    CHECK(layout_shifts(before, before, 30).empty());
    CHECK(layout_shifts(before, two_panels(425, 40, 9), 30).empty());  // within a line of text
    // The share moved by more than a line: the stage and the heatmaps both say so.
    const std::vector<std::string> moved = layout_shifts(before, two_panels(460, 40, 9), 30);
    REQUIRE(moved.size() == 2);
    CHECK(moved[0].find("stage: 800 x 400 at (0, 0) on step, 800 x 460 at (0, 0) here") != std::string::npos);
    // A head's map drawn at another size (a quarter smaller), but not one that gained a key.
    const std::vector<std::string> smaller = layout_shifts(before, two_panels(400, 30, 9), 30);
    REQUIRE(smaller.size() == 1);
    CHECK(smaller[0] == "heatmaps: head 0's cells 40 px on step, 30 px here");
    CHECK(layout_shifts(before, two_panels(400, 33, 9), 30).empty());  // within a fifth
    CHECK(layout_shifts(before, two_panels(400, 30, 10), 30).empty());
    // A panel shown on one step only.
    LayoutReport fewer = before;
    fewer.panels.pop_back();
    const std::vector<std::string> gone = layout_shifts(before, fewer, 30);
    REQUIRE(gone.size() == 1);
    CHECK(gone[0] == "heatmaps: shown on step, not here");
}

TEST_CASE("a view and its transpose show the same numbers alike", "[audit]") {
    // The cat example's queries at the view and the transpose: .80 on one step, .8 on the next
    // (a number that seems to change where none moved), blank or -inf cells not counted.
    auto frame = [](const std::vector<std::string>& queries, const std::string& keys) {
        LayoutAudit a;
        a.enabled = true;
        a.begin_frame(1024, 768, 1.5f, "step 2");
        a.begin_panel("stage", 0, 0, 800, 600, 0, 0, 800, 600, false, false);
        float x = 10;
        for (const std::string& q : queries) a.cell(q, x += 60, 100, 58, 58, true, 40, false, "queries");
        a.cell(keys, 10, 200, 58, 58, true, 40, false, "keys");
        a.cell("-1.09", 80, 200, 20, 20, false, 40, false, "keys");  // too small: blank
        a.cell(".5", 10, 300, 30, 30, true, 20, true, "head 0");     // a heatmap's
        return a.report();
    };
    const LayoutReport view = frame({".80", "-1.09", "-inf"}, ".5");
    CHECK(decimals_changed(view, frame({".80", "-1.09"}, ".5")).empty());
    CHECK(decimals_changed(view, frame({"-inf"}, ".50")).size() == 1);  // keys only: queries show no decimal point
    const std::vector<std::string> changed = decimals_changed(view, frame({".8", "-1.1"}, ".5"));
    REQUIRE(changed.size() == 1);
    CHECK(changed[0] == "queries: 2 decimals on step 2, 1 here");
    // A tensor on one step only is not compared.
    CHECK(decimals_changed(view, frame({}, ".5")).empty());
}

TEST_CASE("words and numbers cut short to fit are caught where a class reads", "[audit]") {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1024, 768, 1.5f, "cut");
    a.begin_panel("stage", 0, 0, 500, 300, 0, 0, 500, 300, false, false);
    a.label("buffer 8 of attn_weights, addresses 0-17", 10, 10, 400, 20);
    AuditRules whole;
    whole.whole_text = true;
    CHECK(audit_problems(a.report(), whole).empty());
    a.cut("memory: buffer 8 of attn_weights, addresses 0 to 17", "memory: buffer 8 of attn_weights, addresse.");
    const auto p = audit_problems(a.report(), whole);
    REQUIRE(p.size() == 1);
    CHECK(p[0].find("addresse.") != std::string::npos);
    CHECK(audit_problems(a.report(), {}).empty());  // outside the classroom's sizes: not judged
    // A panel the reader zoomed into scrolls: its edges cut as a window's do.
    a.allow_scroll();
    CHECK(audit_problems(a.report(), whole).empty());
    // The report lists the cut.
    const nlohmann::json doc = nlohmann::json::parse(layout_report_json(a.report()));
    CHECK(doc["cut"][0]["shown"] == "memory: buffer 8 of attn_weights, addresse.");
}

namespace {

// A 1024x768 frame of one panel `name`, `w` x 600 px, with what `place` draws in it.
LayoutReport one_panel(const char* name, float w, const std::function<void(LayoutAudit&)>& place) {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1024, 768, 1.5f, "room");
    a.begin_panel(name, 0, 0, w, 600, 0, 0, w, 600, false, false);
    place(a);
    return a.report();
}

}  // namespace

TEST_CASE("a panel a third empty while its cells hide their numbers is caught", "[audit]") {
    // The stage 600 x 600: a 3 x 3 grid of 40 px cells that hide "-.37" (30 px wide) in its
    // top-left corner leaves most of it empty; grown to fill it, the cells show their numbers.
    auto grid = [](float cell, bool shown) {
        return one_panel("stage", 600, [&](LayoutAudit& a) {
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) a.cell("-.37", 10 + j * cell, 10 + i * cell, cell - 1, cell - 1, shown, 30);
        });
    };
    auto covers = [](const std::vector<std::string>& problems) {
        return std::count_if(problems.begin(), problems.end(), [](const std::string& p) { return p.find("covers") != std::string::npos; });
    };
    AuditRules room;
    room.room_used = true;
    const auto p = audit_problems(grid(40, false), room);
    REQUIRE(covers(p) == 1);
    CHECK(std::any_of(p.begin(), p.end(), [](const std::string& s) { return s.find("covers 3%") != std::string::npos; }));  // 119 x 119 px
    CHECK(covers(audit_problems(grid(40, false), {})) == 0);
    CHECK(audit_problems(grid(190, true), room).empty());  // fills the panel, numbers shown
    CHECK(audit_problems(grid(20, true), room).empty());   // small but every number shown: legible
    // Cells too narrow for their number are the default example's rule (every number shown),
    // not this one: a large grid's dots read as colours.
    CHECK(audit_problems(grid(20, false), room).empty());
    // The grid's numbers shown in another panel (the heatmaps of the same scores).
    LayoutAudit both;
    both.enabled = true;
    both.begin_frame(1024, 768, 1.5f, "room");
    both.begin_panel("stage", 0, 0, 600, 600, 0, 0, 600, 600, false, false);
    both.cell("-.37", 10, 10, 39, 39, false, 30, false, "attn_scores", 0, 0, {0, 0, 0, 0}, "attn_scores at step 4");
    CHECK(covers(audit_problems(both.report(), room)) == 1);
    both.begin_panel("heatmaps", 600, 0, 400, 600, 600, 0, 1000, 600, false, false);
    both.cell("-.37", 610, 10, 380, 580, true, 30, true, "head 0", 0, 20, {0, 0, 0, 0}, "attn_scores at step 4");
    CHECK(covers(audit_problems(both.report(), room)) == 0);
}

TEST_CASE("a heatmap's cells of 32 px count as legible without their numbers", "[audit]") {
    // The heads panel 600 x 600 with one 9 x 9 map in its top half: at 20 px a cell it is a
    // third empty with cells below their size; at 33 px its shape reads, numbers or not.
    auto map = [](float cell) {
        return one_panel("heatmaps", 600, [&](LayoutAudit& a) {
            for (int i = 0; i < 9; ++i)
                for (int j = 0; j < 9; ++j) a.cell("-.37", 10 + j * cell, 10 + i * cell, cell, cell, false, 30, true, "h0", 0);
        });
    };
    AuditRules room;
    room.room_used = true;
    REQUIRE(audit_problems(map(20), room).size() == 1);
    CHECK(audit_problems(map(33), room).empty());
}

TEST_CASE("pictures side by side may span their panel instead of filling it", "[audit]") {
    // Two 5 x 8 grids of 31 px side by side in a 520 x 600 panel: 500 x 166 px, 27% of it,
    // with cells too small for their numbers. Compared masks or flash's tiles spanning the width are
    // as large as the width lets them be; the same at half the width, or another picture, is a
    // panel left empty.
    auto grids = [](float left, float right) {
        return one_panel("heatmaps", 520, [&](LayoutAudit& a) {
            const float cell = (right - left) / 16;
            for (int g = 0; g < 2; ++g)
                for (int i = 0; i < 5; ++i)
                    for (int j = 0; j < 8; ++j)
                        a.cell("-.5", left + (g * 8 + j) * cell, 10 + i * cell, cell, cell, false, 43, true, "h" + std::to_string(g), g);
        });
    };
    AuditRules strict, side_by_side;
    strict.room_used = side_by_side.room_used = side_by_side.room_by_span = true;
    CHECK(audit_problems(grids(0, 500), side_by_side).empty());
    CHECK(audit_problems(grids(0, 500), strict).size() == 1);
    CHECK(audit_problems(grids(0, 250), side_by_side).size() == 1);
}
