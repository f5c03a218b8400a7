#include "headsplit/training/tasks.hpp"

#include <algorithm>
#include <stdexcept>

#include "headsplit/engine/config.hpp"

namespace headsplit {

namespace {

constexpr std::int64_t kCopyLength = 8;     // symbols copied or reversed
constexpr std::int64_t kCopySymbols = 10;   // ids 0 .. 9; 10 is the separator
// Induction: 24 random tokens, of which a run of 5 to 11 at a random place is repeated right
// after itself, so that only the tokens (not the positions) tell where the copy is.
constexpr std::int64_t kInductionTokens = 24;
constexpr std::int64_t kInductionShortest = 5, kInductionLongest = 11;
constexpr std::int64_t kSortLength = 6;     // minGPT's sort: 6 digits of 3
constexpr std::int64_t kSortDigits = 3;

int draw(Rng& rng, std::int64_t n) { return static_cast<int>(rng.next_u64() % static_cast<std::uint64_t>(n)); }

// The position whose token a row of copy or reverse needs: row p (n <= p < 2n) predicts the
// output's symbol p - n, which is input position p - n (copy) or 2n - 1 - p (reverse).
std::int64_t copy_source(Task t, std::int64_t p) {
    return t == Task::Copy ? p - kCopyLength : 2 * kCopyLength - 1 - p;
}

}  // namespace

const char* task_name(Task t) {
    switch (t) {
        case Task::Copy: return "copy";
        case Task::Reverse: return "reverse";
        case Task::Induction: return "induction";
        case Task::Sort: return "sort";
    }
    return "?";
}

const std::vector<Task>& all_tasks() {
    static const std::vector<Task> tasks{Task::Copy, Task::Reverse, Task::Induction, Task::Sort};
    return tasks;
}

Task parse_task(const std::string& name) {
    std::string names;
    for (Task t : all_tasks()) {
        if (name == task_name(t)) return t;
        names += std::string(names.empty() ? "" : ", ") + task_name(t);
    }
    throw ConfigError("--task " + name + ": no such task; the tasks are " + names);
}

TaskShape task_shape(Task t) {
    TaskShape s;
    switch (t) {
        case Task::Copy:
        case Task::Reverse:
            s.vocab = kCopySymbols + 1;
            s.tokens = 2 * kCopyLength + 1;
            s.steps = 200;
            s.lr = 1e-2;
            break;
        case Task::Induction:
            s.vocab = 32;
            s.tokens = kInductionTokens;
            s.layers = 2;
            s.steps = 600;
            s.lr = 1e-2;
            break;
        case Task::Sort:
            s.vocab = kSortDigits;
            s.tokens = 2 * kSortLength - 1;
            s.layers = 2;
            s.steps = 300;
            s.lr = 1e-2;
            break;
    }
    return s;
}

TaskBatch make_batch(Task t, std::int64_t batch, Rng& rng) {
    const TaskShape s = task_shape(t);
    TaskBatch out;
    out.batch = batch;
    out.tokens = s.tokens;
    out.ids.assign(static_cast<std::size_t>(batch * s.tokens), 0);
    out.targets.assign(out.ids.size(), -1);
    for (std::int64_t b = 0; b < batch; ++b) {
        int* ids = &out.ids[static_cast<std::size_t>(b * s.tokens)];
        int* targets = &out.targets[static_cast<std::size_t>(b * s.tokens)];
        switch (t) {
            case Task::Copy:
            case Task::Reverse: {
                const std::int64_t n = kCopyLength;
                for (std::int64_t i = 0; i < n; ++i) ids[i] = draw(rng, kCopySymbols);
                ids[n] = static_cast<int>(kCopySymbols);
                for (std::int64_t p = n; p < 2 * n; ++p) ids[p + 1] = targets[p] = ids[copy_source(t, p)];
                break;
            }
            case Task::Induction: {
                const std::int64_t n = kInductionShortest + draw(rng, kInductionLongest - kInductionShortest + 1);
                const std::int64_t first = draw(rng, s.tokens - 2 * n + 1);
                for (std::int64_t i = 0; i < s.tokens; ++i) ids[i] = draw(rng, s.vocab);
                for (std::int64_t i = 0; i < n; ++i) ids[first + n + i] = ids[first + i];
                // Row p of the copy predicts p + 1's token, seen n positions before it.
                for (std::int64_t p = first + n; p + 1 < first + 2 * n; ++p) targets[p] = ids[p + 1];
                out.lag.push_back(static_cast<int>(n));
                break;
            }
            case Task::Sort: {
                const std::int64_t n = kSortLength;
                std::vector<int> digits(static_cast<std::size_t>(n));
                for (int& d : digits) d = draw(rng, kSortDigits);
                std::copy(digits.begin(), digits.end(), ids);
                std::sort(digits.begin(), digits.end());
                for (std::int64_t i = 0; i + 1 < n; ++i) ids[n + i] = digits[static_cast<std::size_t>(i)];
                for (std::int64_t i = 0; i < n; ++i) targets[n - 1 + i] = digits[static_cast<std::size_t>(i)];
                break;
            }
        }
    }
    return out;
}

std::string score_name(Task t, std::int64_t layer) {
    switch (t) {
        case Task::Copy:
        case Task::Reverse: return "weight on the source position";
        case Task::Induction: return layer == 0 ? "previous-token weight" : "prefix-matching weight";
        case Task::Sort: return "weight on the inputs equal to the next sorted number";
    }
    return "";
}

std::vector<std::int64_t> job_keys(Task t, const TaskBatch& batch, std::int64_t layer, std::int64_t b, std::int64_t p) {
    switch (t) {
        case Task::Copy:
        case Task::Reverse:
            if (p >= kCopyLength && p < 2 * kCopyLength) return {copy_source(t, p)};
            return {};
        case Task::Induction:
            if (layer == 0) return p >= 1 ? std::vector<std::int64_t>{p - 1} : std::vector<std::int64_t>{};
            if (batch.target(b, p) < 0) return {};
            return {p - batch.lag[static_cast<std::size_t>(b)] + 1};
        case Task::Sort: {
            if (p < kSortLength - 1) return {};
            std::vector<std::int64_t> keys;
            for (std::int64_t j = 0; j < kSortLength; ++j)
                if (batch.id(b, j) == batch.target(b, p)) keys.push_back(j);
            return keys;
        }
    }
    return {};
}

double head_score(Task t, const TaskBatch& batch, std::int64_t layer, std::int64_t heads, std::int64_t head,
                  const std::vector<float>& weights) {
    const std::int64_t B = batch.batch, T = batch.tokens;
    if (static_cast<std::int64_t>(weights.size()) != B * heads * T * T)
        throw std::logic_error("head_score: the weights are not [B, H, T, T]");
    double sum = 0;
    std::int64_t rows = 0;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t p = 0; p < T; ++p) {
            const std::vector<std::int64_t> keys = job_keys(t, batch, layer, b, p);
            if (keys.empty()) continue;  // a row the task does not score (sort's targets are always among its inputs)
            ++rows;
            for (std::int64_t j : keys) sum += weights[static_cast<std::size_t>(((b * heads + head) * T + p) * T + j)];
        }
    return rows > 0 ? sum / static_cast<double>(rows) : 0.0;
}

}  // namespace headsplit
