#include <cmath>
#include <stdexcept>

#include "headsplit/training/trainer.hpp"

namespace headsplit {

void Adam::update(const std::vector<std::vector<float>*>& params, const std::vector<const std::vector<float>*>& grads) {
    if (params.size() != grads.size()) throw std::logic_error("Adam: a gradient for every parameter");
    if (m.empty()) {
        for (const std::vector<float>* p : params) {
            m.emplace_back(p->size(), 0.0f);
            v.emplace_back(p->size(), 0.0f);
        }
    }
    ++t;
    const double c1 = 1.0 - std::pow(beta1, static_cast<double>(t));
    const double c2 = 1.0 - std::pow(beta2, static_cast<double>(t));
    const float step = static_cast<float>(lr / c1), root_c2 = static_cast<float>(std::sqrt(c2));
    const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2), e = static_cast<float>(eps);
    for (std::size_t i = 0; i < params.size(); ++i) {
        std::vector<float>& p = *params[i];
        const std::vector<float>& g = *grads[i];
        if (g.size() != p.size()) throw std::logic_error("Adam: a gradient of another size than its parameter");
        float* mi = m[i].data();
        float* vi = v[i].data();
        for (std::size_t j = 0; j < p.size(); ++j) {
            mi[j] = b1 * mi[j] + (1.0f - b1) * g[j];
            vi[j] = b2 * vi[j] + (1.0f - b2) * g[j] * g[j];
            p[j] -= step * mi[j] / (std::sqrt(vi[j]) / root_c2 + e);
        }
    }
}

}  // namespace headsplit
