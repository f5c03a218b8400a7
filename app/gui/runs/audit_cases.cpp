#include "gui/runs/audit_sweep.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "headsplit/model/presets.hpp"

namespace headsplit::gui {

namespace {

// `base` on these tokens, D_in = D_out = d, with `heads` heads.
Config sized(Config base, std::vector<std::string> tokens, std::int64_t d, std::int64_t heads) {
    base.tokens = std::move(tokens);
    base.d_in = base.d_out = d;
    base.heads = heads;
    return base;
}

}  // namespace

std::vector<AuditCase> audit_cases() {
    std::vector<AuditCase> out;
    Config base;
    base.backend = BackendKind::Cpu;  // the layout does not depend on the backend; the CPU is quick
    AuditCase example{"default", base, {}, false};
    example.every_value = true;
    out.push_back(example);
    Config journey = config_from_preset("journey");
    journey.backend = BackendKind::Cpu;
    out.push_back({"journey", journey, {}, false});
    Config nine = base;
    nine.tokens = split_words("the quick brown fox jumps over the lazy dog");
    nine.heads = 3;
    out.push_back({"nine-words", nine, {}, false});
    out.push_back({"T32-4heads", sized(base, synthetic_tokens(32), 12, 4), {}, false});
    // Issue 26's classroom sizes: 12 tokens with 4 heads (and grouped in 2 key/value heads),
    // 16 tokens with 8 heads, gpt2-small's 12 heads at T = 24.
    const Config twelve = sized(base, split_words("the quick brown fox jumps over the lazy dog by the river"), 12, 4);
    out.push_back({"12-tokens-4-heads", twelve, {}, false});
    Config gqa = twelve;
    gqa.kv_heads = 2;
    out.push_back({"12-tokens-gqa", gqa, {}, false});
    out.push_back({"16-tokens-8-heads", sized(base, synthetic_tokens(16), 16, 8), {}, false});
    Config small = config_from_preset("gpt2-small");
    small.backend = BackendKind::Cpu;
    small.tokens = synthetic_tokens(24);
    out.push_back({"gpt2-small-T24", small, {}, false});
    Config loop = base;
    loop.mode = Mode::Loop;
    out.push_back({"loop", loop, {}, false});
    Config fused = base;
    fused.mode = Mode::Fused;
    out.push_back({"fused", fused, {}, false});
    AuditCase panned{"gpt2-small-panned", small, {}, false};
    panned.config.tokens = synthetic_tokens(32);
    panned.view.zoom = 1.5f;
    panned.view.token0 = 10, panned.view.col0 = 20, panned.view.head0 = 5;
    out.push_back(panned);
    out.push_back({"nine-words-compare", nine, {}, true});
    AuditCase quiz{"nine-words-quiz", nine, {}, false};
    quiz.quiz = true;
    out.push_back(quiz);
    // Issue 13's views: key/value heads shared (kv0 panels in their group's colour), a padded
    // batch (sentence blocks, <pad> rows, padding drawn apart from the future), cross-attention
    // (T x S grids, context tokens), and decoding (rounds, the cache growing).
    Config mqa = nine;
    mqa.kv_heads = 1;
    out.push_back({"nine-words-mqa", mqa, {}, false});
    Config batch = base;
    batch.set_sentences({split_words("the quick brown fox jumps"), split_words("a lazy dog"), split_words("it sleeps")});
    out.push_back({"batch-padded", batch, {}, false});
    Config cross = base;
    cross.context = {split_words("le chat dort sur le tapis")};
    cross.causal = false;
    cross.kv_heads = 1;
    out.push_back({"cross-mqa", cross, {}, false});
    Config decode = base;
    decode.tokens = split_words("the cat sleeps here");
    decode.decode_from = 3;
    decode.kv_heads = 1;
    out.push_back({"decode", decode, {}, false});
    // Issue 14's flash mode: tile steps (scores, m, l, acc) and the tiles panel (the ghost grid,
    // skipped tiles, m and l per row, the memory strip), one key per tile and a padded batch.
    Config flash = base;
    flash.mode = Mode::Flash;
    flash.block = 1;
    out.push_back({"flash-block1", flash, {}, false});
    Config flash_batch = batch;
    flash_batch.mode = Mode::Flash;
    flash_batch.block = 2;
    out.push_back({"flash-batch", flash_batch, {}, false});
    // Issue 15's checkpoint: BPE pieces as token labels (leading spaces), the Checkpoint
    // section with its layer slider, the controls a checkpoint cannot change greyed out.
    Config tiny = config_from_preset("tiny-trained");
    tiny.backend = BackendKind::Cpu;
    out.push_back({"tiny-trained", tiny, {}, false});
    // The quiz answered: the step drawn under its verdict keeps the default example's numbers.
    AuditCase answered = example;
    answered.name = "default-quiz-answered";
    answered.quiz = answered.answered = true;
    out.push_back(answered);
    return out;
}

}  // namespace headsplit::gui
