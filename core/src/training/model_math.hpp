#pragma once
// The tiny model's parts around its attention layers, on the host: the embeddings in, the
// residual, the unembedding and the cross-entropy out, and their gradients.
#include <cstdint>
#include <vector>

#include "headsplit/training/trainer.hpp"

namespace headsplit {

// h [B, T, d]: h[b, t] = embed[ids[b, t]] + position[t].
std::vector<float> embed(const TinyModel& m, const TaskBatch& batch);
// a + b, elementwise.
std::vector<float> residual(const std::vector<float>& a, const std::vector<float>& b);

struct Logits {
    StepResult result;
    std::vector<float> d_logits;  // [B, T, vocab]: d loss / d logits, 0 where no target
};
// logits = h @ unembed^T; the mean cross-entropy of the targets that count, their accuracy.
Logits unembed_loss(const TinyModel& m, const TaskBatch& batch, const std::vector<float>& h);
// d unembed = d_logits^T @ h (into `d_unembed`); returns d h = d_logits @ unembed.
std::vector<float> unembed_backward(const TinyModel& m, const std::vector<float>& h, const std::vector<float>& d_logits,
                                    std::vector<float>& d_unembed);
// d embed[id] += d h[b, t]; d position[t] += d h[b, t], over every (b, t).
void embed_backward(const TinyModel& m, const TaskBatch& batch, const std::vector<float>& dh,
                    std::vector<float>& d_embed, std::vector<float>& d_position);
// The mean entropy (nats) of head `head`'s rows in attention weights [B, H, T, T].
double row_entropy(const std::vector<float>& weights, std::int64_t B, std::int64_t H, std::int64_t head, std::int64_t T);
// The L2 norm of rows head*hd .. (head+1)*hd-1 of a [*, width] matrix.
double block_norm(const std::vector<float>& w, std::int64_t head, std::int64_t hd, std::int64_t width);

}  // namespace headsplit
