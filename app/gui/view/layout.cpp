#include "gui/view/layout.hpp"

#include "headsplit/base/numbers.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace headsplit::gui {

const char* axis_label(Axis a) {
    switch (a) {
        case Axis::Batch: return "B";
        case Axis::Token: return "T";
        case Axis::Head: return "H";
        case Axis::KvHead: return "H_kv";
        case Axis::Feature: return "features";
        case Axis::Key: return "T (keys)";
    }
    return "?";
}

bool is_grid_op(Op op) {
    return op == Op::Scores || op == Op::Mask || op == Op::PadMask || op == Op::Scale || op == Op::Softmax ||
           op == Op::Dropout;
}

Axes layout_axes(const TensorRecord& t) {
    if (t.axes.size() == 3 && is_head_axis(t.axes[1])) return {t.axes[0], t.axes[1], t.axes[2], Axis::Feature};
    return t.axes;
}

StepLayout layout_step(const Step& s, std::int64_t heads, std::int64_t head_dim, const LayoutLimits& lim) {
    Config c;
    c.heads = heads;
    c.d_out = heads * head_dim;
    c.tokens.clear();
    return layout_step(s, c, lim);
}

int HeadColours::of_column(std::int64_t col) const {
    // dW_query's rows (all heads at once): head_dim rows a head, whatever D_in is.
    if (weight_rows && step_head < 0 && !kv_cols && !qkv_cols) return head_dim > 0 ? static_cast<int>(col / head_dim) : -1;
    if (kv_cols) return static_cast<int>((col % kv_width) / head_dim * group);
    if (qkv_cols) return static_cast<int>(col < D ? col / head_dim : ((col - D) % kv_width) / head_dim * group);
    if (by_head) return static_cast<int>((col % D) / head_dim);
    if (step_head >= 0 && key_rows && grouped) return static_cast<int>(step_head / group * group);
    return mixed ? -1 : step_head;
}

int HeadColours::of_head(std::int64_t h) const {
    const std::int64_t q_head = kv_heads ? h * group : h;
    return static_cast<int>(grouped && key_rows ? q_head / group * group : q_head);
}

int HeadColours::of_element(std::int64_t i) const {
    if (shape.empty()) return -1;
    Shape ix;
    unravel(shape, i, ix);
    return split ? of_head(ix[head_rows ? 1 : 2]) : of_column(weight_rows ? ix.front() : ix.back());
}

const Cell* TensorLayout::cell_at(std::int64_t index) const {
    const auto it = std::lower_bound(cells.begin(), cells.end(), index,
                                     [](const Cell& c, std::int64_t i) { return c.index < i; });
    return it != cells.end() && it->index == index ? &*it : nullptr;
}

std::string row_name(const Config& c, const TensorLayout& tl, std::int64_t b, std::int64_t r) {
    if (tl.colours.weight_rows) {  // a weight's gradient: the head each block of rows belongs to, at its first row
        const std::int64_t pos = tl.row_offset + r;
        const int h = tl.colours.of_column(pos);
        return h >= 0 && (pos == 0 || tl.colours.of_column(pos - 1) != h) ? "h" + std::to_string(h) : "";
    }
    if (tl.batch_rows) return tl.axes.size() == 1 ? "" : "s" + std::to_string(r);  // a bias's one row: none
    const std::int64_t pos = tl.row_offset + r;
    if (tl.key_rows) {
        if (b >= c.batch || c.tokens.empty()) return "";
        const std::vector<std::string> keys = c.key_tokens(b);
        return pos < static_cast<std::int64_t>(keys.size()) ? keys[static_cast<std::size_t>(pos)] : "";
    }
    if (b >= c.batch || pos >= c.num_tokens() || c.tokens.empty()) return "";
    return c.token_at(b, pos);
}

