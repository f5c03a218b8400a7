#pragma once
// A tensor as the engine and the trace see it: a strided window into one backend buffer
// (ggml's ne[]/nb[] plus a view source). view / transpose / chunk only compute new
// metadata; no number moves. Strides are in elements.
#include <cstdint>
#include <string>
#include <vector>

namespace headsplit {

using Shape = std::vector<std::int64_t>;

struct TensorDesc {
    int buffer = -1;           // backend buffer id
    std::int64_t offset = 0;   // first element, in elements from the buffer's start
    Shape shape;
    Shape strides;

    std::int64_t numel() const;
    int rank() const { return static_cast<int>(shape.size()); }
    bool is_contiguous() const;  // row-major with no gaps
};

Shape contiguous_strides(const Shape& shape);
std::int64_t numel(const Shape& shape);

// A fresh row-major tensor at `offset` of `buffer`.
TensorDesc contiguous(int buffer, const Shape& shape, std::int64_t offset = 0);

// torch.Tensor.view: same elements, new shape, strides recomputed without copying.
// Throws std::invalid_argument (naming both shapes) when the memory layout makes a view
// impossible, exactly where PyTorch asks for .contiguous() first.
TensorDesc view(const TensorDesc& t, const Shape& new_shape);

// torch.Tensor.transpose(d0, d1): swaps two dims' sizes and strides.
TensorDesc transpose(const TensorDesc& t, int d0, int d1);

// t[..., start:start+len]: a window on the last dim (what qkv.chunk(3, dim=-1) returns).
TensorDesc narrow_last(const TensorDesc& t, std::int64_t start, std::int64_t len);

// Copies t's elements out of `buffer` (the whole backend buffer) in row-major order of
// t's own shape.
std::vector<float> gather(const std::vector<float>& buffer, const TensorDesc& t);
// The same from `size` floats at `buffer` (a backend's own memory); whole rows are copied at
// once. Throws std::out_of_range when t reaches outside the buffer. `sliced`: with a slice
// point after each block of writes (slices.hpp), for a caller whose every frame down from its
// sliced job may pause (the engine's recorder and its grid snapshots).
std::vector<float> gather(const float* buffer, std::int64_t size, const TensorDesc& t, bool sliced = false);

// The multi-index of element `i` of `shape` in row-major order ([1, 3, 2, 3], 7 -> 0 1 0 1).
// The one place an index is unravelled; layouts, explanations and the CLI all use it.
Shape unravel(const Shape& shape, std::int64_t i);
// The same into `out` (resized to the rank), for loops over many elements: no allocation.
void unravel(const Shape& shape, std::int64_t i, Shape& out);

// Memory position (elements from the buffer's start) of element `i`, in row-major order of
// `shape`, of a tensor with these strides and offset.
std::int64_t element_offset(const Shape& shape, const Shape& strides, std::int64_t offset, std::int64_t i);

// "[1, 3, 2, 3]"
std::string shape_str(const Shape& s);

}  // namespace headsplit
