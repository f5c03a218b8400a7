// The inspector's derivations: recomputed from the trace's own operands, each arrives at
// the value the engine recorded, for every cell of every step.
#include <catch2/catch.hpp>

#include "gui/explain.hpp"
#include "helpers.hpp"

using namespace headsplit;

TEST_CASE("every cell's explanation arrives at its value", "[explain]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const double dropout = GENERATE(0.0, 0.3);
    Config c;
    c.mode = mode;
    c.dropout = dropout;
    c.qkv_bias = true;
    const Trace tr = test::run_cpu(c);
    int explained = 0;
    for (const Step& s : tr.steps)
        for (std::size_t t = 0; t < s.tensors.size(); ++t) {
            if (s.tensors[t].name == "dropout_mask") continue;
            for (std::size_t i = 0; i < s.tensors[t].data.size(); ++i) {
                const gui::Explanation e = gui::explain_cell(tr, s.index, static_cast<int>(t), static_cast<std::int64_t>(i));
                INFO(op_name(s.op) << " " << e.title);
                REQUIRE_FALSE(e.lines.empty());
                REQUIRE_FALSE(std::isnan(e.recomputed));
                const float v = s.tensors[t].data[i];
                if (std::isinf(v)) CHECK(e.recomputed == v);
                else CHECK(e.recomputed == Approx(v).margin(1e-5));
                ++explained;
            }
        }
    CHECK(explained > 100);
}
