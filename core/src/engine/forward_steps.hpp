#pragma once
// What the forward pass (forward.cpp) and flash mode's walk over its tiles (forward_flash.cpp)
// share: a tensor with the link to the step that gave it, and the seam each step is begun and
// its tensors reported through.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "headsplit/base/op.hpp"
#include "headsplit/base/tensor.hpp"
#include "headsplit/engine/trace.hpp"
#include "observer.hpp"

namespace headsplit::detail {

// A tensor on the backend together with the link to the step that gave it.
struct Val {
    TensorDesc t;
    Source src;
};

// Queries, keys and values, as last recorded.
struct Qkv {
    Val q, k, v;
};

using Later = std::shared_ptr<const DeferredValues>;

// Axes of a tensor of queries' rows: [B, H, n, X] per head or [B, n, X] (loop mode's heads
// and merged rows), X keys (a score grid) or features.
inline Axes row_axes(std::size_t rank, Axis last) {
    if (rank == 4) return {Axis::Batch, Axis::Head, Axis::Token, last};
    return {Axis::Batch, Axis::Token, last};
}

// ---- the seam: each step begun and its tensors reported, through the observer, and where
// the next step stands: its decoding round (-1: none), query rows and key positions.
class Steps {
public:
    // T queries, S keys: whole_pass() holds them all.
    Steps(StepObserver& observer, std::int64_t T, std::int64_t S) : obs_(observer), T_(T), S_(S) {}

    StepObserver& observer() const { return obs_; }
    // The tag of a step of `op` (for `head`, -1: all) begun now.
    StepTag tag(Op op, int head = -1) const { return {op, head, round_, rows_, keys_}; }
    void begin(Op op, int head = -1) { obs_.begin(tag(op, head)); }
    Val record(std::string name, const TensorDesc& t, Storage storage, std::vector<Source> from, Axes axes,
               Later later = nullptr) {
        return {t, obs_.tensor({std::move(name), t, storage, std::move(from), std::move(axes), std::move(later)})};
    }
    // Steps begun from now on belong to this decoding round (-1: none), hold these query rows
    // and key positions (a round's token, a tile's blocks); whole_pass(): all T rows, all S keys.
    void set_round(int round) { round_ = round; }
    void set_rows(std::int64_t first, std::int64_t count) { rows_ = {first, count}; }
    void set_keys(std::int64_t first, std::int64_t count) { keys_ = {first, count}; }
    void whole_pass() {
        rows_ = {0, T_};
        keys_ = {0, S_};
    }

protected:
    StepObserver& obs_;

private:
    std::int64_t T_, S_;
    int round_ = -1;
    Span rows_{0, T_}, keys_{0, S_};
};

}  // namespace headsplit::detail
