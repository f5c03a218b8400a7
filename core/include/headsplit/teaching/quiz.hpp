#pragma once
// Predict the shape: a question per step of a trace. The right answer is the shape the trace
// recorded for the step's result; the wrong ones are what students get when they make the
// usual mistakes of the step (the transpose left out, axes swapped, heads not split, head_dim
// and heads confused, the T x T grid taken for T x head_dim), read from the result's named
// axes: never a different batch size, never the answer, never one another. Nothing here is a
// table of answers: every option is derived from the trace's own shapes and configuration.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headsplit/engine/trace.hpp"

namespace headsplit {

struct QuizOption {
    Shape shape;
    std::string mistake;  // "" for the right answer; else the slip that gives this shape
};

struct QuizQuestion {
    int step = 0;
    Shape input;   // what the step's result was made from (its first link), empty when none
    std::string tensor;  // the tensor asked about: the one the step's code line names (Step::lead)
    Shape answer;        // its shape, as recorded
    std::string answer_named;  // the answer with its axes named (named_shape)
    std::vector<QuizOption> options;  // 4, distinct, the answer among them exactly once
    int right = 0;                    // index of the answer in options
};

// The question for `step` of `tr`; `seed` orders the options (the same seed, the same order).
QuizQuestion make_question(const Trace& tr, int step, std::uint64_t seed);

// The verdict on `given`, one or more whole sentences (a panel wraps them, never shortens
// them): "Right: queries is [1, 2 heads, 3 tokens, 3 features]."; for a wrong option the
// mistake it stands for and the answer: "Not quite: [1, 3, 2, 3] is the view's shape: the
// transpose was left out, so tokens still come before heads. The step gives queries [1, 2
// heads, 3 tokens, 3 features]."
std::string quiz_verdict(const QuizQuestion& q, const Shape& given);

// A typed answer: "[1, 3, 2, 3]", "1,3,2,3", "(1, 3, 2, 3)", "1x3x2x3" (spaces anywhere).
// Nothing when it is not a list of whole numbers.
std::optional<Shape> parse_shape_answer(const std::string& text);

}  // namespace headsplit
