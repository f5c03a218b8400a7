#pragma once
// The recorder: the observer of every run (observer.hpp). It times each step's compute,
// reads its tensors back and appends the steps to the trace; it computes nothing.
#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/trace.hpp"
#include "observer.hpp"

namespace headsplit::detail {

// Builds one Step at a time: times the compute between begin() and computed(), then reads
// each backend buffer back at most once for the tensors the step records (with `values`).
// It writes no words: those are a reader's, from the facts recorded here.
class Recorder final : public StepObserver {
public:
    Recorder(Backend& backend, std::vector<Step>& steps, bool values);

    bool reads_values() const override { return values_; }
    void begin(const StepTag& tag) override;
    void computed(std::int64_t matmuls, double flops) override;
    // Records the tensor; with values, reads them now or keeps e.later to make them when
    // first asked for. Its token and key axes must hold the step's rows and keys.
    Source tensor(TensorEvent e) override;
    void end() override;

private:
    using Clock = std::chrono::steady_clock;
    // A recorded tensor's axes must name each dim once, and its token and key dims must hold
    // the step's rows and keys: a mistake here is the engine's, not the user's.
    void check_axes(const std::string& name, const Shape& shape, const Axes& axes) const;

    Backend& backend_;
    std::vector<Step>& steps_;
    const bool values_;
    Step step_;
    std::map<int, std::vector<float>> readback_;
    Clock::time_point start_;
};

}  // namespace headsplit::detail
