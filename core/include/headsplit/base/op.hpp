#pragma once
// The one vocabulary of trace steps. Every Step of a Trace is exactly one Op.
#include <cstddef>

namespace headsplit {

enum class Op {
    Input,          // x as given                              [B,T,D_in]
    Project,        // x @ W^T (+ b): one matmul per Q/K/V, one fused, or one per head
    Split,          // fused only: qkv.chunk(3, dim=-1)        [B,T,3*D_out] -> 3 x [B,T,D_out]
    View,           // .view(B, T, H, head_dim)                no data moved
    Transpose,      // .transpose(1, 2)                        no data moved
    CacheAppend,    // decode: keys, values written into the KV cache [B,G,T,hd]; the cache so far is a view
    RepeatKv,       // GQA/MQA: each of G key/value heads repeated for its H/G query heads   copy
    Scores,         // Q @ K^T                                 [B,H,T,T]
    Mask,           // masked_fill_(causal, -inf)              in place
    PadMask,        // masked_fill_(key_padding_mask, -inf)    in place (padded batches)
    Scale,          // / sqrt(head_dim)                        in place
    Softmax,        // softmax(dim=-1)                         [B,H,T,T]
    Dropout,        // dropout(p) on the attention weights     [B,H,T,T]
    Context,        // weights @ V                             [B,H,T,head_dim]
    Tile,           // flash: one query block x one key block: scores, running max m and sum l, accumulator
    Normalize,      // flash: context = accumulator / l        [B,H,T,head_dim]
    TransposeBack,  // .transpose(1, 2)                        no data moved
    Merge,          // .contiguous().view(B, T, D_out)         copy
    Concat,         // loop only: torch.cat(heads, dim=-1)     copy
    OutProj,        // context @ W_out^T + b_out               [B,T,D_out]
    Assemble,       // decode: the prefill's and each round's outputs side by side   [B,T,D_out] copy
    Count
};

constexpr std::size_t kOpCount = static_cast<std::size_t>(Op::Count);

// Name as written in the trace JSON ("input", "transpose_back", ...).
const char* op_name(Op op);

}  // namespace headsplit