namespace {

// What a tensor's axes hold and how much of each is drawn: T rows (tokens, keys or
// sentences), X columns, H heads (1 when not split), B sentences.
struct Extent {
    Shape shape;  // m and l of a flash tile get a column of one
    bool split = false, head_rows = false;  // [B, T|H, H|T, X]; [B, H, T, X]
    std::int64_t T = 0, X = 0, H = 1, B = 1;
    std::int64_t rows_shown = 0, cols_shown = 0, heads_shown = 0;
};

// The tensor's block before its cells: axes, row kind, extents, the window's start clamped so
// it stays full; the step's pan maxima grow to take it in.
TensorLayout frame_tensor(const Step& s, const TensorRecord& t, const LayoutLimits& lim, Extent& e, StepLayout& out) {
    TensorLayout tl;
    tl.name = t.name;
    tl.axes = layout_axes(t);
    // A flash tile's m and l, [B, H, rows], lie out as [B, H, rows, 1]: a column per head panel;
    // a bias's gradient [N] as one row [1, N].
    e.shape = tl.axes.size() == 4 && t.shape.size() == 3 ? Shape{t.shape[0], t.shape[1], t.shape[2], 1}
              : t.shape.size() == 1                     ? Shape{1, t.shape[0]}
                                                        : t.shape;
    const Shape& shape = e.shape;
    tl.key_rows = t.key_rows();
    tl.batch_rows = shape.size() == 2;
    tl.kv_heads = t.has(Axis::KvHead);
    // The first row's position: a round's token, its new key, a tile's first query, ...
    tl.row_offset = s.position(t, 0);
    e.split = tl.axes.size() == 4;
    e.head_rows = e.split && is_head_axis(tl.axes[1]);
    e.T = tl.batch_rows ? shape[0] : shape[e.split ? (e.head_rows ? 2 : 1) : 1];
    e.X = shape.back();
    e.H = e.split ? shape[e.head_rows ? 1 : 2] : 1;
    e.B = tl.batch_rows ? 1 : shape[0];
    const std::int64_t col_limit = tl.axes.back() == Axis::Key ? lim.tokens : lim.features;
    e.rows_shown = std::min(e.T, lim.tokens);
    e.cols_shown = std::min(e.X, col_limit);
    e.heads_shown = std::min(e.H, lim.heads);
    tl.batches = std::min(e.B, std::max<std::int64_t>(lim.batch, 1));
    tl.batch0 = std::clamp<std::int64_t>(lim.batch0, 0, e.B - tl.batches);
    tl.rows = e.T, tl.cols = e.X, tl.heads = e.H;
    tl.token0 = std::clamp<std::int64_t>(lim.token0, 0, e.T - e.rows_shown);
    tl.col0 = std::clamp<std::int64_t>(lim.col0, 0, e.X - e.cols_shown);
    tl.head0 = std::clamp<std::int64_t>(lim.head0, 0, e.H - e.heads_shown);
    out.max_token0 = std::max(out.max_token0, e.T - e.rows_shown);
    out.max_col0 = std::max(out.max_col0, e.X - e.cols_shown);
    out.max_head0 = std::max(out.max_head0, e.H - e.heads_shown);
    return tl;
}

// Each element's head colour (HeadColours in layout.hpp).
HeadColours head_colours(const Step& s, const TensorLayout& tl, const Extent& e, const Config& c) {
    HeadColours h;
    h.shape = e.shape;
    h.split = e.split, h.head_rows = e.head_rows;
    h.head_dim = c.head_dim(), h.D = c.heads * c.head_dim();
    h.kv_width = std::max<std::int64_t>(c.kv_width(), 1), h.group = std::max<std::int64_t>(c.group_size(), 1);
    h.grouped = c.grouped(), h.key_rows = tl.key_rows, h.kv_heads = tl.kv_heads, h.step_head = s.head;
    // The backward's gradients of x, the context and the output mix the heads as those do; a
    // weight's gradient is coloured by its rows (W_out's by its columns, the context's).
    const bool mixed_grad = tl.name == "d_output" || tl.name == "d_x" || tl.name == "d_context" || tl.name == "db_out";
    const bool kv_weight = tl.name == "dW_key" || tl.name == "dW_value" || tl.name == "db_key" || tl.name == "db_value";
    const bool qkv_weight = tl.name == "dW_qkv" || tl.name == "db_qkv";
    h.weight_rows = tl.axes.size() == 2 && tl.name.rfind("dW_", 0) == 0 && tl.name != "dW_out";
    // (A [rows, cols] tensor lies out with its rows as batch rows: a weight's are its outputs.)
    h.mixed = (tl.batch_rows && !h.weight_rows && tl.name != "dW_out") || s.op == Op::Input || s.op == Op::OutProj || s.op == Op::Assemble || mixed_grad;
    h.kv_cols = !e.split && !h.mixed && (tl.key_rows || kv_weight) && h.head_dim > 0 && s.head < 0;
    // Fused mode's one projection: queries, keys and values side by side (and its gradients).
    h.qkv_cols = !e.split && !h.mixed && h.head_dim > 0 &&
                 ((s.op == Op::Project && s.head < 0 && s.tensors.size() == 1) || qkv_weight);
    h.by_head = !e.split && !h.mixed && !h.kv_cols && !h.qkv_cols && tl.axes.back() == Axis::Feature && s.head < 0 &&
                h.head_dim > 0 && e.X % h.D == 0;
    return h;
}

// Each element in the window gets a cell: its head colour and where it sits (cell units,
// relative to the tensor's block); sentences' blocks one under the other. Only the window is
// walked: [1, 8192, 1600] shows 16 x 12 of its 13 million values.
void place_cells(TensorLayout& tl, const Extent& e, const LayoutLimits& lim) {
    const Shape& shape = e.shape;
    const int rank = static_cast<int>(shape.size());
    tl.cells.clear();
    tl.hidden = numel(shape);
    if (rank == 0) return;
    // The window along each dim, [lo, hi): a sentence's, a row's, a head's and a column's
    // index each come from one dim (a 2-D tensor's rows and columns may share one), or are 0.
    Shape lo(shape.size(), 0), hi = shape;
    bool empty = false;
    const auto limit = [&](int dim, std::int64_t start, std::int64_t count) {
        if (dim < 0) {
            empty |= !(start <= 0 && 0 < start + count);
            return;
        }
        lo[dim] = std::max(lo[dim], start);
        hi[dim] = std::min(hi[dim], start + count);
        empty |= lo[dim] >= hi[dim];
    };
    const int row_dim = e.split ? (e.head_rows ? 2 : 1) : tl.batch_rows ? 0 : rank >= 2 ? 1 : -1;
    const int hd_dim = e.split ? (e.head_rows ? 1 : 2) : -1;
    limit(tl.batch_rows ? -1 : 0, tl.batch0, tl.batches);
    limit(row_dim, tl.token0, e.rows_shown);
    limit(hd_dim, tl.head0, e.heads_shown);
    limit(rank - 1, tl.col0, e.cols_shown);
    if (empty) {  // no cell: the sentences' gaps alone
        tl.height = static_cast<float>(tl.batches - 1) * kBatchGap;
        return;
    }

    // A 4-d tensor's panels: the outer axis shown (tokens of [B, T, H, X], heads of
    // [B, H, T, X]) in a grid of `pc` columns, each panel a title slot over inner x cols.
    const std::int64_t outer = e.head_rows ? e.heads_shown : e.rows_shown;
    const std::int64_t inner = e.head_rows ? e.rows_shown : e.heads_shown;
    const std::int64_t pc = std::clamp<std::int64_t>(lim.panel_cols, 1, std::max<std::int64_t>(outer, 1));
    const float pitch_x = static_cast<float>(e.cols_shown) + kPanelGap;
    const float pitch_y = kPanelTitle + static_cast<float>(inner) + kPanelRowGap;
    tl.token_panels = e.split && !e.head_rows;
    tl.panel_cols = e.split ? pc : 1;
    float w = 0, h = 0;
    std::vector<std::int64_t> batch_of;
    Shape ix = lo;
    while (true) {
        std::int64_t i = 0;
        for (int d = 0; d < rank; ++d) i = i * shape[d] + ix[d];
        const std::int64_t row = (row_dim >= 0 ? ix[row_dim] : 0) - tl.token0;
        const std::int64_t hd = (hd_dim >= 0 ? ix[hd_dim] : 0) - tl.head0;
        const std::int64_t col = ix.back() - tl.col0;
        Cell c;
        c.index = i;
        c.head = e.split ? tl.colours.of_head(ix[hd_dim]) : tl.colours.of_column(tl.colours.weight_rows ? ix.front() : ix.back());
        if (!e.split) {
            c.x = static_cast<float>(col), c.y = static_cast<float>(row);
        } else {  // panel p of the grid, row r of it
            const std::int64_t p = e.head_rows ? hd : row, r = e.head_rows ? row : hd;
            c.x = static_cast<float>(p % pc) * pitch_x + static_cast<float>(col);
            c.y = static_cast<float>(p / pc) * pitch_y + kPanelTitle + static_cast<float>(r);
        }
        w = std::max(w, c.x + 1);
        h = std::max(h, c.y + 1);
        tl.cells.push_back(c);
        batch_of.push_back(tl.batch_rows ? 0 : ix[0] - tl.batch0);  // its block among those shown
        int d = rank - 1;  // the next index of the window, row-major
        while (d >= 0 && ++ix[d] == hi[d]) ix[d] = lo[d], --d;
        if (d < 0) break;
    }
    if (e.split)
        for (std::int64_t b = 0; b < tl.batches; ++b)
            for (std::int64_t p = 0; p < outer; ++p) {
                PanelBox box;
                box.x = tl.x + static_cast<float>(p % pc) * pitch_x;
                box.y = tl.y + static_cast<float>(p / pc) * pitch_y + static_cast<float>(b) * (h + kBatchGap);
                box.w = static_cast<float>(e.cols_shown);
                box.h = kPanelTitle + static_cast<float>(inner);
                box.index = p + (e.head_rows ? tl.head0 : tl.token0);
                box.batch = tl.batch0 + b;
                tl.panels.push_back(box);
            }
    tl.hidden -= static_cast<std::int64_t>(tl.cells.size());
    // Sentence b's block sits under sentence b - 1's.
    tl.block_height = h;
    for (std::size_t i = 0; i < tl.cells.size(); ++i) {
        Cell& c = tl.cells[i];
        c.x += tl.x;
        c.y += tl.y + static_cast<float>(batch_of[i]) * (h + kBatchGap);
    }
    tl.width = w;
    tl.height = static_cast<float>(tl.batches) * h + static_cast<float>(tl.batches - 1) * kBatchGap;
}

}  // namespace

