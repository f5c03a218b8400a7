#include "model_math.hpp"

#include <algorithm>
#include <cmath>

namespace headsplit {

std::vector<float> embed(const TinyModel& m, const TaskBatch& batch) {
    const std::int64_t d = m.d_model;
    std::vector<float> h(static_cast<std::size_t>(batch.batch * batch.tokens * d));
    for (std::int64_t b = 0; b < batch.batch; ++b)
        for (std::int64_t t = 0; t < batch.tokens; ++t) {
            const float* e = &m.embed[static_cast<std::size_t>(batch.id(b, t) * d)];
            const float* p = &m.position[static_cast<std::size_t>(t * d)];
            float* out = &h[static_cast<std::size_t>((b * batch.tokens + t) * d)];
            for (std::int64_t i = 0; i < d; ++i) out[i] = e[i] + p[i];
        }
    return h;
}

std::vector<float> residual(const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<float> out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
    return out;
}

Logits unembed_loss(const TinyModel& m, const TaskBatch& batch, const std::vector<float>& h) {
    const std::int64_t V = m.vocab, d = m.d_model, rows = batch.batch * batch.tokens;
    Logits out;
    out.d_logits.assign(static_cast<std::size_t>(rows * V), 0.0f);
    std::int64_t counted = 0;
    for (int t : batch.targets) counted += t >= 0 ? 1 : 0;
    if (counted == 0) return out;
    std::vector<double> z(static_cast<std::size_t>(V));
    double loss = 0, right = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const int target = batch.targets[static_cast<std::size_t>(r)];
        if (target < 0) continue;
        const float* hr = &h[static_cast<std::size_t>(r * d)];
        for (std::int64_t v = 0; v < V; ++v) {
            const float* u = &m.unembed[static_cast<std::size_t>(v * d)];
            float s = 0;
            for (std::int64_t i = 0; i < d; ++i) s += hr[i] * u[i];
            z[static_cast<std::size_t>(v)] = s;
        }
        const auto best = std::max_element(z.begin(), z.end());
        const double top = *best;
        double sum = 0;
        for (double& x : z) sum += (x = std::exp(x - top));
        loss += std::log(sum) - std::log(z[static_cast<std::size_t>(target)]);
        right += best - z.begin() == target ? 1 : 0;
        float* dl = &out.d_logits[static_cast<std::size_t>(r * V)];
        for (std::int64_t v = 0; v < V; ++v)
            dl[v] = static_cast<float>((z[static_cast<std::size_t>(v)] / sum - (v == target ? 1.0 : 0.0)) / counted);
    }
    out.result.loss = loss / static_cast<double>(counted);
    out.result.accuracy = right / static_cast<double>(counted);
    return out;
}

std::vector<float> unembed_backward(const TinyModel& m, const std::vector<float>& h, const std::vector<float>& d_logits,
                                    std::vector<float>& d_unembed) {
    const std::int64_t V = m.vocab, d = m.d_model, rows = static_cast<std::int64_t>(h.size()) / d;
    d_unembed.assign(static_cast<std::size_t>(V * d), 0.0f);
    std::vector<float> dh(h.size(), 0.0f);
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* dl = &d_logits[static_cast<std::size_t>(r * V)];
        const float* hr = &h[static_cast<std::size_t>(r * d)];
        float* dhr = &dh[static_cast<std::size_t>(r * d)];
        for (std::int64_t v = 0; v < V; ++v) {
            const float g = dl[v];
            if (g == 0.0f) continue;
            const float* u = &m.unembed[static_cast<std::size_t>(v * d)];
            float* du = &d_unembed[static_cast<std::size_t>(v * d)];
            for (std::int64_t i = 0; i < d; ++i) {
                du[i] += g * hr[i];
                dhr[i] += g * u[i];
            }
        }
    }
    return dh;
}

void embed_backward(const TinyModel& m, const TaskBatch& batch, const std::vector<float>& dh,
                    std::vector<float>& d_embed, std::vector<float>& d_position) {
    const std::int64_t d = m.d_model;
    d_embed.assign(m.embed.size(), 0.0f);
    d_position.assign(m.position.size(), 0.0f);
    for (std::int64_t b = 0; b < batch.batch; ++b)
        for (std::int64_t t = 0; t < batch.tokens; ++t) {
            const float* g = &dh[static_cast<std::size_t>((b * batch.tokens + t) * d)];
            float* e = &d_embed[static_cast<std::size_t>(batch.id(b, t) * d)];
            float* p = &d_position[static_cast<std::size_t>(t * d)];
            for (std::int64_t i = 0; i < d; ++i) {
                e[i] += g[i];
                p[i] += g[i];
            }
        }
}

double row_entropy(const std::vector<float>& weights, std::int64_t B, std::int64_t H, std::int64_t head, std::int64_t T) {
    double sum = 0;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t i = 0; i < T; ++i)
            for (std::int64_t j = 0; j < T; ++j) {
                const double p = weights[static_cast<std::size_t>(((b * H + head) * T + i) * T + j)];
                if (p > 0) sum -= p * std::log(p);
            }
    return sum / static_cast<double>(B * T);
}

double block_norm(const std::vector<float>& w, std::int64_t head, std::int64_t hd, std::int64_t width) {
    double sum = 0;
    for (std::int64_t i = head * hd * width; i < (head + 1) * hd * width; ++i)
        sum += static_cast<double>(w[static_cast<std::size_t>(i)]) * w[static_cast<std::size_t>(i)];
    return std::sqrt(sum);
}

}  // namespace headsplit
