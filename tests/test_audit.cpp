// The layout audit's rules, on hand-made frames: each rule fires on the frame that breaks
// it and stays quiet on the one that keeps it.
#include <catch2/catch.hpp>

#include "gui/runs/audit.hpp"

using namespace headsplit::gui;

namespace {

LayoutReport frame() {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(1920, 1080, 1.5f, "test");
    a.begin_panel("stage", 100, 100, 400, 300, 100, 100, 500, 400, false, false);
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

TEST_CASE("items scrolled out of the panel are not judged", "[audit]") {
    LayoutAudit a;
    a.enabled = true;
    a.begin_frame(800, 600, 1, "scrolled");
    a.begin_panel("code", 0, 0, 200, 100, 0, 0, 200, 100, false, true);
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
    b.cell("-.41", 10, 500, 30, 30, false, 28, false, "queries");  // below the visible area
    b.begin_panel("heatmaps", 0, 400, 600, 300, 0, 400, 600, 700, false, false);
    b.cell("-.41", 10, 410, 20, 20, false, 28, true, "queries");
    CHECK(audit_problems(b.report(), {}).empty());
}
