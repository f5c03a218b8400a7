#include "headsplit/teaching/narration.hpp"

#include <algorithm>
#include <cmath>

#include "headsplit/base/numbers.hpp"
#include "headsplit/base/tensor.hpp"
#include "headsplit/teaching/patterns.hpp"

namespace headsplit {

namespace {

std::string n(std::int64_t v) { return std::to_string(v); }

std::string by(std::int64_t a, std::int64_t b) { return n(a) + " x " + n(b); }

// "2:4": rows first .. first + len - 1 as a Python slice.
std::string slice(std::int64_t first, std::int64_t len) { return n(first) + ":" + n(first + len); }
// "queries 2-3" or "query 2".
std::string span(const char* one, const char* many, std::int64_t first, std::int64_t len) {
    return len == 1 ? std::string(one) + " " + n(first) : std::string(many) + " " + n(first) + "-" + n(first + len - 1);
}

// What every op's narration reads: the step, the configuration, and the sizes the words
// name. Worked out once per step; the members are initialized in the order declared.
struct StepContext {
    const Step& s;
    const Config& c;
    const int head, round, tile_q, tile_k;
    const std::int64_t B, Di, D, H, hd;
    const std::int64_t G, KV, r, Dk;
    // Rows of queries in this step (a round decodes one token), the first one's position, and
    // the keys it holds or sees.
    const std::int64_t T, pos, S;
    const bool all;  // all heads at once (not one head of the loop)
    const std::string x_shape, grid, kv_from, round_words;

