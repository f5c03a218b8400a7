#include "gui/view/explain.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "headsplit/base/numbers.hpp"

namespace headsplit::gui {

namespace {

std::string num(double v) { return format_number(v); }

std::string index_str(const Shape& idx) {
    std::string s;
    for (auto v : idx) s += "[" + std::to_string(v) + "]";
    return s;
}

// The value at multi-index `idx` of a recorded tensor (its data is row-major in its shape).
float at(const TensorRecord& t, const Shape& idx) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) flat = flat * t.shape[d] + idx[d];
    return t.values()[static_cast<std::size_t>(flat)];
}

// A row of a [.., M, K] tensor of one batch entry (and head, when it has a head dim): the
// operand of a matmul, as the explanation reads it. Loop mode's [B, T, hd] has no head dim.
struct Matrix {
    const TensorRecord* t = nullptr;
    std::int64_t batch = 0, head = 0;
    float get(std::int64_t row, std::int64_t col) const {
        if (t->shape.size() == 4) return at(*t, {batch, head, row, col});
        return at(*t, {batch, row, col});
    }
};

// "a×b + c×d + ... = sum" for a dot product of n terms, showing at most 4.
std::string dot_text(const std::vector<double>& a, const std::vector<double>& b, double* sum) {
    std::string s;
    *sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        *sum += a[i] * b[i];
        if (i < 4) s += (i ? " + " : "") + num(a[i]) + "×" + num(b[i]);
    }
    if (a.size() > 4) s += " + ... (" + std::to_string(a.size()) + " terms)";
    return s;
}

// Query `row` of q dotted with key `key` of k over hd features: the terms as text, the sum.
std::string query_key_dot(const Matrix& q, std::int64_t row, const Matrix& k, std::int64_t key, std::int64_t hd,
                          double* sum) {
    std::vector<double> a, b;
    for (std::int64_t d = 0; d < hd; ++d) {
        a.push_back(q.get(row, d));
        b.push_back(k.get(key, d));
    }
    return dot_text(a, b, sum);
}

// "attn_scores of step 4"
std::string named(const Source& link) {
    return link.is_weight() ? link.weight : link.tensor + " of step " + std::to_string(link.step);
}

// The element of `src` at memory position `address` (same buffer): the one a view reads.
std::int64_t element_at_address(const TensorRecord& src, std::int64_t address) {
    const std::int64_t n = numel(src.shape);
    for (std::int64_t j = 0; j < n; ++j)
        if (src.address(j) == address) return j;
    return -1;
}

// "memory address 0 + 1·12 + 2·1 = 14 of buffer 3": where a view's element sits.
std::string address_line(const TensorRecord& r, const Shape& at_idx, std::int64_t addr) {
    std::string a = "memory address " + std::to_string(r.offset);
    for (std::size_t d = 0; d < at_idx.size(); ++d)
        a += " + " + std::to_string(at_idx[d]) + "·" + std::to_string(r.strides[d]);
    return a + " = " + std::to_string(addr) + " of buffer " + std::to_string(r.buffer);
}

// A source the explanation needs is missing: say so, and recompute nothing.
void missing(Explanation& e) { e.lines.push_back("(the trace does not link this tensor to its sources)"); }

// What every op's explanation reads: the cell, its place in the matrices, the tensors it was
// made from, and the tokens its row and columns stand for. Worked out once per cell; the
// members are initialized in the order declared, each from those before it.
struct CellContext {
    const Trace& tr;
    const Step& s;
    const TensorRecord& t;
    const Config& c;
    const std::int64_t index;
    const Shape idx;
    const float value;
    const std::int64_t hd, D, Di;
    const std::int64_t address;
    // Matrix coordinates: batch, row (query token) and column of the last two dims; the head
    // from the batched dim or the loop step.
    const std::int64_t batch, row, col, head;
    const std::vector<std::string> keys;  // the key tokens of this batch entry
    // The row's position, as the step says: a decoding round's queries start at its token, the
    // cache's keys at 0, a tile's rows at its query block.
    const std::int64_t row_pos;
    const std::string tok_row;
    // The tensors this one was made from, as the trace links them.
    std::vector<const TensorRecord*> src;

