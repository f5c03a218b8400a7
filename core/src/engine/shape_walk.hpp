#pragma once
// The forward pass walked with shapes only: every step, tensor, shape and link a run would
// record, every buffer it would create, and no numbers (plan(), the memory estimate, the
// matmul counts).
#include <cstdint>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/engine/config.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::detail {

// Hands out buffer ids, counts their sizes and computes nothing: the engine's walk through
// the steps, shapes only.
class ShapeOnlyBackend final : public Backend {
public:
    const char* name() const override { return "none"; }
    int create_buffer(std::int64_t elements) override {
        elements_ += elements;
        sizes_.push_back(elements);
        return next_++;
    }
    std::int64_t size_of(int id) const { return id >= 0 && id < next_ ? sizes_[static_cast<std::size_t>(id)] : 0; }
    void write(int, const std::vector<float>&) override {}
    void read(int, std::vector<float>& out) override { out.clear(); }
    void release_buffers() override {}
    void release(const std::vector<int>&) override {}
    std::int64_t held_bytes() const override { return 0; }
    std::int64_t used_bytes() const override { return 0; }
    void matmul(const TensorDesc&, const TensorDesc&, bool, const TensorDesc*, const TensorDesc&) override {}
    void causal_mask(const TensorDesc&) override {}
    void masked_fill(const TensorDesc&, const TensorDesc&) override {}
    void masked_softmax(const TensorDesc&, const TensorDesc&, float, bool, const TensorDesc*) override {}
    void scale(const TensorDesc&, float) override {}
    void softmax(const TensorDesc&, const TensorDesc&) override {}
    void multiply(const TensorDesc&, const TensorDesc&, float, const TensorDesc&) override {}
    void flash_attention(const FlashArgs&) override {}
    void copy(const TensorDesc&, const TensorDesc&) override {}
    void add(const TensorDesc&, const TensorDesc&, const TensorDesc&) override {}
    void softmax_backward(const TensorDesc&, const TensorDesc&, const TensorDesc&) override {}
    void mask_gradient(const TensorDesc&, bool, const TensorDesc*) override {}
    void flash_backward(const FlashBackArgs&) override {}
    BackendStats take_stats() override { return {}; }

    std::int64_t elements_ = 0;  // all buffers created

private:
    std::vector<std::int64_t> sizes_;  // per buffer id
    int next_ = 0;
};

// The steps of `c` walked with no numbers; `backend` sees every buffer a run would create.
Trace walk(const Config& config, ShapeOnlyBackend& backend);

}  // namespace headsplit::detail
