#pragma once
// The tiny tasks a class trains on, where heads find visible jobs: each makes seeded batches
// of token ids with their next-token targets, and says how well a head does its job from the
// attention weights of a probe batch.
#include <cstdint>
#include <string>
#include <vector>

#include "headsplit/engine/inputs.hpp"

namespace headsplit {

enum class Task { Copy, Reverse, Induction, Sort };
const char* task_name(Task t);  // "copy" | "reverse" | "induction" | "sort"
// ConfigError naming `name` and the tasks there are.
Task parse_task(const std::string& name);
const std::vector<Task>& all_tasks();

// A task's sequences and the model that learns it in seconds.
struct TaskShape {
    std::int64_t vocab = 0;   // token ids 0 .. vocab-1
    std::int64_t tokens = 0;  // T, every sequence's length
    // The model and the run it trains with by default.
    std::int64_t layers = 1, heads = 2, d_model = 32, batch = 64, steps = 200;
    double lr = 1e-2;
};
TaskShape task_shape(Task t);

// Sequences [batch, tokens] and their targets (the id the model should predict after each
// position, -1 where the loss does not count).
struct TaskBatch {
    std::int64_t batch = 0, tokens = 0;
    std::vector<int> ids, targets;
    // Induction: how far back each sequence's repeat is (its copied run's length), which the
    // position alone cannot tell; empty for the other tasks.
    std::vector<int> lag;
    int id(std::int64_t b, std::int64_t t) const { return ids[static_cast<std::size_t>(b * tokens + t)]; }
    int target(std::int64_t b, std::int64_t t) const { return targets[static_cast<std::size_t>(b * tokens + t)]; }
};
TaskBatch make_batch(Task t, std::int64_t batch, Rng& rng);

// How far head h of layer l does the task's job, in [0, 1], from `weights` [B, H, T, T] (the
// layer's attention weights on `batch`): the mean weight its rows give to the position that
// holds what they need (the source token for copy and reverse; for induction, the previous
// token in layer 0 and, in layer 1, the token after the earlier copy of the current one, over
// the repeat's rows; the
// inputs equal to the next sorted number for sort).
double head_score(Task t, const TaskBatch& batch, std::int64_t layer, std::int64_t heads, std::int64_t head,
                  const std::vector<float>& weights);
// The key positions row p of sequence b should look at for head_score (where a head that
// does its job puts its weight), in layer `layer`; none for a row the score does not count.
std::vector<std::int64_t> job_keys(Task t, const TaskBatch& batch, std::int64_t layer, std::int64_t b, std::int64_t p);

// What head_score measures in layer `layer`, for people ("weight on the source position").
std::string score_name(Task t, std::int64_t layer);

}  // namespace headsplit