    CellContext(const Trace& trace, const Step& step, const TensorRecord& tensor, std::int64_t i)
        : tr(trace), s(step), t(tensor), c(trace.config), index(i), idx(unravel(t.shape, i)),
          value(t.values()[static_cast<std::size_t>(i)]), hd(c.head_dim()), D(c.d_out), Di(c.d_in), address(t.address(i)),
          batch(idx.empty() ? 0 : idx[0]), row(idx.size() >= 2 ? idx[idx.size() - 2] : 0), col(idx.back()),
          head(s.head >= 0 ? s.head : (idx.size() == 4 ? idx[1] : 0)),
          keys(c.key_tokens(std::min(batch, c.batch - 1))), row_pos(s.position(t, row)),
          tok_row(t.key_rows() && c.cross() ? key_token(row_pos) : token(row_pos)) {
        for (const Source& link : t.from) src.push_back(tr.source(link));
    }

    // The weight a link names (null for a link to a tensor, or a weight the trace lacks).
    const std::vector<float>* weight(const Source& link) const {
        return link.is_weight() ? tr.weights.find(link.weight) : nullptr;
    }
    // Token i of this batch entry's text, quoted ("?" out of range).
    std::string token(std::int64_t i) const {
        return i >= 0 && i < c.num_tokens() ? "\"" + c.token_at(batch, i) + "\"" : std::string("?");
    }
    // Key j of this batch entry (the context's token under cross-attention), quoted.
    std::string key_token(std::int64_t j) const {
        return j >= 0 && j < static_cast<std::int64_t>(keys.size()) ? "\"" + keys[static_cast<std::size_t>(j)] + "\""
                                                                     : std::string("?");
    }
    // The link of `t` to the tensor `name` of this step (this_step) or of an earlier one; -1: none.
    int link_to(const std::string& name, bool this_step) const {
        for (std::size_t n = 0; n < t.from.size(); ++n)
            if (t.from[n].tensor == name && (t.from[n].step == s.index) == this_step) return static_cast<int>(n);
        return -1;
    }
};

void explain_input(const CellContext& x, Explanation& e) {
    const Config& c = x.c;
    if (x.t.name == "key_padding_mask") {  // [B, S]: row = the sentence
        const bool pad = x.tr.inputs.key_padding_mask[static_cast<std::size_t>(x.index)] != 0.0f;
        const std::vector<std::string> sent = c.key_tokens(x.idx[0]);
        e.lines.push_back("key " + std::to_string(x.col) + " of sentence " + std::to_string(x.idx[0]) + " is " +
                          (pad ? "padding (<pad>): true, masked later" : "\"" + sent[static_cast<std::size_t>(x.col)] +
                                                                          "\", a real token: false"));
        e.recomputed = pad ? 1.0 : 0.0;
        return;
    }
    if (x.t.name == "context") {
        e.lines.push_back("feature " + std::to_string(x.col) + " of context token " + x.key_token(x.row) + "'s embedding");
        e.lines.push_back("keys and values are made from these rows, queries from x");
        e.recomputed = x.tr.inputs.context[static_cast<std::size_t>(x.index)];
        return;
    }
    e.lines.push_back("feature " + std::to_string(x.col) + " of token " + x.tok_row + "'s embedding");
    e.lines.push_back(c.embeddings.empty() ? "generated from seed " + std::to_string(c.seed) +
                                                 " and the word itself, so a repeated word gets the same row"
                                           : "the preset's fixed embedding");
    e.recomputed = x.tr.inputs.x[static_cast<std::size_t>((x.batch * c.num_tokens() + x.row) * x.Di + x.col)];
}

