#pragma once
// What the forward pass keeps for the backward pass: the tensors its gradients are made from,
// still on the backend (a run's buffers live until its Runner ends), each with the link the
// backward's steps name it by. Split and fused keep one HeadTape for all heads; loop keeps one
// per head.
#include <vector>

#include "buffers.hpp"
#include "forward_steps.hpp"

namespace headsplit::detail {

// One head's attention (loop mode) or all heads' (split, fused).
struct HeadTape {
    int head = -1;        // loop: its head; -1: all heads
    Qkv qkv;              // queries [.., T, hd]; keys, values [.., S, hd] as the scores read them
    Qkv unrepeated;       // grouped: keys, values [B, G, S, hd] before repeat_kv; else qkv
    Val weights;          // attn_weights, the softmax's output
    Val dropped;          // attn_weights after dropout (weights when there is none)
    Val keep_mask;        // dropout's mask (buffer < 0 without dropout)
};

struct Tape {
    Val x, context, key_mask;      // the inputs (context, key_mask: buffer < 0 unless used)
    Linear w_query, w_key, w_value;  // split and loop: each projection's weight (and bias)
    Linear w_qkv;                  // fused: the three stacked, [D_out + 2 kv_width, D_in]
    Val qkv;                       // fused: the one projection's result, [B, T, D_out + 2 kv_width]
    Qkv rows;                      // split, fused: Q, K, V as rows [B, n, D] (the view's input)
    std::vector<HeadTape> heads;
    Val merged;                    // context_vec [B, T, D_out], the output projection's input
    Val flash_out;                 // flash: context_vec [B, H, T, hd] (acc / l), its rows' final
    TensorDesc flash_m, flash_l;   // max and sum [B, H, T]: all flash's backward keeps of the grid
    Linear w_out;                  // with the output projection
};

}  // namespace headsplit::detail