std::size_t tensors_per_row(std::size_t n, std::int64_t rows) {
    const std::size_t r = static_cast<std::size_t>(std::clamp<std::int64_t>(rows, 1, std::max<std::int64_t>(static_cast<std::int64_t>(n), 1)));
    return std::max<std::size_t>((n + r - 1) / r, 1);
}

StepLayout layout_step(const Step& s, const Config& config, const LayoutLimits& lim) {
    StepLayout out;
    const std::size_t n = lim.first_only ? std::min<std::size_t>(s.tensors.size(), 1) : s.tensors.size();
    const std::size_t per_row = tensors_per_row(n, lim.tensor_rows);
    float x0 = 0, y0 = 0, row_h = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const TensorRecord& t = s.tensors[k];
        if (k > 0 && k % per_row == 0) y0 += row_h + kTensorRowGap, x0 = 0, row_h = 0;
        Extent e;
        TensorLayout tl = frame_tensor(s, t, lim, e, out);
        tl.x = x0, tl.y = y0;
        tl.colours = head_colours(s, tl, e, config);
        if (is_grid_op(s.op) && t.has_values())
            tl.colour_scale = value_range(t.values().data(), t.values().size()).magnitude();
        place_cells(tl, e, lim);
        x0 += tl.width + kTensorGap;
        row_h = std::max(row_h, tl.height);
        out.width = std::max(out.width, tl.x + tl.width);
        out.height = std::max(out.height, tl.y + tl.height);
        out.tensors.push_back(std::move(tl));
    }
    return out;
}