void explain_project(const CellContext& x, Explanation& e) {
    // from: x, then the weight(s), then the bias(es). Fused qkv names all three weights
    // and picks by column; a loop head uses its block of rows.
    const TensorRecord& t = x.t;
    const Config& c = x.c;
    const std::int64_t col = x.col, D = x.D;
    if (t.from.size() < 2 || !x.src[0]) return missing(e);
    const std::size_t n_weights = t.from.size() >= 4 && t.from[3].is_weight() && t.from[3].weight[0] == 'w' ? 3 : 1;
    // Fused columns: queries [0, D), keys [D, D + KV), values [D + KV, D + 2 KV).
    const std::int64_t KV = c.kv_width();
    const std::int64_t part = n_weights == 3 ? (col < D ? 0 : col < D + KV ? 1 : 2) : 0;
    std::int64_t out_row = n_weights == 3 ? (part == 0 ? col : col - D - (part - 1) * KV) : col;
    const bool is_query = n_weights == 3 ? part == 0 : t.from[1].weight == "w_query";
    if (x.s.head >= 0) out_row = (is_query ? x.s.head : x.s.head / c.group_size()) * x.hd + col;
    const Source& wlink = t.from[1 + static_cast<std::size_t>(part)];
    const std::vector<float>* w = x.weight(wlink);
    const std::size_t bias_at = 1 + n_weights + static_cast<std::size_t>(part);
    const std::vector<float>* b = bias_at < t.from.size() ? x.weight(t.from[bias_at]) : nullptr;
    if (!w) return missing(e);
    // The input row: x's (decoding: the token this round reads) or the context's.
    const std::int64_t in_dim = x.src[0]->shape.back();
    const std::int64_t in_row = x.row_pos;
    const bool from_context = t.from[0].tensor == "context";
    std::vector<double> xs, ws;
    for (std::int64_t i = 0; i < in_dim; ++i) {
        xs.push_back(at(*x.src[0], {x.batch, in_row, i}));
        ws.push_back((*w)[static_cast<std::size_t>(out_row * in_dim + i)]);
    }
    double sum = 0;
    const std::string terms = dot_text(xs, ws, &sum);
    e.lines.push_back((from_context ? "context[" : "x[") + std::to_string(in_row) + "] (token " +
                      (from_context ? x.key_token(in_row) : x.token(in_row)) + ") · " + wlink.weight + "[" +
                      std::to_string(out_row) + "] (row " + std::to_string(out_row) + " of the nn.Linear weight)");
    e.lines.push_back("= " + terms);
    if (b && !b->empty()) {
        sum += (*b)[static_cast<std::size_t>(out_row)];
        e.lines.push_back("+ bias " + num((*b)[static_cast<std::size_t>(out_row)]));
    }
    e.lines.push_back("= " + num(sum) + "   (feature " + std::to_string(out_row) + " belongs to " +
                      (is_query ? "head " : "key/value head ") + std::to_string(out_row / x.hd) + ")");
    e.recomputed = sum;
}

// Split, view, transpose and transpose back.
void explain_view(const CellContext& x, Explanation& e) {
    // A view reads its source's memory: the source's element at this address.
    if (x.src.empty() || !x.src[0]) return missing(e);
    const TensorRecord& from = *x.src[0];
    const TensorRecord& t = x.t;
    const std::int64_t j = from.buffer == t.buffer ? element_at_address(from, x.address) : -1;
    e.lines.push_back("the same number as before this step, not a copy:");
    e.lines.push_back(address_line(t, x.idx, x.address));
    e.lines.push_back("strides " + shape_str(t.strides) + ": how many elements to skip per step along each dim");
    if (j < 0) {
        e.lines.push_back("(no element of " + named(t.from[0]) + " is at this address)");
        return;
    }
    e.lines.push_back("= " + named(t.from[0]) + index_str(unravel(from.shape, j)) + " = " +
                      num(from.values()[static_cast<std::size_t>(j)]));
    e.recomputed = from.values()[static_cast<std::size_t>(j)];
}

void explain_scores(const CellContext& x, Explanation& e) {
    if (x.src.size() < 2 || !x.src[0] || !x.src[1]) return missing(e);
    double sum = 0;
    const std::string terms =
        query_key_dot({x.src[0], x.batch, x.head}, x.row, {x.src[1], x.batch, x.head}, x.col, x.hd, &sum);
    e.lines.push_back("head " + std::to_string(x.head) + ": query of " + x.tok_row + " · key of " + x.key_token(x.col));
    e.lines.push_back("= " + terms);
    e.lines.push_back("= " + num(sum));
    e.recomputed = sum;
}

