#pragma once
// Flash mode's walk over its tiles, a part of the forward pass (forward.cpp) in a file of its
// own: which tiles run one by one, which are kept, which run together, and the steps each
// reports.
#include "buffers.hpp"
#include "forward_steps.hpp"
#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"

namespace headsplit::detail {

// ---- flash mode: tiles of queries x keys with an online softmax (FlashAttention), then
// acc / l. q: [B, H, T, hd]; k, v: [B, G, S, hd], each query head reading its group's head in
// place, no repeat; scores scaled by `factor`, -inf where `key_mask` ([B, S], or none) masks
// a key. Returns context_vec [B, H, T, hd]; `m` and `l`, when given, get each row's final max
// and sum [B, H, T] (what the backward keeps besides the output).
Val flash_tiles(const Config& c, Backend& backend, Buffers& buffers, Steps& steps, const Qkv& t, const Val* key_mask,
                float factor, TensorDesc* m = nullptr, TensorDesc* l = nullptr);

}  // namespace headsplit::detail
