#pragma once
// Flash mode's backward (FlashAttention-2), a part of the backward pass (backward.cpp) in a
// file of its own, as flash's forward is: the rows' log-sum-exp and delta, then tile by tile,
// key blocks outer, each tile's probabilities recomputed and its dq, dk, dv added.
#include "buffers.hpp"
#include "forward_steps.hpp"
#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "tape.hpp"

namespace headsplit::detail {

// d_ctx: d context_vec [B, H, T, hd]. Returns d queries [B, H, T, hd] and d keys, d values
// [B, G, S, hd] (a shared key/value head's already summed over its query heads).
Qkv flash_back(const Config& c, Backend& backend, Buffers& buffers, Steps& steps, const Tape& tape, const Val& d_ctx,
               float factor);

}  // namespace headsplit::detail