void explain_mask(const CellContext& x, Explanation& e) {
    if (x.src.empty() || !x.src[0]) return missing(e);
    if (x.col > x.row) {
        e.lines.push_back(x.key_token(x.col) + " comes after " + x.tok_row + ": a token may not look ahead,");
        e.lines.push_back("so the score becomes -inf (0 after softmax)");
        e.recomputed = -std::numeric_limits<double>::infinity();
    } else {
        const float kept = x.src[0]->values()[static_cast<std::size_t>(x.index)];
        e.lines.push_back(x.key_token(x.col) + " is not after " + x.tok_row + ": the score " + num(kept) + " of " +
                          named(x.t.from[0]) + " is kept");
        e.recomputed = kept;
    }
}

void explain_scale(const CellContext& x, Explanation& e) {
    if (x.src.empty() || !x.src[0]) return missing(e);
    const float raw = x.src[0]->values()[static_cast<std::size_t>(x.index)];
    const double root = std::sqrt(static_cast<double>(x.hd));
    e.lines.push_back("score / sqrt(head_dim) = " + num(raw) + " / sqrt(" + std::to_string(x.hd) + ")");
    e.lines.push_back("= " + num(raw) + " / " + num(root) + " = " + num(raw / root));
    e.recomputed = raw / root;
}

void explain_softmax(const CellContext& x, Explanation& e) {
    if (x.src.empty() || !x.src[0]) return missing(e);
    const std::vector<float>& scores = x.src[0]->values();
    const std::int64_t T = x.t.shape.back();
    const std::int64_t row_start = x.index - x.col;
    double mx = -INFINITY;
    for (std::int64_t j = 0; j < T; ++j) mx = std::max<double>(mx, scores[static_cast<std::size_t>(row_start + j)]);
    double denom = 0;
    std::string exps;
    for (std::int64_t j = 0; j < T; ++j) {
        const double ex = std::exp(scores[static_cast<std::size_t>(row_start + j)] - mx);
        denom += ex;
        if (j < 6) exps += (j ? ", " : "") + num(ex);
    }
    const double mine = std::exp(scores[static_cast<std::size_t>(x.index)] - mx);
    e.lines.push_back("row " + x.tok_row + " of head " + std::to_string(x.head) + ": exp(score - row max " + num(mx) + ")");
    e.lines.push_back("exps: " + exps + (T > 6 ? ", ..." : ""));
    e.lines.push_back("= " + num(mine) + " / " + num(denom) + " (their sum) = " + num(mine / denom));
    e.recomputed = mine / denom;
}

void explain_dropout(const CellContext& x, Explanation& e) {
    const double p = x.c.dropout;
    if (x.t.from.empty()) {  // the mask itself: drawn from the seed
        e.lines.push_back(x.value == 0.0f ? "0: this weight is dropped" : "1: this weight is kept");
        e.lines.push_back("drawn from seed " + std::to_string(x.c.seed) + " with p = " + num(p));
        return;
    }
    if (x.src.size() < 2 || !x.src[0] || !x.src[1]) return missing(e);
    const float before = x.src[0]->values()[static_cast<std::size_t>(x.index)];
    const float keep = x.src[1]->values()[static_cast<std::size_t>(x.index)];
    if (keep == 0.0f) {
        e.lines.push_back("dropped (the mask drew 0 with probability p = " + num(p) + ")");
        e.recomputed = 0;
    } else {
        e.lines.push_back("kept: " + num(before) + " / (1 - " + num(p) + ") = " + num(before / (1 - p)));
        e.recomputed = before / (1 - p);
    }
}

void explain_context(const CellContext& x, Explanation& e) {
    if (x.src.size() < 2 || !x.src[0] || !x.src[1]) return missing(e);
    const Matrix w{x.src[0], x.batch, x.head}, v{x.src[1], x.batch, x.head};
    const std::int64_t T = x.src[0]->shape.back();  // the keys this row weighs
    std::vector<double> ws, vs;
    for (std::int64_t j = 0; j < T; ++j) {
        ws.push_back(w.get(x.row, j));
        vs.push_back(v.get(j, x.col));
    }
    double sum = 0;
    const std::string terms = dot_text(ws, vs, &sum);
    e.lines.push_back("head " + std::to_string(x.head) + ", token " + x.tok_row + ": attention weights × values, feature " +
                      std::to_string(x.col));
    e.lines.push_back("= " + terms);
    e.lines.push_back("= " + num(sum));
    e.recomputed = sum;
}