namespace {

// Where element `i` of a copied tensor came from, as its links say: (which link, flat index
// in that link's tensor), or (-1, -1). Merge copies its one source in row-major order; concat
// copies its k-th source into the k-th block of columns.
std::pair<int, std::int64_t> copy_source(const TensorRecord& t, std::int64_t i) {
    if (t.storage != Storage::Copy || t.from.empty() || t.shape.empty()) return {-1, -1};
    if (t.from.size() == 1) return {0, i};
    const std::int64_t cols = t.shape.back(), block = cols / static_cast<std::int64_t>(t.from.size());
    if (block <= 0) return {-1, -1};
    const std::int64_t col = i % cols, row = i / cols;
    return {static_cast<int>(col / block), row * block + col % block};
}

// Each tensor's first flat index when a step's tensors are laid one after another.
std::map<std::string, int> bases(const Step& s) {
    std::map<std::string, int> out;
    int base = 0;
    for (const TensorRecord& t : s.tensors) {
        out.emplace(t.name, base);
        base += static_cast<int>(numel(t.shape));
    }
    return out;
}

}  // namespace

std::vector<int> match_cells(const Step& from, const Step& to) {
    // (buffer, memory offset) -> flat index in `from`: views and in-place ops keep memory.
    std::map<std::pair<int, std::int64_t>, int> by_memory;
    int base = 0;
    for (const TensorRecord& t : from.tensors) {
        const std::int64_t n = numel(t.shape);
        for (std::int64_t i = 0; i < n; ++i) by_memory.emplace(std::make_pair(t.buffer, t.address(i)), base + static_cast<int>(i));
        base += static_cast<int>(n);
    }
    const std::map<std::string, int> from_base = bases(from), to_base = bases(to);
    std::vector<int> match;
    for (const TensorRecord& t : to.tensors) {
        const std::int64_t n = numel(t.shape);
        for (std::int64_t i = 0; i < n; ++i) {
            auto m = by_memory.find({t.buffer, t.address(i)});
            if (m != by_memory.end()) {
                match.push_back(m->second);
                continue;
            }
            // Across a copy forwards: the element the copy read, when it read from `from`.
            int found = -1;
            const auto [link, j] = copy_source(t, i);
            if (link >= 0 && t.from[static_cast<std::size_t>(link)].step == from.index) {
                const auto b = from_base.find(t.from[static_cast<std::size_t>(link)].tensor);
                if (b != from_base.end()) found = b->second + static_cast<int>(j);
            }
            match.push_back(found);
        }
    }
    // Across a copy backwards (stepping back from merge): `from` copied these cells of `to`.
    for (const TensorRecord& f : from.tensors) {
        const std::int64_t n = numel(f.shape);
        const int fb = from_base.at(f.name);
        for (std::int64_t k = 0; k < n; ++k) {
            const auto [link, j] = copy_source(f, k);
            if (link < 0 || f.from[static_cast<std::size_t>(link)].step != to.index) continue;
            const auto b = to_base.find(f.from[static_cast<std::size_t>(link)].tensor);
            if (b == to_base.end()) continue;
            const std::size_t at = static_cast<std::size_t>(b->second + j);
            if (at < match.size() && match[at] < 0) match[at] = fb + static_cast<int>(k);
        }
    }
    return match;
}

