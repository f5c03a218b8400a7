#pragma once
// Where a forward pass's tensors live on its backend: constants uploaded on the first run
// only, activations allocated on the first run and reused after, and nn.Linear weights as
// windows on those buffers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headsplit/backends/backend.hpp"
#include "headsplit/base/tensor.hpp"
#include "headsplit/engine/trace.hpp"

namespace headsplit::detail {

// The buffers of one configuration on one backend. A forward pass makes the same sequence
// of uploads and allocations every time, so the i-th of a later run reuses the i-th buffer
// of the first: constants (x, weights, the dropout mask) are uploaded once, activations are
// allocated once.
struct Resources {
    std::vector<int> constants, activations;
    std::size_t next_constant = 0, next_activation = 0;
    // The next run writes every constant again from where it is (Runner::reload).
    bool reload = false;
    void rewind() { next_constant = next_activation = 0; }
    std::vector<int> all() const {
        std::vector<int> ids(constants);
        ids.insert(ids.end(), activations.begin(), activations.end());
        return ids;
    }
};

// What a forward pass does with numbers. Compute: run every op (a Runner). Shapes only:
// walk the same steps with no numbers at all (plan() and the memory estimate); constants
// such as the dropout mask are not even drawn.
enum class Work { Compute, ShapesOnly };

// Hands out a pass's buffers in the order the pass asks for them (Resources).
class Buffers {
public:
    Buffers(Backend& backend, Resources& resources, Work work) : be_(backend), res_(resources), work_(work) {}

    // A constant: made and uploaded on the first run only (made not at all for a shapes-only
    // walk, which needs only its size). `make` returns the values, or a reference to them.
    template <class Make>
    int upload_made(std::int64_t elements, Make make) {
        if (res_.next_constant < res_.constants.size()) {
            const int id = res_.constants[res_.next_constant++];
            if (res_.reload && work_ == Work::Compute) {
                const std::vector<float>& data = make();
                be_.write(id, data);
            }
            return id;
        }
        const int id = be_.create_buffer(elements);
        if (work_ == Work::Compute) {
            const std::vector<float>& data = make();  // a temporary lives to the end of the block
            be_.write(id, data);
        }
        res_.constants.push_back(id);
        ++res_.next_constant;
        return id;
    }
    // A constant that exists already (a weight, an input): uploaded from where it is, not
    // copied first.
    int upload_from(std::int64_t elements, const std::vector<float>& values) {
        return upload_made(elements, [&]() -> const std::vector<float>& { return values; });
    }
    // An activation buffer: allocated on the first run, reused after.
    int alloc(const Shape& shape) {
        if (res_.next_activation < res_.activations.size()) return res_.activations[res_.next_activation++];
        const int id = be_.create_buffer(numel(shape));
        res_.activations.push_back(id);
        ++res_.next_activation;
        return id;
    }
    TensorDesc fresh(const Shape& shape) { return contiguous(alloc(shape), shape); }

private:
    Backend& be_;
    Resources& res_;
    const Work work_;
};

// An nn.Linear on the backend: weight [out, in] and, when present, bias [out], with the
// names of the weights they hold (the trace links to them).
struct Linear {
    TensorDesc w, b;
    bool has_bias = false;
    std::string w_name, b_name;
    const TensorDesc* bias() const { return has_bias ? &b : nullptr; }
    std::vector<Source> links(const Source& input) const {
        std::vector<Source> from{input, Source::of_weight(w_name)};
        if (has_bias) from.push_back(Source::of_weight(b_name));
        return from;
    }
    // Head h's share: rows h*hd .. (h+1)*hd-1 of the weight (columns of W in x @ W)
    // and the same entries of the bias. No copy: a window on the same buffers.
    Linear head(std::int64_t h, std::int64_t hd) const {
        const std::int64_t in = w.shape[1];
        return {TensorDesc{w.buffer, h * hd * in, {hd, in}, {in, 1}}, TensorDesc{b.buffer, h * hd, {hd}, {1}},
                has_bias, w_name, b_name};
    }
};

// c = a @ w^T (+ b): a [B, n, in] as one [B*n, in] matrix when its rows lie back to back,
// else batched over B (some tokens of x, when decoding).
inline void linear(Backend& be, const TensorDesc& a, const Linear& w, const TensorDesc& c) {
    if (a.is_contiguous()) {
        be.matmul(view(a, {a.shape[0] * a.shape[1], a.shape[2]}), w.w, true, w.bias(),
                  view(c, {c.shape[0] * c.shape[1], c.shape[2]}));
    } else {
        be.matmul(a, w.w, true, w.bias(), c);
    }
}

}  // namespace headsplit::detail