// Merge and concat.
void explain_merge(const CellContext& x, Explanation& e) {
    // Merge copies its one source in row-major order; concat puts head h's output
    // (its h-th source) in columns h*hd .. h*hd+hd-1.
    const std::int64_t h = x.col / x.hd, d = x.col % x.hd;
    const bool merge = x.s.op == Op::Merge;
    const std::size_t which = merge ? 0 : static_cast<std::size_t>(h);
    if (which >= x.src.size() || !x.src[which]) return missing(e);
    const TensorRecord& from = *x.src[which];
    const std::int64_t j = merge ? x.index : (x.batch * x.c.num_tokens() + x.row) * x.hd + d;
    const Shape from_idx = unravel(from.shape, j);
    e.lines.push_back("copied from head " + std::to_string(h) + "'s context of token " + x.tok_row + ", feature " +
                      std::to_string(d) + ": " + named(x.t.from[which]) + index_str(from_idx));
    e.lines.push_back("which was at " + address_line(from, from_idx, from.address(j)));
    e.lines.push_back("now at " + address_line(x.t, x.idx, x.address) + " (row-major, contiguous)");
    e.recomputed = from.values()[static_cast<std::size_t>(j)];
}

void explain_out_proj(const CellContext& x, Explanation& e) {
    if (x.t.from.size() < 3 || !x.src[0]) return missing(e);
    const std::vector<float>* w = x.weight(x.t.from[1]);
    const std::vector<float>* b = x.weight(x.t.from[2]);
    if (!w || !b) return missing(e);
    const std::int64_t D = x.D, col = x.col;
    std::vector<double> a, bb;
    for (std::int64_t g = 0; g < D; ++g) {
        a.push_back(at(*x.src[0], {x.batch, x.row, g}));
        bb.push_back((*w)[static_cast<std::size_t>(col * D + g)]);
    }
    double sum = 0;
    const std::string terms = dot_text(a, bb, &sum);
    const float bias = (*b)[static_cast<std::size_t>(col)];
    sum += bias;
    e.lines.push_back("merged context of " + x.tok_row + " · W_out[" + std::to_string(col) + "] + b_out[" +
                      std::to_string(col) + "]: mixes all heads");
    e.lines.push_back("= " + terms + " + " + num(bias));
    e.lines.push_back("= " + num(sum));
    e.recomputed = sum;
}

void explain_pad_mask(const CellContext& x, Explanation& e) {
    if (x.src.size() < 2 || !x.src[0] || !x.src[1]) return missing(e);
    const TensorRecord& mask = *x.src[1];
    const bool padded = mask.values()[static_cast<std::size_t>(x.batch * mask.shape.back() + x.col)] != 0.0f;
    if (padded) {
        e.lines.push_back("key " + std::to_string(x.col) + " of sentence " + std::to_string(x.batch) +
                          " is <pad>: no query may look at it,");
        e.lines.push_back("so the score becomes -inf (0 after softmax)");
        e.recomputed = -std::numeric_limits<double>::infinity();
    } else {
        const float kept = x.src[0]->values()[static_cast<std::size_t>(x.index)];
        e.lines.push_back(x.key_token(x.col) + " is a real token of sentence " + std::to_string(x.batch) +
                          ": the score " + num(kept) + " of " + named(x.t.from[0]) + " is kept");
        e.recomputed = kept;
    }
}

void explain_repeat_kv(const CellContext& x, Explanation& e) {
    if (x.src.empty() || !x.src[0]) return missing(e);
    const Shape& idx = x.idx;
    const std::int64_t r = x.c.group_size();
    const std::int64_t g = idx[1] / r;
    const Shape from_idx{idx[0], g, idx[2], idx[3]};
    e.lines.push_back("query head " + std::to_string(idx[1]) + " uses key/value head " + std::to_string(g) + " (heads " +
                      std::to_string(g * r) + " to " + std::to_string(g * r + r - 1) + " share it): a copy of");
    e.lines.push_back(named(x.t.from[0]) + index_str(from_idx) + " = " + num(at(*x.src[0], from_idx)));
    e.recomputed = at(*x.src[0], from_idx);
}