    StepContext(const Step& step, const Config& config)
        : s(step), c(config), head(s.head), round(s.round), tile_q(s.tile_q), tile_k(s.tile_k), B(c.batch),
          Di(c.d_in), D(c.d_out), H(c.heads), hd(c.head_dim()), G(c.kv_head_count()), KV(c.kv_width()),
          r(c.group_size()), Dk(c.key_dim()), T(s.rows.count), pos(s.rows.first), S(s.keys.count), all(head < 0),
          x_shape(shape_str({B, T, Di})), grid(by(T, S)),
          kv_from(c.cross() ? "the context " + shape_str({B, S, Dk}) : "x"),
          round_words(round > 0    ? "Round " + n(round) + " decodes token " + n(pos) + " alone: "
                      : round == 0 ? "Prefill: "
                                   : "") {}
};

Narration narrate_input(const StepContext& x) {
    const Config& c = x.c;
    const std::int64_t B = x.B, Dk = x.Dk;
    std::string words = "The input: a batch of " + n(B) + (B == 1 ? " sentence" : " sentences") + " of " +
                        n(c.num_tokens()) + " tokens, each token a row of D_in = " + n(x.Di) + " numbers";
    if (c.padded() && !c.cross())
        words += "; shorter sentences are padded to " + n(c.num_tokens()) +
                 " with <pad>, and key_padding_mask [B, T] marks the padding (true = padded)";
    if (c.cross())
        words += "; the context " + shape_str({B, c.num_keys(), Dk}) + " is what the keys and values will be made from" +
                 (c.padded() ? ", its padding marked by key_padding_mask [B, S]" : "");
    if (c.decoding()) words += "; the first " + n(c.decode_from) + " run at once, then one token per round";
    return {c.cross() ? "b, num_tokens, d_in = x.shape; num_keys = context.shape[1]" : "b, num_tokens, d_in = x.shape",
            words + "."};
}

Narration narrate_project(const StepContext& x) {
    const Config& c = x.c;
    const std::int64_t B = x.B, Di = x.Di, D = x.D, hd = x.hd, KV = x.KV, G = x.G, r = x.r, head = x.head;
    if (!x.all) {
        std::string words = "Head " + n(head) + " runs its own three small matmuls: x " + x.x_shape + " times its " +
                            by(Di, hd) + " slice of W_query, and " + x.kv_from + " times its " + by(x.Dk, hd) +
                            " slices of W_key and W_value";
        if (c.grouped())
            words += " (those of key/value head " + n(head / r) + ", which heads " + n(head / r * r) + " to " +
                     n(head / r * r + r - 1) + " share)";
        return {c.cross() ? "queries = self.heads[h].W_query(x); keys = self.heads[h].W_key(context)  # values alike"
                          : "queries = self.heads[h].W_query(x)  # keys, values alike",
                words + "."};
    }
    if (c.mode == Mode::Fused)
        return {"qkv = self.W_qkv(x)",
                x.round_words + "One matmul does all three projections: x " + x.x_shape + " times the stacked " +
                    by(Di, D + 2 * KV) + " weight W_qkv gives " + shape_str({B, x.T, D + 2 * KV}) +
                    ", queries, keys and values side by side."};
    std::string words = x.round_words + "Three matmuls, one per projection: x " + x.x_shape + " times a " + by(Di, D) +
                        " weight gives the queries with all " + n(x.H) + " heads side by side";
    if (c.cross()) words += "; the keys and values come from the context " + shape_str({B, x.S, x.Dk}) + " instead";
    if (c.grouped())
        words += "; keys and values are only " + n(KV) + " wide: " + n(G) + " key/value " + (G == 1 ? "head" : "heads") +
                 " of " + n(hd);
    return {c.cross() ? "queries, keys, values = self.W_query(x), self.W_key(context), self.W_value(context)"
                      : "queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)",
            words + "."};
}

// Split, view, transpose, transpose back, merge and concat: the steps that move the heads
// apart and back together, by strides or by copying.
Narration narrate_layout(const StepContext& x) {
    const Config& c = x.c;
    const std::int64_t D = x.D, H = x.H, hd = x.hd, KV = x.KV, G = x.G;
    switch (x.s.op) {
        case Op::Split:
            if (c.grouped())
                return {"queries, keys, values = qkv.split([self.d_out, self.kv_dim, self.kv_dim], dim=-1)",
                        "split cuts the last dimension into windows of " + n(D) + ", " + n(KV) + " and " + n(KV) +
                            "; each is a view with row stride " + n(D + 2 * KV) + ", nothing is copied."};
            return {"queries, keys, values = qkv.chunk(3, dim=-1)",
                    "chunk cuts the last dimension into three windows of " + n(D) + "; each is a view with row stride " +
                        n(3 * D) + ", nothing is copied."};
        case Op::View:
            if (c.grouped())
                return {"queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)  # keys, values: num_kv_heads",
                        "The queries' " + n(D) + " columns are read as " + n(H) + " heads x " + n(hd) +
                            ", the keys' and values' " + n(KV) + " as " + n(G) + (G == 1 ? " head" : " heads") +
                            " x " + n(hd) + ": only the shape and strides change, no number moves."};
            return {"queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)  # keys, values alike",
                    "The last dimension of " + n(D) + " is read as " + n(H) + " heads x " + n(hd) +
                        " features: only the shape and strides change, no number moves."};
        case Op::Transpose:
            return {"queries = queries.transpose(1, 2)  # keys, values alike",
                    "Tokens and heads swap places, grouping the data by head so " +
                        (H == 2 ? std::string("both heads") : H == 1 ? std::string("the head") : "all " + n(H) + " heads") +
                        " can be computed at once; only the strides are swapped."};
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
                        shape_str({x.B, c.num_tokens(), D}) + " tensor."};
        default: return {};
    }
}

// The cache append, repeat_kv and assemble: decoding's KV cache and grouped-query heads.
Narration narrate_cache(const StepContext& x) {
    const Config& c = x.c;
    const std::int64_t B = x.B, G = x.G, H = x.H, hd = x.hd, S = x.S, r = x.r, pos = x.pos;
    switch (x.s.op) {
        case Op::CacheAppend:
            if (x.round <= 0)
                return {"self.cache_k[:, :, :num_tokens] = keys; keys = self.cache_k[:, :, :num_tokens]  # values alike",
                        "The prefill's keys and values are copied into the KV cache, allocated once for all " +
                            n(c.num_tokens()) + " positions " + shape_str({B, G, c.num_tokens(), hd}) +
                            "; what attention reads is the view of the first " + n(S) + "."};
            return {"self.cache_k[:, :, pos] = keys[:, :, 0]; keys = self.cache_k[:, :, :pos + 1]  # values alike",
                    "The new token's key and value are written into row " + n(pos) + " of the cache, in place: " +
                        n(2 * B * G * hd) + " numbers move, where torch.cat([cache, k]) would copy all " + n(pos + 1) +
                        " rows every round. The cache so far is a view: " + shape_str({B, G, S, hd}) + "."};
        case Op::RepeatKv:
            return {"keys = keys.repeat_interleave(self.num_heads // self.num_kv_heads, dim=1)  # values alike",
                    "Each of the " + n(G) + " key/value " + (G == 1 ? "head" : "heads") + " is copied for its " + n(r) +
                        " query heads, " + shape_str({B, G, S, hd}) + " -> " + shape_str({B, H, S, hd}) +
                        ". keys[:, :, None].expand(b, " + n(G) + ", " + n(r) + ", " + n(S) + ", " + n(hd) +
                        ") would give the same numbers as a view (stride 0 on the repeat axis, no data moved), "
                        "but flattening it to " + n(H) + " heads copies anyway; the cache itself stays " + n(G) +
                        (G == 1 ? " head." : " heads.")};
        case Op::Assemble:
            return {std::string(c.out_proj ? "output" : "context_vec") + " = torch.cat(outputs, dim=1)",
                    "The prefill's " + n(c.decode_from) + " rows and the " + n(c.num_tokens() - c.decode_from) +
                        " decoded ones are copied side by side into " + shape_str({B, c.num_tokens(), x.D}) +
                        ": the same numbers as the full causal pass, one token at a time."};
        default: return {};
    }
}

// Scores, the masks, scale, softmax, dropout, the context vectors and the output
// projection: attention itself.
Narration narrate_attention(const StepContext& x) {
    const Config& c = x.c;
    const bool all = x.all;
    switch (x.s.op) {
        case Op::Scores:
            if (all)
                return {"attn_scores = queries @ keys.transpose(2, 3)",
                        x.round_words + "Every query is dotted with every key of its head: one batched matmul gives a " +
                            x.grid + " score grid for each of the " + n(x.H) + " heads."};
            return {"attn_scores = queries @ keys.transpose(1, 2)",
                    "Head " + n(x.head) + " dots each of its queries with each of its keys: a " + x.grid + " score grid."};
        case Op::Mask:
            return {"attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
                    "The causal mask: a token may not look at later tokens, so every score above the diagonal "
                    "becomes -inf, in place."};
        case Op::PadMask:
            return {all ? "attn_scores.masked_fill_(key_padding_mask[:, None, None, :], -torch.inf)"
                        : "attn_scores.masked_fill_(key_padding_mask[:, None, :], -torch.inf)",
                    "The padding mask: no query may look at a padded key, so the columns of <pad> keys become -inf, "
                    "in place. Padded queries still get rows (nn.MultiheadAttention computes them too); they are "
                    "thrown away later."};
        case Op::Scale: {
            const double root = std::sqrt(static_cast<double>(x.hd));
            return {"attn_scores.div_(self.head_dim ** 0.5)",
                    "The scores are divided by sqrt(head_dim) = sqrt(" + n(x.hd) + ") = " + format_number(root) +
                        ", in place, so that the softmax does not saturate as head_dim grows."};
        }
        case Op::Softmax:
            return {"attn_weights = torch.softmax(attn_scores, dim=-1)",
                    std::string("Softmax turns each row into attention weights that are positive and sum to 1") +
                        (c.causal || c.padded() ? "; the -inf cells become exactly 0." : ".")};
        case Op::Dropout:
            return {"attn_weights = self.dropout(attn_weights)",
                    "Dropout (training only) zeroes each weight with probability p = " + format_number(c.dropout) +
                        " and scales the survivors by 1 / (1 - p) = " + format_number(1.0 / (1.0 - c.dropout)) + "."};
        case Op::Context:
            return {"context_vec = attn_weights @ values",
                    std::string("Each token's new vector is the weighted average of the value vectors, ") +
                        (all ? "for every head in one batched matmul." : "for head " + n(x.head) + ".")};
        case Op::OutProj:
            return {"output = self.out_proj(context_vec)",
                    x.round_words + "A last linear layer (W_out " + by(x.D, x.D) +
                        " plus bias) mixes the heads' features into the output."};
        default: return {};
    }
}

// One flash tile: which queries meet which keys, and what happens to m, l and acc.
Narration narrate_tile(const StepContext& x) {
    const Config& c = x.c;
    const Step& s = x.s;
    const int tile_q = x.tile_q, tile_k = x.tile_k;
    const std::int64_t H = x.H;
    const std::int64_t q0 = s.rows.first, nq = s.rows.count, k0 = s.keys.first, nk = s.keys.count;
    const bool first = tile_k == 0;
    std::int64_t last_run = 0;
    for (std::int64_t j = 0; j < c.key_blocks(); ++j)
        if (c.tile_runs(tile_q, j)) last_run = j;
    const std::string args = "queries[:, :, " + slice(q0, nq) + "], keys[:, :, " + slice(k0, nk) + "], values[:, :, " +
                             slice(k0, nk) + "]";
    std::string words = "Tile (" + n(tile_q) + ", " + n(tile_k) + "): " + span("query", "queries", q0, nq) +
                        (nq == 1 ? " meets " : " meet ") + span("key", "keys", k0, nk) +
                        (H == 1 ? " in the one head" : H == 2 ? " in both heads" : " in all " + n(H) + " heads") +
                        ". The " + by(nq, nk) + " scores are scaled" +
                        (c.causal && k0 + nk - 1 > q0 ? ", masked above the diagonal" : "") +
                        (c.padded() ? ", masked at <pad> keys" : "") +
                        " and folded into each row's running max m and sum l; ";
    words += first ? "this is the first tile of these rows, so m, l and acc start here."
                   : "where m rises, l and acc are first rescaled by exp(m_old - m_new), then p @ V is added.";
    const std::int64_t skipped = c.key_blocks() - 1 - last_run;
    if (tile_k == last_run && skipped > 0)
        words += skipped == 1 ? " Key block " + n(last_run + 1) + " lies wholly above the diagonal: skipped, never computed."
                              : " Key blocks " + n(last_run + 1) + " to " + n(c.key_blocks() - 1) +
                                    " lie wholly above the diagonal: skipped, never computed.";
    return {first ? "m, l, acc = flash_tile(" + args + ")  # new rows: m = -inf, l = 0, acc = 0"
                  : "m, l, acc = flash_tile(" + args + ", m, l, acc)",
            words};
}

// Flash's last step: acc / l, and the score grid it never held.
Narration narrate_normalize(const StepContext& x) {
    const Config& c = x.c;
    const std::int64_t T = c.num_tokens(), S = c.num_keys();
    const std::int64_t all_tiles = c.query_blocks() * c.key_blocks(), ran = c.tiles_run();
    std::string words = "Each row's accumulator is divided by its final sum l: acc / l is exactly "
                        "softmax(scores) @ V, from " + n(ran) + " of " + n(all_tiles) +
                        (all_tiles == 1 ? " tile" : " tiles");
    if (ran < all_tiles) words += " (" + n(all_tiles - ran) + " skipped above the diagonal)";
    words += ". The " + by(T, S) + " grid per head (" +
             human_bytes(4.0 * static_cast<double>(x.B * x.H) * static_cast<double>(T) * static_cast<double>(S)) +
             " in all) was never held, only one " + by(c.flash_block(), c.flash_block()) + " tile per head.";
    return {"context_vec = acc / l[..., None]", words};
}

// The backward steps that only move gradients between layouts, and the output projection's.
// Each code line is what autograd computes there, written out.
Narration narrate_backward_layout(const StepContext& x) {
    const Config& c = x.c;
    const std::int64_t B = x.B, T = x.T, D = x.D, H = x.H, hd = x.hd, KV = x.KV, S = x.S;
    switch (x.s.op) {
        case Op::OutProjBack:
            return {"d_context_vec = d_output @ W_out; dW_out = d_output.flatten(0, 1).T @ context_vec.flatten(0, 1); "
                    "db_out = d_output.sum((0, 1))",
                    "The gradient arrives at the output as d_output " + shape_str({B, T, D}) +
                        ". Going back through the output projection takes two matmuls: one sends it on to the context "
                        "vectors (times W_out), one gives W_out's own gradient from all " + n(B * T) +
                        " rows at once; b_out's gradient is the column sums."};
        case Op::MergeBack:
            return {"d_context_vec = d_context_vec.view(b, num_tokens, self.num_heads, self.head_dim)",
                    "The merge copied going forward; going back its gradient is a view: the " + n(D) +
                        " columns are read as " + by(H, hd) + " again and no number moves."};
        case Op::ConcatBack:
            return {"d_context_vec = d_context_vec[:, :, " + slice(static_cast<std::int64_t>(x.head) * hd, hd) + "]",
                    "Head " + n(x.head) + "'s share of the gradient is its " + n(hd) +
                        " columns of d_context_vec: a view, no number moves."};
        case Op::TransposeBackGrad:
            return {"d_context_vec = d_context_vec.transpose(1, 2)",
                    "The gradient of a transpose is a transpose: heads come back in front of tokens, only the strides "
                    "swap."};
        case Op::TransposeGrad:
            return {"d_queries = d_queries.transpose(1, 2)  # d_keys, d_values alike",
                    "Going back through the transpose: tokens in front of heads again, by swapping strides; the "
                    "gradients are not yet laid out row by row."};
        case Op::ViewBack:
            return {"d_queries = d_queries.contiguous().view(b, num_tokens, self.d_out)  # d_keys, d_values alike",
                    "view needs rows that lie back to back, and the transposed gradient's do not: here the backward "
                    "copies. The forward's copy at the merge was free going back; the copy moved to this end." +
                        std::string(c.mode == Mode::Fused ? " The three copies land side by side in one buffer." : "")};
        case Op::SplitBack:
            return {"d_qkv = torch.cat([d_queries, d_keys, d_values], dim=-1)",
                    "chunk's gradient is the three side by side, " + shape_str({B, T, D + 2 * KV}) +
                        "; the view's copies already wrote them there, so nothing moves."};
        case Op::RepeatKvBack:
            return {"d_keys = d_keys.view(b, " + n(x.G) + ", " + n(x.r) + ", " + n(S) + ", " + n(hd) +
                        ").sum(2)  # d_values alike",
                    "Each key/value head served " + n(x.r) + " query heads, so its gradient is the sum of theirs: " +
                        shape_str({B, H, S, hd}) + " -> " + shape_str({B, x.G, S, hd}) + "."};
        default: return {};
    }
}

// The backward steps that compute: attention's in reverse, and the projections'.
Narration narrate_backward_compute(const StepContext& x) {
    const Config& c = x.c;
    const std::string who = x.all ? "every head at once" : "head " + n(x.head);
    switch (x.s.op) {
        case Op::ContextBack:
            return {"d_attn_weights = d_context_vec @ values.transpose(-2, -1); d_values = attn_weights.transpose(-2, -1) "
                    "@ d_context_vec",
                    "Two matmuls for " + who + ": each weight's gradient is how much its value vector agrees with the "
                    "context's gradient; each value's gradient gathers the gradients of the rows that read it."};
        case Op::DropoutBack:
            return {"d_attn_weights = d_attn_weights * dropout_mask / (1 - p)",
                    "The same cells as the forward are dropped, and the rest scaled by the same " +
                        format_number(1.0 / (1.0 - c.dropout)) + "."};
        case Op::SoftmaxBack:
            return {"d_attn_scores = attn_weights * (d_attn_weights - (d_attn_weights * attn_weights).sum(-1, "
                    "keepdim=True))",
                    "The softmax's backward, row by row: subtract the row's dot product of the weights with their "
                    "gradients, then multiply by the weights. A weight of 0 passes no gradient back."};
        case Op::ScaleBack:
            return {"d_attn_scores = d_attn_scores / self.head_dim ** 0.5",
                    "The scale's gradient is the same scale: divided by sqrt(" + n(x.hd) + ")."};
        case Op::MaskBack:
            return {"d_attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], 0)",
                    "A masked score never reached the output, so its gradient is 0, not NaN."};
        case Op::PadMaskBack:
            return {"d_attn_scores.masked_fill_(key_padding_mask[:, None, None, :], 0)",
                    "The <pad> keys' scores never reached the output: their gradients are 0."};
        case Op::ScoresBack:
            return {"d_queries = d_attn_scores @ keys; d_keys = d_attn_scores.transpose(-2, -1) @ queries",
                    "Two matmuls for " + who + ": a query's gradient is the keys weighted by its scores' gradients, "
                    "a key's the queries weighted by its column's."};
        case Op::ProjectBack:
            if (!x.all)
                return {"dW_query[h] = d_queries.flatten(0, 1).T @ x.flatten(0, 1); d_x += d_queries @ W_query[h]  # keys, "
                        "values alike",
                        "Head " + n(x.head) + " runs six small matmuls: three fill its " + by(x.hd, x.Di) +
                            " row blocks of the weights' gradients, three add its share to d_x."};
            if (c.mode == Mode::Fused)
                return {"dW_qkv = d_qkv.flatten(0, 1).T @ x.flatten(0, 1); d_x = d_qkv @ W_qkv",
                        "One matmul gives the stacked weight's whole gradient " + by(x.D + 2 * x.KV, x.Di) +
                            ", one more gives d_x."};
            return {"dW_query = d_queries.flatten(0, 1).T @ x.flatten(0, 1); d_x = d_queries @ W_query + d_keys @ W_key + "
                    "d_values @ W_value",
                    "dW_query is ONE " + by(x.D, x.Di) + " matmul over all rows; its row blocks are each head's "
                    "gradient. Three such matmuls for the weights, three for d_x, whatever the number of heads."};
        default: return {};
    }
}

// Flash's backward: the two numbers a row keeps, then each tile recomputed.
Narration narrate_flash_back(const StepContext& x) {
    const Config& c = x.c;
    const Step& s = x.s;
    if (s.op == Op::FlashBackRows)
        return {"lse = m + torch.log(l); delta = (d_context_vec * context_vec).sum(-1)",
                "Flash kept no weights, only each row's max m and sum l: lse = m + log l gives any weight again as "
                "exp(score - lse). delta, each row's dot product of the output with its gradient, is the softmax "
                "backward's row sum, computed once here instead of from the weights."};
    const std::int64_t q0 = s.rows.first, nq = s.rows.count, k0 = s.keys.first, nk = s.keys.count;
    const std::string q = "queries[:, :, " + slice(q0, nq) + "]", k = "keys[:, :, " + slice(k0, nk) + "]";
    return {"p = torch.exp(" + q + " @ " + k + ".transpose(-2, -1) * scale - lse); d_values[" + slice(k0, nk) +
                "] += p.T @ d_context_vec; d_queries[" + slice(q0, nq) + "] += ds @ " + k + " * scale",
            "Tile (" + n(s.tile_q) + ", " + n(s.tile_k) + "): the " + by(nq, nk) +
                " weights of " + span("query", "queries", q0, nq) + " and " + span("key", "keys", k0, nk) +
                " are computed again from lse, never read back; with delta they give ds = p * (d_context_vec @ v^T - "
                "delta), and the tile adds its share to d_queries, d_keys and d_values" +
                (c.grouped() ? " (a shared key/value head gathers all its query heads' shares)" : "") + "."};
}

}  // namespace

