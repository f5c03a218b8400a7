#include "headsplit/narration.hpp"

#include <cmath>

#include "headsplit/numbers.hpp"
#include "headsplit/tensor.hpp"

namespace headsplit {

namespace {

std::string n(std::int64_t v) { return std::to_string(v); }

std::string by(std::int64_t a, std::int64_t b) { return n(a) + " x " + n(b); }

}  // namespace

Narration narrate(Op op, const Config& c, int head) {
    const std::int64_t B = c.batch, T = c.num_tokens(), Di = c.d_in, D = c.d_out, H = c.heads, hd = c.head_dim();
    const bool all = head < 0;
    const std::string x_shape = shape_str({B, T, Di});
    const std::string grid = by(T, T);
    switch (op) {
        case Op::Input:
            return {"b, num_tokens, d_in = x.shape",
                    "The input: a batch of " + n(B) + (B == 1 ? " sentence" : " sentences") + " of " + n(T) +
                        " tokens, each token a row of D_in = " + n(Di) + " numbers."};
        case Op::Project:
            if (!all)
                return {"queries = self.heads[h].W_query(x)  # keys, values alike",
                        "Head " + n(head) + " runs its own three small matmuls: x " + x_shape + " times its " +
                            by(Di, hd) + " slices of W_query, W_key and W_value."};
            if (c.mode == Mode::Fused)
                return {"qkv = self.W_qkv(x)",
                        "One matmul does all three projections: x " + x_shape + " times the stacked " + by(Di, 3 * D) +
                            " weight W_qkv gives " + shape_str({B, T, 3 * D}) + ", queries, keys and values side by side."};
            return {"queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)",
                    "Three matmuls, one per projection: x " + x_shape + " times a " + by(Di, D) +
                        " weight gives queries, keys and values with all " + n(H) +
                        " heads side by side in the last dimension."};
        case Op::Split:
            return {"queries, keys, values = qkv.chunk(3, dim=-1)",
                    "chunk cuts the last dimension into three windows of " + n(D) + "; each is a view with row stride " +
                        n(3 * D) + ", nothing is copied."};
        case Op::View:
            return {"queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)  # keys, values alike",
                    "The last dimension of " + n(D) + " is read as " + n(H) + " heads x " + n(hd) +
                        " features: only the shape and strides change, no number moves."};
        case Op::Transpose:
            return {"queries = queries.transpose(1, 2)  # keys, values alike",
                    "Tokens and heads swap places, grouping the data by head so all " + n(H) +
                        " heads can be computed at once; only the strides are swapped."};
        case Op::Scores:
            if (all)
                return {"attn_scores = queries @ keys.transpose(2, 3)",
                        "Every query is dotted with every key of its head: one batched matmul gives a " + grid +
                            " score grid for each of the " + n(H) + " heads."};
            return {"attn_scores = queries @ keys.transpose(1, 2)",
                    "Head " + n(head) + " dots each of its queries with each of its keys: a " + grid + " score grid."};
        case Op::Mask:
            return {"attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
                    "The causal mask: a token may not look at later tokens, so every score above the diagonal "
                    "becomes -inf, in place."};
        case Op::Scale: {
            const double root = std::sqrt(static_cast<double>(hd));
            return {"attn_scores.div_(self.head_dim ** 0.5)",
                    "The scores are divided by sqrt(head_dim) = sqrt(" + n(hd) + ") = " + format_number(root) +
                        ", in place, so that the softmax does not saturate as head_dim grows."};
        }
        case Op::Softmax:
            return {"attn_weights = torch.softmax(attn_scores, dim=-1)",
                    std::string("Softmax turns each row into attention weights that are positive and sum to 1") +
                        (c.causal ? "; the -inf cells become exactly 0." : ".")};
        case Op::Dropout:
            return {"attn_weights = self.dropout(attn_weights)",
                    "Dropout (training only) zeroes each weight with probability p = " + format_number(c.dropout) +
                        " and scales the survivors by 1 / (1 - p) = " + format_number(1.0 / (1.0 - c.dropout)) + "."};
        case Op::Context:
            return {"context_vec = attn_weights @ values",
                    std::string("Each token's new vector is the weighted average of the value vectors, ") +
                        (all ? "for every head in one batched matmul." : "for head " + n(head) + ".")};
        case Op::TransposeBack:
            return {"context_vec = context_vec.transpose(1, 2)",
                    "Heads and tokens swap back, so each token's " + n(H) +
                        " head outputs sit next to each other; only the strides change."};
        case Op::Merge:
            return {"context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
                    "The transposed tensor is not laid out row by row, so .contiguous() copies it into a new "
                    "buffer; then " + by(H, hd) + " is flattened back into D_out = " + n(D) + "."};
        case Op::Concat:
            return {"context_vec = torch.cat([head(x) for head in self.heads], dim=-1)",
                    "The " + n(H) + " head outputs of " + n(hd) + " features are copied side by side into one " +
                        shape_str({B, T, D}) + " tensor."};
        case Op::OutProj:
            return {"output = self.out_proj(context_vec)",
                    "A last linear layer (W_out " + by(D, D) + " plus bias) mixes the heads' features into the output."};
        case Op::Count: break;
    }
    return {};
}

std::vector<std::string> module_header(const Config& c) {
    const std::string bias = c.qkv_bias ? "True" : "False";
    std::vector<std::string> out;
    if (c.mode == Mode::Loop) {
        out.push_back("class MultiHeadAttentionWrapper(nn.Module):");
        out.push_back("  def __init__(self, d_in, d_out, num_heads):");
        out.push_back("    # one small head per head: " + by(c.d_in, c.head_dim()) + " weights each");
        out.push_back("    self.heads = nn.ModuleList([CausalAttention(d_in, d_out // num_heads)");
        out.push_back("                                for _ in range(num_heads)])");
    } else if (c.mode == Mode::Split) {
        out.push_back("class MultiHeadAttention(nn.Module):");
        out.push_back("  def __init__(self, d_in, d_out, num_heads):");
        out.push_back("    # one " + by(c.d_in, c.d_out) + " weight per component, all heads inside");
        out.push_back("    self.W_query = nn.Linear(d_in, d_out, bias=" + bias + ")");
        out.push_back("    self.W_key = nn.Linear(d_in, d_out, bias=" + bias + ")");
        out.push_back("    self.W_value = nn.Linear(d_in, d_out, bias=" + bias + ")");
    } else {
        out.push_back("class FusedMultiHeadAttention(nn.Module):");
        out.push_back("  def __init__(self, d_in, d_out, num_heads):");
        out.push_back("    # Q, K and V stacked: one " + by(c.d_in, 3 * c.d_out) + " weight");
        out.push_back("    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=" + bias + ")");
    }
    if (c.out_proj) out.push_back("    self.out_proj = nn.Linear(d_out, d_out)");
    if (c.dropout > 0) out.push_back("    self.dropout = nn.Dropout(" + format_number(c.dropout) + ")");
    out.push_back("");
    out.push_back("  def forward(self, x):");
    return out;
}

std::string loop_header() { return "for h in range(self.num_heads):"; }

std::string module_return(const Config& c) { return std::string("return ") + (c.out_proj ? "output" : "context_vec"); }

}  // namespace headsplit
