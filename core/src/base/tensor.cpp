#include "headsplit/base/tensor.hpp"
#include "headsplit/base/slices.hpp"

#include <algorithm>
#include <stdexcept>

namespace headsplit {

std::int64_t numel(const Shape& shape) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

std::int64_t TensorDesc::numel() const { return headsplit::numel(shape); }

Shape contiguous_strides(const Shape& shape) {
    Shape strides(shape.size(), 1);
    for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * shape[i + 1];
    return strides;
}

bool TensorDesc::is_contiguous() const {
    const Shape expect = contiguous_strides(shape);
    for (std::size_t i = 0; i < shape.size(); ++i)
        if (shape[i] != 1 && strides[i] != expect[i]) return false;
    return true;
}

TensorDesc contiguous(int buffer, const Shape& shape, std::int64_t offset) {
    return TensorDesc{buffer, offset, shape, contiguous_strides(shape)};
}

std::string shape_str(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

TensorDesc view(const TensorDesc& t, const Shape& new_shape) {
    if (numel(new_shape) != t.numel())
        throw std::invalid_argument("view " + shape_str(t.shape) + " -> " + shape_str(new_shape) +
                                    ": the element counts differ");
    // Walk the old dims from the innermost outwards, grouping dims that are laid out
    // back to back in memory into chunks; each chunk can be re-split freely, and the new
    // dims must cover whole chunks. (The rule PyTorch's view follows.)
    TensorDesc out{t.buffer, t.offset, new_shape, Shape(new_shape.size(), 1)};
    if (t.shape.empty()) return contiguous(t.buffer, new_shape, t.offset);
    int nd = static_cast<int>(new_shape.size()) - 1;
    std::int64_t chunk_stride = t.strides.back();
    std::int64_t old_count = 1, new_count = 1;
    for (int od = t.rank() - 1; od >= 0; --od) {
        old_count *= t.shape[od];
        const bool chunk_ends =
            od == 0 || (t.shape[od - 1] != 1 && t.strides[od - 1] != old_count * chunk_stride);
        if (!chunk_ends) continue;
        while (nd >= 0 && (new_count < old_count || new_shape[nd] == 1)) {
            out.strides[nd] = new_count * chunk_stride;
            new_count *= new_shape[nd];
            --nd;
        }
        if (new_count != old_count)
            throw std::invalid_argument("view " + shape_str(t.shape) + " -> " + shape_str(new_shape) +
                                        ": the tensor is not laid out contiguously; copy it first");
        if (od > 0) {
            chunk_stride = t.strides[od - 1];
            old_count = new_count = 1;
        }
    }
    if (nd != -1)
        throw std::invalid_argument("view " + shape_str(t.shape) + " -> " + shape_str(new_shape) +
                                    ": shapes do not line up");
    return out;
}

TensorDesc transpose(const TensorDesc& t, int d0, int d1) {
    if (d0 < 0 || d1 < 0 || d0 >= t.rank() || d1 >= t.rank())
        throw std::invalid_argument("transpose(" + std::to_string(d0) + ", " + std::to_string(d1) +
                                    ") of a tensor of shape " + shape_str(t.shape));
    TensorDesc out = t;
    std::swap(out.shape[d0], out.shape[d1]);
    std::swap(out.strides[d0], out.strides[d1]);
    return out;
}

TensorDesc narrow_last(const TensorDesc& t, std::int64_t start, std::int64_t len) {
    if (t.shape.empty() || start < 0 || len < 0 || start + len > t.shape.back())
        throw std::invalid_argument("narrow [" + std::to_string(start) + ", " + std::to_string(start + len) +
                                    ") of the last dim of " + shape_str(t.shape));
    TensorDesc out = t;
    out.offset += start * t.strides.back();
    out.shape.back() = len;
    return out;
}

void unravel(const Shape& shape, std::int64_t i, Shape& idx) {
    idx.assign(shape.size(), 0);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (shape[d] <= 0) continue;
        idx[d] = i % shape[d];
        i /= shape[d];
    }
}

Shape unravel(const Shape& shape, std::int64_t i) {
    Shape idx;
    unravel(shape, i, idx);
    return idx;
}

std::int64_t element_offset(const Shape& shape, const Shape& strides, std::int64_t offset, std::int64_t i) {
    // unravel's arithmetic, summed as it goes (no index vector: this runs per element).
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (shape[d] <= 0) continue;
        offset += (i % shape[d]) * strides[d];
        i /= shape[d];
    }
    return offset;
}

std::vector<float> gather(const float* buffer, std::int64_t size, const TensorDesc& t, bool sliced) {
    const std::int64_t n = t.numel();
    if (n == 0) return {};
    const int r = t.rank();
    // The span of memory the tensor reads must lie in the buffer.
    std::int64_t lo = t.offset, hi = t.offset;
    for (int d = 0; d < r; ++d) {
        const std::int64_t reach = (t.shape[d] - 1) * t.strides[d];
        (reach < 0 ? lo : hi) += reach;
    }
    if (lo < 0 || hi >= size)
        throw std::out_of_range("gather: " + shape_str(t.shape) + " with strides " + shape_str(t.strides) +
                                " reads outside its buffer of " + std::to_string(size) + " floats");
    // One block (no zero-filling first: the values are copied straight in).
    std::vector<float> out;
    if (t.is_contiguous()) {
        if (sliced) append_in_slices(out, buffer + t.offset, static_cast<std::size_t>(n));
        else out.assign(buffer + t.offset, buffer + t.offset + n);
        return out;
    }
    // Rows of the last dim (whole runs when its stride is 1), the outer dims as an odometer;
    // sliced, a slice point after each kSliceFloats or so.
    out.reserve(static_cast<std::size_t>(n));
    std::size_t since_slice = 0;
    const std::int64_t row = r > 0 ? t.shape[r - 1] : 1, step = r > 0 ? t.strides[r - 1] : 1;
    Shape index(static_cast<std::size_t>(std::max(r - 1, 0)), 0);
    std::int64_t pos = t.offset;
    for (std::int64_t done = 0; done < n; done += row) {
        if (step == 1) {
            out.insert(out.end(), buffer + pos, buffer + pos + row);
        } else {
            for (std::int64_t j = 0; j < row; ++j) out.push_back(buffer[pos + j * step]);
        }
        if (sliced && (since_slice += static_cast<std::size_t>(row)) >= kSliceFloats) since_slice = 0, slice_point();
        for (int d = r - 2; d >= 0; --d) {
            if (++index[static_cast<std::size_t>(d)] < t.shape[d]) {
                pos += t.strides[d];
                break;
            }
            pos -= (t.shape[d] - 1) * t.strides[d];
            index[static_cast<std::size_t>(d)] = 0;
        }
    }
    return out;
}

std::vector<float> gather(const std::vector<float>& buffer, const TensorDesc& t) {
    return gather(buffer.data(), static_cast<std::int64_t>(buffer.size()), t);
}

}  // namespace headsplit