Narration narrate(const Step& s, const Config& c) {
    const StepContext x(s, c);
    switch (s.op) {
        case Op::Input: return narrate_input(x);
        case Op::Project: return narrate_project(x);
        case Op::Split:
        case Op::View:
        case Op::Transpose:
        case Op::TransposeBack:
        case Op::Merge:
        case Op::Concat: return narrate_layout(x);
        case Op::CacheAppend:
        case Op::RepeatKv:
        case Op::Assemble: return narrate_cache(x);
        case Op::Scores:
        case Op::Mask:
        case Op::PadMask:
        case Op::Scale:
        case Op::Softmax:
        case Op::Dropout:
        case Op::Context:
        case Op::OutProj: return narrate_attention(x);
        case Op::Tile: return narrate_tile(x);
        case Op::Normalize: return narrate_normalize(x);
        case Op::OutProjBack:
        case Op::MergeBack:
        case Op::ConcatBack:
        case Op::TransposeBackGrad:
        case Op::TransposeGrad:
        case Op::ViewBack:
        case Op::SplitBack:
        case Op::RepeatKvBack: return narrate_backward_layout(x);
        case Op::ContextBack:
        case Op::DropoutBack:
        case Op::SoftmaxBack:
        case Op::ScaleBack:
        case Op::MaskBack:
        case Op::PadMaskBack:
        case Op::ScoresBack:
        case Op::ProjectBack: return narrate_backward_compute(x);
        case Op::FlashBackRows:
        case Op::TileBack: return narrate_flash_back(x);
        case Op::Count: break;
    }
    return {};
}