Pan pan_window(LayoutLimits& lim, const StepLayout& lay, float dx, float dy) {
    Pan rest{dx, dy};
    if (lay.tensors.empty()) return rest;
    const TensorLayout& t = lay.tensors.front();
    const bool split = t.axes.size() == 4;
    const bool head_rows = split && is_head_axis(t.axes[1]);
    // Whole cells (or whole head panels) only; the fraction is kept by the caller's drag.
    // Whole steps move the start (clamped at either end); the fraction of a step is returned
    // for the next drag event, never the part lost at an end (dragging back moves at once).
    auto move = [](std::int64_t& start, std::int64_t max, float cells, float per) -> float {
        const auto steps = static_cast<std::int64_t>(cells / per);  // towards zero
        start = std::clamp<std::int64_t>(start - steps, 0, max);
        return cells - static_cast<float>(steps) * per;
    };
    const float cols_shown = static_cast<float>(std::min(t.cols, t.axes.back() == Axis::Key ? lim.tokens : lim.features));
    const float rows_shown = static_cast<float>(std::min(t.rows, lim.tokens));
    const float heads_shown = static_cast<float>(std::min(t.heads, lim.heads));
    // The panels' axis (heads, or tokens of token panels) and the rows' axis inside them.
    const bool token_panels = split && !head_rows;
    std::int64_t& outer0 = token_panels ? lim.token0 : lim.head0;
    std::int64_t& inner0 = token_panels ? lim.head0 : lim.token0;
    const std::int64_t outer_max = token_panels ? lay.max_token0 : lay.max_head0;
    const std::int64_t inner_max = token_panels ? lay.max_head0 : lay.max_token0;
    const float inner_shown = token_panels ? heads_shown : rows_shown;
    rest.pans_x = rest.pans_y = true;
    if (lay.max_col0 > 0)
        rest.rest_x = move(lim.col0, lay.max_col0, dx, 1.0f);
    else if (split && outer_max > 0 && lim.panel_cols > 1)  // panels side by side: a panel at a time
        rest.rest_x = move(outer0, outer_max, dx, cols_shown + kPanelGap);
    else
        rest.pans_x = false;
    if (inner_max > 0)  // the rows: tokens (heads in token panels)
        rest.rest_y = move(inner0, inner_max, dy, 1.0f);
    else if (split && outer_max > 0 && lim.panel_cols <= 1)  // panels stacked: a panel at a time
        rest.rest_y = move(outer0, outer_max, dy, kPanelTitle + inner_shown + kPanelRowGap);
    else
        rest.pans_y = false;
    return rest;
}

