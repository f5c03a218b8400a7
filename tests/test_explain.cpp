// The inspector's derivations: recomputed from the trace's own operands, each arrives at
// the value the engine recorded, for every cell of every step.
#include <catch2/catch.hpp>

#include "gui/view/explain.hpp"
#include "helpers.hpp"

using namespace headsplit;

namespace {

// Explains every cell of every step of `tr` (the dropout mask's too unless skipped) and
// holds each recomputed value to the recorded one; returns how many were explained.
int check_every_cell(const Trace& tr, bool skip_dropout_mask) {
    int explained = 0;
    for (const Step& s : tr.steps)
        for (std::size_t t = 0; t < s.tensors.size(); ++t) {
            if (skip_dropout_mask && s.tensors[t].name == "dropout_mask") continue;
            for (std::size_t i = 0; i < s.tensors[t].values().size(); ++i) {
                const gui::Explanation e = gui::explain_cell(tr, s.index, static_cast<int>(t), static_cast<std::int64_t>(i));
                INFO("step " << s.index << " " << op_name(s.op) << " " << e.title);
                REQUIRE_FALSE(e.lines.empty());
                REQUIRE_FALSE(std::isnan(e.recomputed));
                const float v = s.tensors[t].values()[i];
                if (std::isinf(v)) CHECK(e.recomputed == v);
                else CHECK(e.recomputed == Approx(v).margin(1e-5));
                ++explained;
            }
        }
    return explained;
}

}  // namespace

TEST_CASE("every cell's explanation arrives at its value", "[explain]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const double dropout = GENERATE(0.0, 0.3);
    Config c;
    c.mode = mode;
    c.dropout = dropout;
    c.qkv_bias = true;
    const Trace tr = test::run_cpu(c);
    const int explained = check_every_cell(tr, true);
    CHECK(explained > 100);
}

TEST_CASE("a score grid made when first shown is explained to its value, cell by cell", "[explain][softmax]") {
    // 2 sentences x 4 heads x 48 x 48 scores: over the 16,384 values from which a CPU run
    // leaves the grid's steps to be made when first read (GridValues). Each cell is derived
    // from the queries and keys (or the step before) by the explanation, and held to it.
    const Mode mode = GENERATE(Mode::Split, Mode::Fused);
    const bool scale_first = GENERATE(false, true);
    Config c;
    c.mode = mode;
    c.scale_first = scale_first;
    c.d_in = 8;
    c.d_out = 16;
    c.heads = 4;
    c.set_sentences({synthetic_tokens(48), synthetic_tokens(41)});
    const Trace tr = test::run_cpu(c);
    int deferred = 0;
    for (const Step& s : tr.steps)
        for (const TensorRecord& t : s.tensors) deferred += t.data.empty() && t.deferred ? 1 : 0;
    CHECK(deferred == 5);  // scores, mask, padding, scale, softmax
    CHECK(check_every_cell(tr, true) > 5 * 2 * 4 * 48 * 48);
}

TEST_CASE("every cell of the variants' steps is explained to its value", "[explain][variants]") {
    // GQA (repeat_kv), cross-attention (keys from the context), a padded batch (the mask, the
    // padding step, the second sentence's rows), decoding (the cache, rounds, assemble).
    const int which = GENERATE(range(0, 9));
    Config c;
    c.qkv_bias = true;
    c.d_in = c.d_out = 8;
    c.heads = 4;
    c.tokens = split_words("the cat sleeps here");
    switch (which) {
        case 0: c.kv_heads = 2; break;
        case 1: c.kv_heads = 1, c.mode = Mode::Fused; break;
        case 2: c.context = {split_words("le chat dort")}, c.causal = false, c.d_context = 5, c.mode = Mode::Loop; break;
        case 3: c.set_sentences({split_words("the cat sleeps here"), split_words("a dog")}), c.kv_heads = 2; break;
        case 4: c.decode_from = 2, c.kv_heads = 2; break;
        case 5: c.set_sentences({split_words("the cat sleeps here"), split_words("a dog")}), c.decode_from = 1,
                c.mode = Mode::Fused; break;
        // Flash: tiles of 1 and 3 (a partial last block), GQA read in place, a padded batch.
        case 6: c.mode = Mode::Flash, c.block = 1; break;
        case 7: c.mode = Mode::Flash, c.block = 3, c.kv_heads = 2; break;
        case 8: c.set_sentences({split_words("the cat sleeps here"), split_words("a dog")}), c.mode = Mode::Flash,
                c.block = 2, c.causal = false; break;
    }
    INFO("variant " << which);
    const int explained = check_every_cell(test::run_cpu(c), false);
    CHECK(explained > 100);
}

TEST_CASE("a corrupted cell of a view, transpose, merge or concat step is caught", "[explain]") {
    // The explanation of a view reads its source through the strides and offset: change one
    // recorded number of the view (and nothing else) and the two disagree.
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    Config c;
    c.mode = mode;
    const Trace clean = test::run_cpu(c);
    int corrupted = 0;
    for (const Op op : {Op::Split, Op::View, Op::Transpose, Op::TransposeBack, Op::Merge, Op::Concat, Op::Mask}) {
        const Step* s = test::find_step(clean, op);
        if (!s) continue;
        for (std::size_t t = 0; t < s->tensors.size(); ++t) {
            Trace bad = clean;
            TensorRecord& rec = bad.steps[static_cast<std::size_t>(s->index)].tensors[t];
            const std::int64_t cell = 1;  // not -inf in the mask step: [0][0][0][1] is above the diagonal
            const std::int64_t i = op == Op::Mask ? 0 : cell;
            const float was = rec.values()[static_cast<std::size_t>(i)];
            rec.data = rec.values();  // held in the record (a flash tile's were deferred)
            rec.data[static_cast<std::size_t>(i)] = was + 0.5f;
            const gui::Explanation e = gui::explain_cell(bad, s->index, static_cast<int>(t), i);
            INFO(op_name(op) << " " << rec.name << ": " << e.title);
            REQUIRE_FALSE(std::isnan(e.recomputed));
            CHECK(e.recomputed == Approx(was).margin(1e-6));  // read from the source, not the corrupted cell
            CHECK(std::fabs(e.recomputed - rec.values()[static_cast<std::size_t>(i)]) > 0.4);
            ++corrupted;
        }
    }
    // split: view x3, transpose x3, transpose back, merge, mask; fused adds chunk x3; loop: concat.
    CHECK(corrupted == (mode == Mode::Split ? 9 : mode == Mode::Fused ? 12 : 1));
}

TEST_CASE("a view's explanation follows the link, not the step before it", "[explain]") {
    // Cut the transpose's link: its explanation has no source to read and says so.
    Config c;
    Trace tr = test::run_cpu(c);
    const Step* s = test::find_step(tr, Op::Transpose);
    REQUIRE(s);
    tr.steps[static_cast<std::size_t>(s->index)].tensors[0].from.clear();
    const gui::Explanation e = gui::explain_cell(tr, s->index, 0, 1);
    CHECK(std::isnan(e.recomputed));
}
