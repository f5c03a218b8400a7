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
    // The backward pass (--backward), in the order it runs: each op takes the gradient of
    // its forward op's result and gives those of its inputs (d x = dL/dx, L = sum(dout * output)).
    OutProjBack,        // d context_vec = dout @ W_out; dW_out = dout^T @ context_vec; db_out = column sums
    MergeBack,          // d context_vec [B,T,D_out] viewed as [B,T,H,hd]   no data moved
    ConcatBack,         // loop only: head h's d context_vec, columns h*hd.. of the merged gradient   view
    TransposeBackGrad,  // [B,T,H,hd] -> [B,H,T,hd]                          no data moved
    ContextBack,        // d attn_weights = d context @ V^T; d values = attn_weights^T @ d context
    DropoutBack,        // d attn_weights * keep_mask / (1 - p)
    SoftmaxBack,        // d scores = A * (dA - rowsum(dA * A))
    ScaleBack,          // d scores * scale                                   in place
    MaskBack,           // 0 where the causal mask put -inf                   in place
    PadMaskBack,        // 0 where a key is padding                           in place
    ScoresBack,         // d queries = d scores @ K; d keys = d scores^T @ Q
    RepeatKvBack,       // GQA/MQA: d keys, d values summed over the query heads sharing a KV head
    TransposeGrad,      // [B,H,T,hd] -> [B,T,H,hd]                          no data moved
    ViewBack,           // [B,T,H,hd] -> [B,T,D_out]: .contiguous() first   copy
    SplitBack,          // fused only: d qkv, the three copies side by side in one buffer   view
    ProjectBack,        // dW = d Q^T @ x (one matmul per weight); d x = d Q @ W_q + d K @ W_k + d V @ W_v
    FlashBackRows,      // flash: lse = m + log l, delta = rowsum(d context * context), per query row
    TileBack,           // flash: one tile recomputed from lse, its dq, dk, dv added (FlashAttention-2)
    Count
};

constexpr std::size_t kOpCount = static_cast<std::size_t>(Op::Count);

// Name as written in the trace JSON ("input", "transpose_back", ..., "out_proj_back").
const char* op_name(Op op);

// A step of the backward pass (OutProjBack .. ProjectBack); the JSON's "pass" is "backward".
constexpr bool is_backward(Op op) { return op >= Op::OutProjBack && op < Op::Count; }
const char* pass_name(Op op);  // "forward" | "backward"

}  // namespace headsplit
