// The take-home script's text (tests/export_test.sh runs the scripts): the embedded numbers
// read back as the very floats of the trace, every step is there in order, the size limit is
// counted from shapes alone, and whatever the user typed becomes a valid Python literal.
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "headsplit/io/export.hpp"
#include "headsplit/model/presets.hpp"
#include "helpers.hpp"

using namespace headsplit;

namespace {

// The numbers of the block whose opening line ("X = [  # ..." or "        (\"x\", [1, 3, 6], [")
// starts at `at`, up to its closing line, as Python reads them into float32 (text -> double
// -> float).
std::vector<float> block_values(const std::string& script, std::size_t at) {
    at = script.find('\n', at) + 1;
    std::vector<float> out;
    while (script.compare(at, 2, "]\n") != 0 && script.compare(at, 10, "        ])") != 0) {
        const std::size_t end = script.find('\n', at);
        const std::string line = script.substr(at, end - at);
        for (std::size_t p = 0; p < line.size();) {
            while (p < line.size() && (line[p] == ' ' || line[p] == ',')) ++p;
            if (p == line.size()) break;
            const std::size_t q = line.find(',', p);
            const std::string number = line.substr(p, q - p);
            out.push_back(number == "-inf" ? -INFINITY : static_cast<float>(std::strtod(number.c_str(), nullptr)));
            p = q;
        }
        at = end + 1;
    }
    return out;
}

// The numbers of the top-level list `head` ("X = [").
std::vector<float> embedded(const std::string& script, const std::string& head) {
    const std::size_t at = script.find("\n" + head);
    REQUIRE(at != std::string::npos);
    return block_values(script, at + 1);
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

}  // namespace

TEST_CASE("the script embeds the trace's inputs, weights and values exactly, every step in order", "[export]") {
    const Mode mode = GENERATE(Mode::Loop, Mode::Split, Mode::Fused);
    const double dropout = GENERATE(0.0, 0.4);
    const ScriptKind kind = GENERATE(ScriptKind::PyTorch, ScriptKind::NumPy);
    test::Case k{5, 7, 6, 3};
    k.dropout = dropout;
    k.qkv_bias = dropout > 0;
    const Trace tr = test::run_cpu(test::config_of(k, mode));
    const std::string script = export_script(tr, kind);
    INFO(mode_name(mode) << " dropout " << dropout << " " << script_kind_name(kind));

    CHECK(embedded(script, "X = [") == tr.inputs.x);
    CHECK(embedded(script, "W_QUERY = [") == tr.weights.w_query);
    CHECK(embedded(script, "W_VALUE = [") == tr.weights.w_value);
    CHECK(embedded(script, "B_OUT = [") == tr.weights.b_out);
    CHECK((script.find("\nB_KEY = [") != std::string::npos) == k.qkv_bias);
    CHECK((script.find("\nDROPOUT_MASK = [") != std::string::npos) == (dropout > 0));

    std::size_t masked = 0, last = 0;
    for (const Step& s : tr.steps) {
        const std::string marker = "    # step " + std::to_string(s.index) + ": " + op_name(s.op);
        const std::size_t at = script.find(marker + (s.head >= 0 ? " (head " + std::to_string(s.head) + ")\n" : "\n"));
        REQUIRE(at != std::string::npos);
        CHECK(at > last);  // in the trace's order
        last = at;
        for (const TensorRecord& t : s.tensors) {
            INFO("step " << s.index << " " << t.name);
            const std::size_t block = script.find("(\"" + t.name + "\", " + shape_str(t.shape) + ", [", at);
            REQUIRE(block != std::string::npos);
            CHECK(block_values(script, script.rfind('\n', block) + 1) == t.values());
            for (float v : t.values()) masked += std::isinf(v);
        }
        // The forward pass shows the step (loop mode's body once, for h).
        if (s.head <= 0) CHECK(script.find("show(\"" + std::string(op_name(s.op)) + "\"") != std::string::npos);
    }
    CHECK(count(script.substr(script.find("\nTRACE = [")), "-inf,") == masked);
    CHECK(script.find("all {len(TRACE)} steps match") != std::string::npos);
}

TEST_CASE("the size of a script is counted from shapes and refused over the limit", "[export]") {
    Config c = config_from_preset("cat-sleeps");
    c.dropout = 0.2;
    const Trace run = test::run_cpu(c);
    CHECK(script_values(plan(c)) == script_values(run));
    CHECK_NOTHROW(check_script_size(run));
    CHECK_THROWS_AS(export_script(plan(c), ScriptKind::NumPy), std::invalid_argument);

    const Config gpt2 = config_from_preset("gpt2-small");
    CHECK(script_values(plan(gpt2)) > kMaxScriptValues);
    CHECK_THROWS_WITH(check_script_size(plan(gpt2)), Catch::Contains("at most 250000 values"));
    // The example the message offers fits.
    Config offered = gpt2;
    offered.tokens = synthetic_tokens(16);
    offered.d_in = offered.d_out = 48;
    CHECK_NOTHROW(check_script_size(plan(offered)));
}

TEST_CASE("typed text becomes a valid Python string", "[export]") {
    Config c;
    c.tokens = {"say\"hi\"", "back\\slash", "caf\xC3\xA9", "it's"};
    const std::string script = export_script(test::run_cpu(c), ScriptKind::NumPy);
    // The docstring shows the sentence as `headsplit trace` prints it: raw, since it holds a
    // backslash; the print() line escapes it once, for Python.
    CHECK(script.rfind("#!/usr/bin/env python3\nr\"\"\"HeadSplit take-home script", 0) == 0);
    CHECK(script.find("\n\"say\"hi\" back\\slash caf\xC3\xA9 it's\"  B=1") != std::string::npos);
    CHECK(script.find("(NumPy): \\\"say\\\"hi\\\" back\\\\slash caf\xC3\xA9 it's\\\"  B=1") != std::string::npos);
    bool clean = true;  // no control character but the newline
    for (char ch : script) clean = clean && (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n');
    CHECK(clean);
    // A control character or bytes that are not UTF-8 never reach a script: the text is refused.
    for (const char* word : {"bell\x07", "bad\xFF", "esc\x1B[2J"}) {
        c.tokens = {"a", word};
        CHECK_THROWS_AS(validate(c), ConfigError);
    }
}