void narrate(Trace& trace) {
    for (Step& s : trace.steps) {
        Narration words = narrate(s, trace.config);
        s.code = std::move(words.code);
        s.explain = std::move(words.explain);
    }
    trace.head_notes.clear();
    for (const HeadPattern& p : head_patterns(trace)) trace.head_notes.push_back(p.name);
}

std::size_t narration_bytes(const Step& s, const Config& c) {
    const Narration words = narrate(s, c);
    return heap_bytes(words.code) + heap_bytes(words.explain);
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
        const std::string kv_in = c.cross() ? "d_context" : "d_in";
        const std::string kv_out = c.grouped() ? "num_kv_heads * self.head_dim" : "d_out";
        if (c.grouped()) out.push_back("    # " + n(c.kv_head_count()) + " key/value heads, each shared by " +
                                       n(c.group_size()) + " query heads");
        out.push_back("    self.W_key = nn.Linear(" + kv_in + ", " + kv_out + ", bias=" + bias + ")");
        out.push_back("    self.W_value = nn.Linear(" + kv_in + ", " + kv_out + ", bias=" + bias + ")");
    } else if (c.mode == Mode::Flash) {
        out.push_back("def flash_tile(q, k, v, m=-torch.inf, l=0.0, acc=0.0):");
        out.push_back("  s = q @ k.transpose(2, 3) / q.shape[-1] ** 0.5  # " + by(c.flash_block(), c.flash_block()) +
                      (c.causal ? ", then -inf above the diagonal" : ""));
        out.push_back("  m_new = torch.maximum(torch.as_tensor(m), s.amax(-1))");
        out.push_back("  p, rescale = torch.exp(s - m_new[..., None]), torch.exp(m - m_new)");
        out.push_back("  return m_new, l * rescale + p.sum(-1), acc * rescale[..., None] + p @ v");
        out.push_back("");
        out.push_back("class FlashMultiHeadAttention(nn.Module):");
        out.push_back("  def __init__(self, d_in, d_out, num_heads, block=" + n(c.flash_block()) + "):");
        out.push_back("    self.W_query = nn.Linear(d_in, d_out, bias=" + bias + ")");
        const std::string kv_in = c.cross() ? "d_context" : "d_in";
        const std::string kv_out = c.grouped() ? "num_kv_heads * self.head_dim" : "d_out";
        out.push_back("    self.W_key = nn.Linear(" + kv_in + ", " + kv_out + ", bias=" + bias + ")");
        out.push_back("    self.W_value = nn.Linear(" + kv_in + ", " + kv_out + ", bias=" + bias + ")");
    } else {
        out.push_back("class FusedMultiHeadAttention(nn.Module):");
        out.push_back("  def __init__(self, d_in, d_out, num_heads):");
        out.push_back("    # Q, K and V stacked: one " + by(c.d_in, c.d_out + 2 * c.kv_width()) + " weight");
        out.push_back(c.grouped() ? "    self.W_qkv = nn.Linear(d_in, d_out + 2 * self.kv_dim, bias=" + bias + ")"
                                  : "    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=" + bias + ")");
    }
    if (c.out_proj) out.push_back("    self.out_proj = nn.Linear(d_out, d_out)");
    if (c.dropout > 0) out.push_back("    self.dropout = nn.Dropout(" + format_number(c.dropout) + ")");
    out.push_back("");
    out.push_back(c.cross() ? "  def forward(self, x, context):" : "  def forward(self, x):");
    return out;
}