LayoutLimits layout_variant(int v) {
    static const LayoutLimits levels[] = {{16, 8, 16}, {16, 4, 12}, {12, 3, 8}, {8, 2, 6}, {6, 2, 4}};
    static const LayoutLimits page{32, 12, 48};
    const int at = v < 0 ? std::clamp(v - kPageVariant, 0, kArrangements - 1) : v % kArrangements;
    LayoutLimits l = v < 0 ? page : levels[std::clamp(v / kArrangements, 0, 4)];
    l.panel_cols = kPanelColumns[at % kColumnChoices];
    l.tensor_rows = kTensorRows[at / kColumnChoices];
    return l;
}

namespace {

// `word` cut after any of `marks`: "self.mask.bool()[:n," at "([," is "self.mask.bool(", ")[", ":n,".
std::vector<std::string> cut_after(const std::string& word, const char* marks) {
    std::vector<std::string> pieces;
    std::string piece;
    for (char ch : word) {
        piece += ch;
        if (std::strchr(marks, ch)) pieces.push_back(std::move(piece)), piece.clear();
    }
    if (!piece.empty()) pieces.push_back(piece);
    return pieces;
}

// Appends `pieces` (joined by `sep`) to `lines`, the last line of which is being filled.
void fill(std::vector<std::string>& lines, const std::vector<std::string>& pieces, const std::string& sep, float width,
          const std::function<float(const std::string&)>& measure, bool first_joins) {
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        std::string& line = lines.back();
        const std::string longer = line.empty() ? pieces[i] : line + (i == 0 && !first_joins ? " " : sep) + pieces[i];
        if (!line.empty() && measure(longer) > width) {
            if (!pieces[i].empty()) lines.push_back(pieces[i]);  // a space at the break goes, no empty line
        } else {
            line = longer;
        }
    }
}

}  // namespace

