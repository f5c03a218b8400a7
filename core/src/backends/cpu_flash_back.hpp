#pragma once
// The CPU backend's flash attention backward (FlashBackArgs in backend.hpp), on host memory.
#include <cstdint>

#include "headsplit/backends/backend.hpp"

namespace headsplit::cpu {

// Each tensor's first element (offset applied) in host memory, by FlashBackArgs' names.
struct FlashBackData {
    const float *q, *k, *v, *out, *d_out, *m, *l, *key_mask;
    float *lse, *delta, *dq, *dk, *dv, *tile;
};

void flash_backward(const FlashBackArgs& a, const FlashBackData& d);

}  // namespace headsplit::cpu
