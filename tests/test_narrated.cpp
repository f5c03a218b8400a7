// Every trace the window shows has its words: the engine records none, and the computer
// (the window's and the page's one way to a trace) narrates what it computes, what it
// compares and what it can only plan. The checks read the traces it hands out; they do not
// ask the narration what it would say.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "gui/model/compute.hpp"
#include "headsplit/model/checkpoint.hpp"
#include "headsplit/model/presets.hpp"

using namespace headsplit;
using namespace headsplit::gui;

namespace {

// The computer's result for `c`, waiting for its worker when it has one.
ComputeResult computed(const Config& c, bool other_mask) {
    TraceComputer computer(false);
    computer.request(c, other_mask);
    for (int i = 0; i < 4000; ++i) {
        if (auto r = computer.take()) return std::move(*r);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    FAIL("the computation did not finish");
    return {};
}

// The steps with no code line or no sentence, as " index:op": "" when every step has both.
std::string unnarrated(const Trace& t) {
    std::string missing;
    for (const Step& s : t.steps)
        if (s.code.empty() || s.explain.empty()) missing += " " + std::to_string(s.index) + ":" + op_name(s.op);
    return missing;
}

}  // namespace

TEST_CASE("the window's traces have every step's words: computed, compared, planned, a checkpoint's", "[gui][narration]") {
    Config c;
    c.backend = BackendKind::Cpu;
    const ComputeResult plain = computed(c, true);
    REQUIRE(plain.trace);
    REQUIRE(plain.other_mask);
    CHECK(plain.trace->steps.size() == 12);
    CHECK(unnarrated(*plain.trace) == "");
    CHECK(unnarrated(*plain.other_mask) == "");

    Config tight = c;
    tight.memory_budget = 1024;  // far under what the run needs: its shapes only
    const ComputeResult planned = computed(tight, false);
    REQUIRE(planned.trace);
    REQUIRE(planned.shapes_only);
    CHECK(unnarrated(*planned.trace) == "");

    Config tiny = config_from_preset("tiny-trained");  // its weights are read from the checkpoint
    tiny.backend = BackendKind::Cpu;
    const ComputeResult checkpoint = computed(tiny, false);
    REQUIRE(checkpoint.trace);
    CHECK_FALSE(checkpoint.shapes_only);
    CHECK(unnarrated(*checkpoint.trace) == "");
    CHECK(checkpoint.trace->weights.w_query == gpt2_attention_weights(tiny.weights_dir, tiny.layer).w_query);
}