void explain_cache_append(const CellContext& x, Explanation& e) {
    // The cache so far: the rows this step wrote come from its last link, older rows
    // from the cache before (first link, same buffer).
    if (x.src.empty() || !x.src.back()) return missing(e);
    const TensorRecord& t = x.t;
    const Shape& idx = x.idx;
    const TensorRecord& fresh = *x.src.back();
    const std::int64_t first_new = t.shape[2] - fresh.shape[2];
    if (idx[2] >= first_new) {
        const Shape from_idx{idx[0], idx[1], idx[2] - first_new, idx[3]};
        e.lines.push_back("position " + std::to_string(idx[2]) + " was written by this step: " + named(t.from.back()) +
                          index_str(from_idx));
        e.recomputed = at(fresh, from_idx);
    } else {
        if (x.src.size() < 2 || !x.src[0]) return missing(e);
        e.lines.push_back("position " + std::to_string(idx[2]) + " was already in the cache: " + named(t.from[0]) +
                          index_str(idx) + " (not moved)");
        e.recomputed = at(*x.src[0], idx);
    }
    e.lines.push_back(address_line(t, idx, x.address));
}

void explain_assemble(const CellContext& x, Explanation& e) {
    // Part k covers the rows after those of parts 0 .. k-1.
    std::int64_t first = 0;
    for (std::size_t k = 0; k < x.src.size(); ++k) {
        if (!x.src[k]) return missing(e);
        const std::int64_t n = x.src[k]->shape[1];
        if (x.row < first + n) {
            const Shape from_idx{x.batch, x.row - first, x.col};
            e.lines.push_back("token " + x.tok_row + " came out of " +
                              (k == 0 ? std::string("the prefill") : "round " + std::to_string(k)) + ": " +
                              named(x.t.from[k]) + index_str(from_idx));
            e.recomputed = at(*x.src[k], from_idx);
            return;
        }
        first += n;
    }
}

// What the cells of one flash tile share: where the tile sits, its scores, and each row's
// running max m before and after it.
struct TileCell {
    std::int64_t k0 = 0;                      // the tile's first key
    std::int64_t th = 0, tr_row = 0, i = 0;  // head, row in the tile, that row's query position
    bool first = false;                       // the first tile of these rows: m, l, acc start here
    int before_at = -1;                       // the link to this tensor of the tile before
    const TensorRecord* scores = nullptr;     // this step's tile_scores
    std::int64_t nk = 0;                      // the tile's keys
    double m_old = 0, tile_max = 0, m_new = 0, rescale = 0;
};

// A cell of tile_scores: one query dotted with one key and scaled, or masked.
void explain_tile_score(const CellContext& x, const TileCell& tc, Explanation& e) {
    const Config& c = x.c;
    if (x.src.size() < 2 || !x.src[1]) return missing(e);
    const std::int64_t key = tc.k0 + x.col, i = tc.i, th = tc.th;
    const bool padded =
        c.padded() && x.tr.inputs.key_padding_mask[static_cast<std::size_t>(x.batch * c.num_keys() + key)] != 0.0f;
    if ((c.causal && key > i) || padded) {
        e.lines.push_back(x.key_token(key) + (padded ? " is <pad>" : " comes after " + x.token(i)) +
                          ": masked to -inf inside the tile");
        e.recomputed = -std::numeric_limits<double>::infinity();
        return;
    }
    double sum = 0;
    const std::string terms =
        query_key_dot({x.src[0], x.batch, th}, i, {x.src[1], x.batch, th / c.group_size()}, key, x.hd, &sum);
    const double root = std::sqrt(static_cast<double>(x.hd));
    e.lines.push_back("head " + std::to_string(th) + ": query of " + x.token(i) + " · key of " + x.key_token(key) +
                      ", divided by sqrt(" + std::to_string(x.hd) + ")");
    e.lines.push_back("= (" + terms + ") / " + num(root));
    e.recomputed = sum / root;
    e.lines.push_back("= " + num(e.recomputed));
}