std::string loop_header() { return "for h in range(self.num_heads):"; }

std::string module_return(const Config& c) { return std::string("return ") + (c.out_proj ? "output" : "context_vec"); }

std::string axis_words(Axis a) {
    switch (a) {
        case Axis::Batch: return "";
        case Axis::Head: return "heads";
        case Axis::KvHead: return "kv heads";
        case Axis::Token: return "tokens";
        case Axis::Key: return "keys";
        case Axis::Feature: return "features";
    }
    return "";
}

namespace {

// What a size along axis `a` counts, in the plural ("" for the batch, a plain number).
std::string counted(std::int64_t n, Axis a) {
    std::string what = axis_words(a);
    if (n == 1 && !what.empty()) what.pop_back();  // "1 head"
    return std::to_string(n) + (what.empty() ? "" : " " + what);
}

// Two named axes of `t` at one size, the first such pair: {words, words, size}, or nothing.
struct Collision {
    std::string a, b;
    std::int64_t n = 0;
    bool operator==(const Collision& o) const { return a == o.a && b == o.b && n == o.n; }
};
std::vector<Collision> collisions(const TensorRecord& t) {
    std::vector<Collision> out;
    const std::size_t rank = std::min(t.shape.size(), t.axes.size());
    for (std::size_t i = 0; i < rank; ++i)
        for (std::size_t j = i + 1; j < rank; ++j) {
            const std::string a = axis_words(t.axes[i]), b = axis_words(t.axes[j]);
            if (!a.empty() && !b.empty() && a != b && t.shape[i] == t.shape[j]) out.push_back({a, b, t.shape[i]});
        }
    return out;
}

}  // namespace

std::string named_shape(const TensorRecord& t) {
    std::string out = "[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) {
        // The keys' positions are "keys" as a grid's columns; as the rows of keys or values
        // (the context's in cross-attention) they are tokens.
        const bool rows = i + 1 < t.shape.size() && i < t.axes.size() && t.axes[i] == Axis::Key;
        out += (i ? ", " : "") + (i < t.axes.size() ? counted(t.shape[i], rows ? Axis::Token : t.axes[i]) : std::to_string(t.shape[i]));
    }
    return out + "]";
}

std::string size_collision(const Trace& tr, int step) {
    if (step < 0 || step >= static_cast<int>(tr.steps.size())) return "";
    for (const Collision& c : collisions(tr.steps[static_cast<std::size_t>(step)].lead())) {
        bool before = false;
        for (int k = 0; k < step && !before; ++k) {
            const std::vector<Collision> earlier = collisions(tr.steps[static_cast<std::size_t>(k)].lead());
            before = std::find(earlier.begin(), earlier.end(), c) != earlier.end();
        }
        if (!before)
            return "Both " + std::to_string(c.n) + " here: " + c.a + " and " + c.b;
    }
    return "";
}

}  // namespace headsplit