std::vector<std::string> lines_at_spaces(const std::string& text, float width,
                                         const std::function<float(const std::string&)>& measure) {
    std::vector<std::string> lines{""};
    std::size_t at = 0;
    bool first = true;
    while (at <= text.size()) {
        std::size_t end = text.find(' ', at);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(at, end - at);
        const bool number = !word.empty() && word.find_first_not_of("0123456789.-+e") == std::string::npos;
        if (measure(word) <= width || number) {  // a number is never cut
            fill(lines, {word}, " ", width, measure, first);
        } else {  // too wide for any line: after a bracket or a comma, else after a dot
            std::vector<std::string> pieces;
            for (const std::string& p : cut_after(word, "([,"))
                for (const std::string& q : measure(p) <= width ? std::vector<std::string>{p} : cut_after(p, "."))
                    pieces.push_back(q);
            fill(lines, pieces, "", width, measure, first);
        }
        first = false;
        at = end + 1;
    }
    return lines;
}

int label_stride(float pitch, float need) {
    if (!(pitch > 0)) return 1 << 30;
    if (need <= pitch) return 1;
    return static_cast<int>(std::ceil(need / pitch - 1e-4f));
}

MapTiling tile_maps(int n, std::int64_t T, float w, float h, float extra_w, float extra_h, float gap, std::int64_t rows_of_map) {
    n = std::max(n, 1);
    MapTiling best{n, 1, -1e30f};  // the largest cell wins, even when none is positive
    const float t = static_cast<float>(std::max<std::int64_t>(T, 1));
    const float t_rows = rows_of_map > 0 ? static_cast<float>(rows_of_map) : t;
    for (int columns = 1; columns <= n; ++columns) {
        const int rows = (n + columns - 1) / columns;
        const float cw = (w - columns * (extra_w + gap)) / (columns * t);
        const float ch = (h - rows * (extra_h + gap)) / (rows * t_rows);
        const float cell = std::min(cw, ch);
        if (cell > best.cell) best = {columns, rows, cell};
    }
    best.cell = std::max(best.cell, 0.0f);
    return best;
}

FocusTiling focus_tiling(int n, std::int64_t T, float w, float h, float extra_w, float extra_h, float gap, float thumb,
                         float thumb_w, float title_h, float thumb_gap) {
    n = std::max(n, 1);
    auto arrange = [&](bool right) {
        FocusTiling t;
        t.right = right;
        for (t.thumb = thumb;; t.thumb = std::max(4.0f, t.thumb * 0.85f)) {
            const float box_w = std::max(t.thumb, thumb_w) + thumb_gap, box_h = title_h + t.thumb + thumb_gap;
            t.per_line = std::max(1, static_cast<int>((right ? h : w) / (right ? box_h : box_w)));
            t.strip = static_cast<float>((n + t.per_line - 1) / t.per_line) * (right ? box_w : box_h);
            if (t.strip <= 0.4f * (right ? w : h) || t.thumb <= 4.0f) break;
        }
        // (Along the right nothing stands under the large map: no gap below it.)
        t.cell = right ? tile_maps(1, T, w - t.strip, h + gap, extra_w, extra_h, gap).cell
                       : tile_maps(1, T, w, h - t.strip, extra_w, extra_h, gap).cell;
        return t;
    };
    const FocusTiling right = arrange(true), bottom = arrange(false);
    const bool right_fits = right.strip <= w, bottom_fits = bottom.strip <= h;
    if (right_fits != bottom_fits) return right_fits ? right : bottom;
    return bottom.cell > right.cell ? bottom : right;
}

}  // namespace headsplit::gui