// A cell of l or acc: the value before, rescaled to the new max, plus this tile's share.
void explain_tile_sum(const CellContext& x, const TileCell& tc, Explanation& e) {
    const std::int64_t th = tc.th, tr_row = tc.tr_row, batch = x.batch, col = x.col;
    double sum = 0;
    const bool is_acc = x.t.name == "acc";
    const int values_at = x.link_to("values", false);
    const TensorRecord* v = is_acc && values_at >= 0 ? x.src[static_cast<std::size_t>(values_at)] : nullptr;
    if (is_acc && !v) return missing(e);
    double pv = 0;
    for (std::int64_t j = 0; j < tc.nk; ++j) {
        const double sc = at(*tc.scores, {batch, th, tr_row, j});
        const double p = std::isinf(sc) ? 0.0 : std::exp(sc - tc.m_new);
        sum += p;
        if (is_acc) pv += p * at(*v, {batch, th / x.c.group_size(), tc.k0 + j, col});
    }
    const TensorRecord* before = tc.first ? nullptr : x.src[static_cast<std::size_t>(tc.before_at)];
    if (!tc.first && !before) return missing(e);
    const double old = tc.first ? 0.0 : !before->has_values() ? NAN
                                                             : at(*before, is_acc ? Shape{batch, th, tr_row, col}
                                                                                  : Shape{batch, th, tr_row});
    e.lines.push_back(std::string(is_acc ? "acc" : "l") + " before " + num(old) + " × exp(m_old - m_new) = " +
                      num(old) + " × " + num(tc.rescale));
    e.lines.push_back(is_acc ? "+ sum over this tile's keys of exp(score - m) × value[" + std::to_string(col) +
                                   "] = " + num(pv)
                             : "+ sum over this tile's keys of exp(score - m) = " + num(sum));
    e.recomputed = old * tc.rescale + (is_acc ? pv : sum);
    e.lines.push_back("= " + num(e.recomputed));
}

void explain_tile(const CellContext& x, Explanation& e) {
    // The tile's rows and keys start at its blocks; m, l, acc carry on from the tile
    // before in the same row of tiles (the last link of each).
    const TensorRecord& t = x.t;
    TileCell tc;
    tc.k0 = x.s.keys.first;
    // [B, H, rows, keys or hd] or, for m and l, [B, H, rows].
    tc.th = x.idx[1], tc.tr_row = x.idx[2], tc.i = x.s.rows.first + tc.tr_row;
    const bool is_scores = t.name == "tile_scores";
    tc.first = x.s.tile_k == 0;
    // The links by name: this step's tile_scores (and m, values), and the same tensor
    // of the tile before, whose rows this step updates in place.
    tc.before_at = is_scores ? -1 : x.link_to(t.name, false);
    const Step* prev = tc.before_at >= 0 ? x.tr.source_step(t.from[static_cast<std::size_t>(tc.before_at)]) : nullptr;
    if (!tc.first && !is_scores && !prev) return missing(e);
    const int scores_at = x.link_to("tile_scores", true);
    tc.scores = is_scores ? (x.src.empty() ? nullptr : x.src[0])
                : scores_at >= 0 ? x.src[static_cast<std::size_t>(scores_at)] : nullptr;
    if (!tc.scores || !tc.scores->has_values()) return missing(e);
    const TensorRecord* m_old_rec = prev ? prev->find("m") : nullptr;
    tc.m_old = tc.first ? -INFINITY : m_old_rec ? at(*m_old_rec, {x.batch, tc.th, tc.tr_row}) : NAN;
    tc.tile_max = -INFINITY;
    tc.nk = is_scores ? t.shape[3] : tc.scores->shape[3];
    for (std::int64_t j = 0; j < tc.nk && !is_scores; ++j)
        tc.tile_max = std::max<double>(tc.tile_max, at(*tc.scores, {x.batch, tc.th, tc.tr_row, j}));
    tc.m_new = std::max(tc.m_old, tc.tile_max);
    tc.rescale = std::isinf(tc.m_old) ? 0.0 : std::exp(tc.m_old - tc.m_new);
    if (is_scores) return explain_tile_score(x, tc, e);
    if (t.name == "m") {
        e.lines.push_back("running max of row " + x.token(tc.i) + ": max(m before " + num(tc.m_old) +
                          ", this tile's max " + num(tc.tile_max) + ")");
        e.recomputed = tc.m_new;
        e.lines.push_back("= " + num(tc.m_new));
        return;
    }
    explain_tile_sum(x, tc, e);
}

