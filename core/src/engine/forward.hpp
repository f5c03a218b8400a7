#pragma once
// The forward pass: multi-head self-attention op by op on a backend, each op's step recorded.
#include <cstddef>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/inputs.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::detail {

// The buffers of one configuration on one backend. A forward pass makes the same sequence
// of uploads and allocations every time, so the i-th of a later run reuses the i-th buffer
// of the first: constants (x, weights, the dropout mask) are uploaded once, activations are
// allocated once.
struct Resources {
    std::vector<int> constants, activations;
    std::size_t next_constant = 0, next_activation = 0;
    void rewind() { next_constant = next_activation = 0; }
    std::vector<int> all() const {
        std::vector<int> ids(constants);
        ids.insert(ids.end(), activations.begin(), activations.end());
        return ids;
    }
};

// What a forward pass does with numbers. Compute: run every op (a Runner). Shapes only:
// walk the same steps with no numbers at all (plan() and the memory estimate); constants
// such as the dropout mask are not even drawn.
enum class Work { Compute, ShapesOnly };

// Runs one forward pass of `c` on `backend` (only the Q, K, V projections with
// `projections_only`), appending its steps to `steps`. `record_values`: see RunOptions.
void run_forward(const Config& c, const Inputs& in, const Weights& w, Backend& backend, Resources& resources,
                 std::vector<Step>& steps, Work work, bool record_values, bool projections_only = false);

}  // namespace headsplit::detail
