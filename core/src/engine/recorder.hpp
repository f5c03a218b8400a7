#pragma once
// The recorder: observes the forward pass one step at a time (times its compute, reads its
// tensors back) and appends the steps to the trace. It computes nothing.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::detail {

// A tensor on the backend together with the trace link to where it was recorded.
struct Val {
    TensorDesc t;
    Source src;
};

// Builds one Step at a time: times the compute between begin() and computed(), then reads
// each backend buffer back at most once for the tensors the step records. It writes no
// words: those are a reader's, from the facts recorded here.
class Recorder {
public:
    Recorder(const Config& config, Backend& backend, std::vector<Step>& steps, bool values);

    void begin(Op op, int head = -1);

    bool values() const { return values_; }
    // The step begun is flash tile (query block i, key block j); `keep`: its values are
    // recorded (when the run records values at all).
    void set_tile(int i, int j, bool keep) {
        step_.tile_q = i;
        step_.tile_k = j;
        step_.tile_values = keep;
    }
    // Steps begun from now on belong to this decoding round (-1: none).
    void set_round(int round) { round_ = round; }
    // Steps begun from now on hold these query rows and key positions (a round's token, a
    // tile's blocks); whole_pass() puts back all T rows and all S keys.
    void set_rows(std::int64_t first, std::int64_t count) { rows_ = {first, count}; }
    void set_keys(std::int64_t first, std::int64_t count) { keys_ = {first, count}; }
    void whole_pass() {
        rows_ = {0, config_.num_tokens()};
        keys_ = {0, config_.num_keys()};
    }

    void computed(std::int64_t matmuls, double flops);

    // Records `t` as tensor `name` of the step, made from `from`, its dims counting `axes`;
    // returns the link to it. Its token and key axes hold the step's rows and keys.
    // `later`: its values are made when first asked for, not read now.
    Val tensor(const std::string& name, const TensorDesc& t, Storage storage, std::vector<Source> from, Axes axes,
               std::shared_ptr<const DeferredValues> later = nullptr);

    void end();

private:
    using Clock = std::chrono::steady_clock;
    // A recorded tensor's axes must name each dim once, and its token and key dims must hold
    // the step's rows and keys: a mistake here is the engine's, not the user's.
    void check_axes(const std::string& name, const Shape& shape, const Axes& axes) const;

    const Config& config_;
    Backend& backend_;
    std::vector<Step>& steps_;
    const bool values_;
    Step step_;
    int round_ = -1;
    Span rows_, keys_;
    std::map<int, std::vector<float>> readback_;
    Clock::time_point start_;
};

}  // namespace headsplit::detail