void explain_normalize(const CellContext& x, Explanation& e) {
    // Links: each query block's last acc, then its last l.
    const std::int64_t qb = x.row / x.c.flash_block(), r = x.row % x.c.flash_block();
    const std::size_t at_acc = static_cast<std::size_t>(2 * qb);
    if (at_acc + 1 >= x.src.size() || !x.src[at_acc] || !x.src[at_acc + 1]) return missing(e);
    const double acc = at(*x.src[at_acc], {x.batch, x.head, r, x.col});
    const double l = at(*x.src[at_acc + 1], {x.batch, x.head, r});
    e.lines.push_back("token " + x.token(x.row) + ", head " + std::to_string(x.head) + ": acc / l = " + num(acc) +
                      " / " + num(l));
    e.lines.push_back("the same number as softmax(scores) @ values, without the score grid");
    e.recomputed = acc / l;
}

}  // namespace

Explanation explain_cell(const Trace& tr, int step, int tensor, std::int64_t index) {
    Explanation e;
    const Step& s = tr.steps.at(step);
    const TensorRecord& t = s.tensors.at(tensor);
    const Shape idx = unravel(t.shape, index);
    const float value = t.has_values() ? t.values()[static_cast<std::size_t>(index)] : NAN;
    e.title = t.name + index_str(idx) + " = " + num(value);
    if (!t.has_values()) {
        e.lines.push_back("shapes only: this configuration was not computed");
        return e;
    }
    // One function per op (or per few ops read alike), each working from the same context,
    // in the order of the forward pass.
    const CellContext x(tr, s, t, index);
    switch (s.op) {
        case Op::Input: explain_input(x, e); break;
        case Op::Project: explain_project(x, e); break;
        // The views and copies that move the heads apart and back together.
        case Op::Split:
        case Op::View:
        case Op::Transpose:
        case Op::TransposeBack: explain_view(x, e); break;
        case Op::Merge:
        case Op::Concat: explain_merge(x, e); break;
        // Decoding's KV cache and grouped-query attention's shared heads.
        case Op::CacheAppend: explain_cache_append(x, e); break;
        case Op::RepeatKv: explain_repeat_kv(x, e); break;
        case Op::Assemble: explain_assemble(x, e); break;
        // Attention itself.
        case Op::Scores: explain_scores(x, e); break;
        case Op::Mask: explain_mask(x, e); break;
        case Op::PadMask: explain_pad_mask(x, e); break;
        case Op::Scale: explain_scale(x, e); break;
        case Op::Softmax: explain_softmax(x, e); break;
        case Op::Dropout: explain_dropout(x, e); break;
        case Op::Context: explain_context(x, e); break;
        case Op::OutProj: explain_out_proj(x, e); break;
        // Flash attention's tiles, and the division that ends them.
        case Op::Tile: explain_tile(x, e); break;
        case Op::Normalize: explain_normalize(x, e); break;
        // The backward pass: each cell a gradient (the window does not draw a backward trace yet).
        case Op::OutProjBack:
        case Op::MergeBack:
        case Op::ConcatBack:
        case Op::TransposeBackGrad:
        case Op::ContextBack:
        case Op::DropoutBack:
        case Op::SoftmaxBack:
        case Op::ScaleBack:
        case Op::MaskBack:
        case Op::PadMaskBack:
        case Op::ScoresBack:
        case Op::RepeatKvBack:
        case Op::TransposeGrad:
        case Op::ViewBack:
        case Op::SplitBack:
        case Op::ProjectBack:
        case Op::FlashBackRows:
        case Op::TileBack:
            e.lines.push_back("a gradient: how much L = sum(d_output * output) moves per unit change of this number");
            break;
        case Op::Count: break;
    }
    return e;
}

}  // namespace headsplit::gui
