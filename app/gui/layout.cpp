#include "layout.hpp"

#include <algorithm>
#include <map>

namespace headsplit::gui {

const char* axis_label(Axis a) {
    switch (a) {
        case Axis::Batch: return "B";
        case Axis::Token: return "T";
        case Axis::Head: return "H";
        case Axis::Feature: return "features";
        case Axis::Key: return "T (keys)";
    }
    return "?";
}

namespace {

bool is_grid_op(Op op) {
    return op == Op::Scores || op == Op::Mask || op == Op::Scale || op == Op::Softmax || op == Op::Dropout;
}

}  // namespace

std::vector<Axis> axes_of(const Step& s, const TensorRecord& t) {
    const Axis last = is_grid_op(s.op) ? Axis::Key : Axis::Feature;
    if (t.shape.size() == 4) {
        if (s.op == Op::View || s.op == Op::TransposeBack) return {Axis::Batch, Axis::Token, Axis::Head, Axis::Feature};
        return {Axis::Batch, Axis::Head, Axis::Token, last};
    }
    return {Axis::Batch, Axis::Token, last};
}

std::int64_t element_offset(const TensorRecord& t, std::int64_t i) {
    std::int64_t off = t.offset;
    for (int d = static_cast<int>(t.shape.size()) - 1; d >= 0; --d) {
        off += (i % t.shape[d]) * t.strides[d];
        i /= t.shape[d];
    }
    return off;
}

StepLayout layout_step(const Step& s, std::int64_t heads, std::int64_t head_dim, const LayoutLimits& lim) {
    StepLayout out;
    float x0 = 0;
    for (const TensorRecord& t : s.tensors) {
        TensorLayout tl;
        tl.name = t.name;
        tl.axes = axes_of(s, t);
        tl.x = x0;
        const std::int64_t n = numel(t.shape);
        tl.cells.resize(static_cast<std::size_t>(n));
        const bool split = tl.axes.size() == 4;
        const bool head_rows = split && tl.axes[1] == Axis::Head;  // [B, H, T, X]
        const std::int64_t T = t.shape[split ? (head_rows ? 2 : 1) : 1];
        const std::int64_t X = t.shape.back();
        const std::int64_t H = split ? t.shape[head_rows ? 1 : 2] : 1;
        const std::int64_t rows_shown = std::min(T, lim.tokens);
        const std::int64_t cols_shown = std::min(X, tl.axes.back() == Axis::Key ? lim.tokens : lim.features);
        const std::int64_t heads_shown = std::min(H, lim.heads);
        // Features of a [B, T, D_out] tensor, or the 3 x D_out of qkv, belong to heads in blocks of
        // head_dim; the input x and the output projection mix them.
        const bool by_head = !split && tl.axes.back() == Axis::Feature && t.name != "x" && t.name != "output" &&
                             s.head < 0 && head_dim > 0 && X % (heads * head_dim) == 0;
        float w = 0, h = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            std::int64_t rest = i;
            const std::int64_t col = rest % X;
            rest /= X;
            std::int64_t row, hd_index = 0;
            if (split) {
                const std::int64_t inner = rest % t.shape[2];
                rest /= t.shape[2];
                const std::int64_t outer = rest % t.shape[1];
                row = head_rows ? inner : outer;
                hd_index = head_rows ? outer : inner;
            } else {
                row = rest % T;
            }
            Cell& c = tl.cells[static_cast<std::size_t>(i)];
            c.head = split ? static_cast<int>(hd_index)
                           : by_head ? static_cast<int>((col % (heads * head_dim)) / head_dim) : s.head;
            c.visible = row < rows_shown && col < cols_shown && hd_index < heads_shown;
            if (!c.visible) {
                ++tl.hidden;
                continue;
            }
            if (!split) {
                c.x = static_cast<float>(col);
                c.y = static_cast<float>(row);
            } else if (!head_rows) {  // [B, T, H, F]: head groups side by side in each row
                c.x = static_cast<float>(hd_index) * (static_cast<float>(cols_shown) + kHeadGap) + static_cast<float>(col);
                c.y = static_cast<float>(row);
            } else {  // [B, H, T, X]: head panels stacked
                c.x = static_cast<float>(col);
                c.y = static_cast<float>(hd_index) * (static_cast<float>(rows_shown) + kPanelGap) + static_cast<float>(row);
            }
            w = std::max(w, c.x + 1);
            h = std::max(h, c.y + 1);
        }
        for (Cell& c : tl.cells) {
            c.x += tl.x;
            c.y += tl.y;
        }
        tl.width = w;
        tl.height = h;
        x0 += w + kTensorGap;
        out.width = tl.x + w;
        out.height = std::max(out.height, h);
        out.tensors.push_back(std::move(tl));
    }
    return out;
}

std::vector<int> match_cells(const Step& from, const Step& to) {
    // (buffer, memory offset) -> flat index in `from`
    std::map<std::pair<int, std::int64_t>, int> by_memory;
    std::map<std::string, std::pair<int, std::int64_t>> by_name;  // name -> (first flat index, numel)
    int base = 0;
    for (const TensorRecord& t : from.tensors) {
        const std::int64_t n = numel(t.shape);
        for (std::int64_t i = 0; i < n; ++i) by_memory.emplace(std::make_pair(t.buffer, element_offset(t, i)), base + static_cast<int>(i));
        by_name.emplace(t.name, std::make_pair(base, n));
        base += static_cast<int>(n);
    }
    std::vector<int> match;
    for (const TensorRecord& t : to.tensors) {
        const std::int64_t n = numel(t.shape);
        auto named = by_name.find(t.name);
        const bool across_copy = named != by_name.end() && named->second.second == n &&
                                 (t.storage == Storage::Copy || to.op == Op::Merge || from.op == Op::Merge ||
                                  to.op == Op::Concat || from.op == Op::Concat);
        for (std::int64_t i = 0; i < n; ++i) {
            auto m = by_memory.find({t.buffer, element_offset(t, i)});
            if (m != by_memory.end()) match.push_back(m->second);
            else if (across_copy) match.push_back(named->second.first + static_cast<int>(i));
            else match.push_back(-1);
        }
    }
    return match;
}

}  // namespace headsplit::gui
