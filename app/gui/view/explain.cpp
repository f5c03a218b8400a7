#include "gui/view/explain.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "headsplit/teaching/numbers.hpp"

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
    return t.data[static_cast<std::size_t>(flat)];
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

}  // namespace

Explanation explain_cell(const Trace& tr, int step, int tensor, std::int64_t index) {
    Explanation e;
    const Step& s = tr.steps.at(step);
    const TensorRecord& t = s.tensors.at(tensor);
    const Config& c = tr.config;
    const Shape idx = unravel(t.shape, index);
    const float value = t.data.empty() ? NAN : t.data[static_cast<std::size_t>(index)];
    e.title = t.name + index_str(idx) + " = " + num(value);
    if (t.data.empty()) {
        e.lines.push_back("shapes only: this configuration was not computed");
        return e;
    }
    const std::int64_t hd = c.head_dim(), D = c.d_out, Di = c.d_in;
    const std::int64_t address = t.address(index);
    auto address_line = [](const TensorRecord& r, const Shape& at_idx, std::int64_t addr) {
        std::string a = "memory address " + std::to_string(r.offset);
        for (std::size_t d = 0; d < at_idx.size(); ++d)
            a += " + " + std::to_string(at_idx[d]) + "·" + std::to_string(r.strides[d]);
        return a + " = " + std::to_string(addr) + " of buffer " + std::to_string(r.buffer);
    };
    // The tensors this one was made from, as the trace links them.
    std::vector<const TensorRecord*> src;
    for (const Source& link : t.from) src.push_back(tr.source(link));
    auto weight = [&](const Source& link) { return link.is_weight() ? tr.weights.find(link.weight) : nullptr; };
    // Matrix coordinates: batch, row (query token) and column of the last two dims; the head
    // from the batched dim or the loop step.
    const std::int64_t batch = idx.empty() ? 0 : idx[0];
    const std::int64_t row = idx.size() >= 2 ? idx[idx.size() - 2] : 0;
    const std::int64_t col = idx.back();
    const std::int64_t head = s.head >= 0 ? s.head : (idx.size() == 4 ? idx[1] : 0);
    auto token = [&](std::int64_t i) {
        return i >= 0 && i < c.num_tokens() ? "\"" + c.token_at(batch, i) + "\"" : std::string("?");
    };
    const std::vector<std::string> keys = c.key_tokens(std::min(batch, c.batch - 1));
    auto key_token = [&](std::int64_t j) {
        return j >= 0 && j < static_cast<std::int64_t>(keys.size()) ? "\"" + keys[static_cast<std::size_t>(j)] + "\""
                                                                     : std::string("?");
    };
    // The row's position, as the step says: a decoding round's queries start at its token, the
    // cache's keys at 0, a tile's rows at its query block.
    const std::int64_t row_pos = s.position(t, row);
    const std::string tok_row = t.key_rows() && c.cross() ? key_token(row_pos) : token(row_pos);
    // A source the explanation needs is missing: say so, and recompute nothing.
    auto missing = [&] { e.lines.push_back("(the trace does not link this tensor to its sources)"); };

    switch (s.op) {
        case Op::Input: {
            if (t.name == "key_padding_mask") {  // [B, S]: row = the sentence
                const bool pad = tr.inputs.key_padding_mask[static_cast<std::size_t>(index)] != 0.0f;
                const std::vector<std::string> sent = c.key_tokens(idx[0]);
                e.lines.push_back("key " + std::to_string(col) + " of sentence " + std::to_string(idx[0]) + " is " +
                                  (pad ? "padding (<pad>): true, masked later" : "\"" + sent[static_cast<std::size_t>(col)] +
                                                                                  "\", a real token: false"));
                e.recomputed = pad ? 1.0 : 0.0;
                break;
            }
            if (t.name == "context") {
                e.lines.push_back("feature " + std::to_string(col) + " of context token " + key_token(row) + "'s embedding");
                e.lines.push_back("keys and values are made from these rows, queries from x");
                e.recomputed = tr.inputs.context[static_cast<std::size_t>(index)];
                break;
            }
            e.lines.push_back("feature " + std::to_string(col) + " of token " + tok_row + "'s embedding");
            e.lines.push_back(c.embeddings.empty() ? "generated from seed " + std::to_string(c.seed) +
                                                         " and the word itself, so a repeated word gets the same row"
                                                   : "the preset's fixed embedding");
            e.recomputed = tr.inputs.x[static_cast<std::size_t>((batch * c.num_tokens() + row) * Di + col)];
            break;
        }
        case Op::Project: {
            // from: x, then the weight(s), then the bias(es). Fused qkv names all three weights
            // and picks by column; a loop head uses its block of rows.
            if (t.from.size() < 2 || !src[0]) return missing(), e;
            const std::size_t n_weights = t.from.size() >= 4 && t.from[3].is_weight() && t.from[3].weight[0] == 'w' ? 3 : 1;
            // Fused columns: queries [0, D), keys [D, D + KV), values [D + KV, D + 2 KV).
            const std::int64_t KV = c.kv_width();
            const std::int64_t part = n_weights == 3 ? (col < D ? 0 : col < D + KV ? 1 : 2) : 0;
            std::int64_t out_row = n_weights == 3 ? (part == 0 ? col : col - D - (part - 1) * KV) : col;
            const bool is_query = n_weights == 3 ? part == 0 : t.from[1].weight == "w_query";
            if (s.head >= 0) out_row = (is_query ? s.head : s.head / c.group_size()) * hd + col;
            const Source& wlink = t.from[1 + static_cast<std::size_t>(part)];
            const std::vector<float>* w = weight(wlink);
            const std::size_t bias_at = 1 + n_weights + static_cast<std::size_t>(part);
            const std::vector<float>* b = bias_at < t.from.size() ? weight(t.from[bias_at]) : nullptr;
            if (!w) return missing(), e;
            // The input row: x's (decoding: the token this round reads) or the context's.
            const std::int64_t in_dim = src[0]->shape.back();
            const std::int64_t in_row = row_pos;
            const bool from_context = t.from[0].tensor == "context";
            std::vector<double> xs, ws;
            for (std::int64_t i = 0; i < in_dim; ++i) {
                xs.push_back(at(*src[0], {batch, in_row, i}));
                ws.push_back((*w)[static_cast<std::size_t>(out_row * in_dim + i)]);
            }
            double sum = 0;
            const std::string terms = dot_text(xs, ws, &sum);
            e.lines.push_back((from_context ? "context[" : "x[") + std::to_string(in_row) + "] (token " +
                              (from_context ? key_token(in_row) : token(in_row)) + ") · " + wlink.weight + "[" +
                              std::to_string(out_row) + "] (row " + std::to_string(out_row) + " of the nn.Linear weight)");
            e.lines.push_back("= " + terms);
            if (b && !b->empty()) {
                sum += (*b)[static_cast<std::size_t>(out_row)];
                e.lines.push_back("+ bias " + num((*b)[static_cast<std::size_t>(out_row)]));
            }
            e.lines.push_back("= " + num(sum) + "   (feature " + std::to_string(out_row) + " belongs to " +
                              (is_query ? "head " : "key/value head ") + std::to_string(out_row / hd) + ")");
            e.recomputed = sum;
            break;
        }
        case Op::Split:
        case Op::View:
        case Op::Transpose:
        case Op::TransposeBack: {
            // A view reads its source's memory: the source's element at this address.
            if (src.empty() || !src[0]) return missing(), e;
            const TensorRecord& from = *src[0];
            const std::int64_t j = from.buffer == t.buffer ? element_at_address(from, address) : -1;
            e.lines.push_back("the same number as before this step, not a copy:");
            e.lines.push_back(address_line(t, idx, address));
            e.lines.push_back("strides " + shape_str(t.strides) + ": how many elements to skip per step along each dim");
            if (j < 0) {
                e.lines.push_back("(no element of " + named(t.from[0]) + " is at this address)");
                break;
            }
            e.lines.push_back("= " + named(t.from[0]) + index_str(unravel(from.shape, j)) + " = " +
                              num(from.data[static_cast<std::size_t>(j)]));
            e.recomputed = from.data[static_cast<std::size_t>(j)];
            break;
        }
        case Op::Scores: {
            if (src.size() < 2 || !src[0] || !src[1]) return missing(), e;
            double sum = 0;
            const std::string terms = query_key_dot({src[0], batch, head}, row, {src[1], batch, head}, col, hd, &sum);
            e.lines.push_back("head " + std::to_string(head) + ": query of " + tok_row + " · key of " + key_token(col));
            e.lines.push_back("= " + terms);
            e.lines.push_back("= " + num(sum));
            e.recomputed = sum;
            break;
        }
        case Op::Mask: {
            if (src.empty() || !src[0]) return missing(), e;
            if (col > row) {
                e.lines.push_back(key_token(col) + " comes after " + tok_row + ": a token may not look ahead,");
                e.lines.push_back("so the score becomes -inf (0 after softmax)");
                e.recomputed = -std::numeric_limits<double>::infinity();
            } else {
                const float kept = src[0]->data[static_cast<std::size_t>(index)];
                e.lines.push_back(key_token(col) + " is not after " + tok_row + ": the score " + num(kept) + " of " +
                                  named(t.from[0]) + " is kept");
                e.recomputed = kept;
            }
            break;
        }
        case Op::Scale: {
            if (src.empty() || !src[0]) return missing(), e;
            const float raw = src[0]->data[static_cast<std::size_t>(index)];
            const double root = std::sqrt(static_cast<double>(hd));
            e.lines.push_back("score / sqrt(head_dim) = " + num(raw) + " / sqrt(" + std::to_string(hd) + ")");
            e.lines.push_back("= " + num(raw) + " / " + num(root) + " = " + num(raw / root));
            e.recomputed = raw / root;
            break;
        }
        case Op::Softmax: {
            if (src.empty() || !src[0]) return missing(), e;
            const std::vector<float>& scores = src[0]->data;
            const std::int64_t T = t.shape.back();
            const std::int64_t row_start = index - col;
            double mx = -INFINITY;
            for (std::int64_t j = 0; j < T; ++j) mx = std::max<double>(mx, scores[static_cast<std::size_t>(row_start + j)]);
            double denom = 0;
            std::string exps;
            for (std::int64_t j = 0; j < T; ++j) {
                const double ex = std::exp(scores[static_cast<std::size_t>(row_start + j)] - mx);
                denom += ex;
                if (j < 6) exps += (j ? ", " : "") + num(ex);
            }
            const double mine = std::exp(scores[static_cast<std::size_t>(index)] - mx);
            e.lines.push_back("row " + tok_row + " of head " + std::to_string(head) + ": exp(score - row max " + num(mx) + ")");
            e.lines.push_back("exps: " + exps + (T > 6 ? ", ..." : ""));
            e.lines.push_back("= " + num(mine) + " / " + num(denom) + " (their sum) = " + num(mine / denom));
            e.recomputed = mine / denom;
            break;
        }
        case Op::Dropout: {
            if (t.from.empty()) {  // the mask itself: drawn from the seed
                e.lines.push_back(value == 0.0f ? "0: this weight is dropped" : "1: this weight is kept");
                e.lines.push_back("drawn from seed " + std::to_string(c.seed) + " with p = " + num(c.dropout));
                break;
            }
            if (src.size() < 2 || !src[0] || !src[1]) return missing(), e;
            const float before = src[0]->data[static_cast<std::size_t>(index)];
            const float keep = src[1]->data[static_cast<std::size_t>(index)];
            if (keep == 0.0f) {
                e.lines.push_back("dropped (the mask drew 0 with probability p = " + num(c.dropout) + ")");
                e.recomputed = 0;
            } else {
                e.lines.push_back("kept: " + num(before) + " / (1 - " + num(c.dropout) + ") = " + num(before / (1 - c.dropout)));
                e.recomputed = before / (1 - c.dropout);
            }
            break;
        }
        case Op::Context: {
            if (src.size() < 2 || !src[0] || !src[1]) return missing(), e;
            const Matrix w{src[0], batch, head}, v{src[1], batch, head};
            const std::int64_t T = src[0]->shape.back();  // the keys this row weighs
            std::vector<double> ws, vs;
            for (std::int64_t j = 0; j < T; ++j) {
                ws.push_back(w.get(row, j));
                vs.push_back(v.get(j, col));
            }
            double sum = 0;
            const std::string terms = dot_text(ws, vs, &sum);
            e.lines.push_back("head " + std::to_string(head) + ", token " + tok_row + ": attention weights × values, feature " +
                              std::to_string(col));
            e.lines.push_back("= " + terms);
            e.lines.push_back("= " + num(sum));
            e.recomputed = sum;
            break;
        }
        case Op::Merge:
        case Op::Concat: {
            // Merge copies its one source in row-major order; concat puts head h's output
            // (its h-th source) in columns h*hd .. h*hd+hd-1.
            const std::int64_t h = col / hd, d = col % hd;
            const bool merge = s.op == Op::Merge;
            const std::size_t which = merge ? 0 : static_cast<std::size_t>(h);
            if (which >= src.size() || !src[which]) return missing(), e;
            const TensorRecord& from = *src[which];
            const std::int64_t j = merge ? index : (batch * c.num_tokens() + row) * hd + d;
            const Shape from_idx = unravel(from.shape, j);
            e.lines.push_back("copied from head " + std::to_string(h) + "'s context of token " + tok_row + ", feature " +
                              std::to_string(d) + ": " + named(t.from[which]) + index_str(from_idx));
            e.lines.push_back("which was at " + address_line(from, from_idx, from.address(j)));
            e.lines.push_back("now at " + address_line(t, idx, address) + " (row-major, contiguous)");
            e.recomputed = from.data[static_cast<std::size_t>(j)];
            break;
        }
        case Op::OutProj: {
            if (t.from.size() < 3 || !src[0]) return missing(), e;
            const std::vector<float>* w = weight(t.from[1]);
            const std::vector<float>* b = weight(t.from[2]);
            if (!w || !b) return missing(), e;
            std::vector<double> a, bb;
            for (std::int64_t g = 0; g < D; ++g) {
                a.push_back(at(*src[0], {batch, row, g}));
                bb.push_back((*w)[static_cast<std::size_t>(col * D + g)]);
            }
            double sum = 0;
            const std::string terms = dot_text(a, bb, &sum);
            const float bias = (*b)[static_cast<std::size_t>(col)];
            sum += bias;
            e.lines.push_back("merged context of " + tok_row + " · W_out[" + std::to_string(col) + "] + b_out[" +
                              std::to_string(col) + "]: mixes all heads");
            e.lines.push_back("= " + terms + " + " + num(bias));
            e.lines.push_back("= " + num(sum));
            e.recomputed = sum;
            break;
        }
        case Op::PadMask: {
            if (src.size() < 2 || !src[0] || !src[1]) return missing(), e;
            const TensorRecord& mask = *src[1];
            const bool padded = mask.data[static_cast<std::size_t>(batch * mask.shape.back() + col)] != 0.0f;
            if (padded) {
                e.lines.push_back("key " + std::to_string(col) + " of sentence " + std::to_string(batch) +
                                  " is <pad>: no query may look at it,");
                e.lines.push_back("so the score becomes -inf (0 after softmax)");
                e.recomputed = -std::numeric_limits<double>::infinity();
            } else {
                const float kept = src[0]->data[static_cast<std::size_t>(index)];
                e.lines.push_back(key_token(col) + " is a real token of sentence " + std::to_string(batch) + ": the score " +
                                  num(kept) + " of " + named(t.from[0]) + " is kept");
                e.recomputed = kept;
            }
            break;
        }
        case Op::RepeatKv: {
            if (src.empty() || !src[0]) return missing(), e;
            const std::int64_t g = idx[1] / c.group_size();
            const Shape from_idx{idx[0], g, idx[2], idx[3]};
            e.lines.push_back("query head " + std::to_string(idx[1]) + " uses key/value head " + std::to_string(g) +
                              " (heads " + std::to_string(g * c.group_size()) + " to " +
                              std::to_string(g * c.group_size() + c.group_size() - 1) + " share it): a copy of");
            e.lines.push_back(named(t.from[0]) + index_str(from_idx) + " = " + num(at(*src[0], from_idx)));
            e.recomputed = at(*src[0], from_idx);
            break;
        }
        case Op::CacheAppend: {
            // The cache so far: the rows this step wrote come from its last link, older rows
            // from the cache before (first link, same buffer).
            if (src.empty() || !src.back()) return missing(), e;
            const TensorRecord& fresh = *src.back();
            const std::int64_t first_new = t.shape[2] - fresh.shape[2];
            if (idx[2] >= first_new) {
                const Shape from_idx{idx[0], idx[1], idx[2] - first_new, idx[3]};
                e.lines.push_back("position " + std::to_string(idx[2]) + " was written by this step: " +
                                  named(t.from.back()) + index_str(from_idx));
                e.recomputed = at(fresh, from_idx);
            } else {
                if (src.size() < 2 || !src[0]) return missing(), e;
                e.lines.push_back("position " + std::to_string(idx[2]) + " was already in the cache: " +
                                  named(t.from[0]) + index_str(idx) + " (not moved)");
                e.recomputed = at(*src[0], idx);
            }
            e.lines.push_back(address_line(t, idx, address));
            break;
        }
        case Op::Assemble: {
            // Part k covers the rows after those of parts 0 .. k-1.
            std::int64_t first = 0;
            for (std::size_t k = 0; k < src.size(); ++k) {
                if (!src[k]) return missing(), e;
                const std::int64_t n = src[k]->shape[1];
                if (row < first + n) {
                    const Shape from_idx{batch, row - first, col};
                    e.lines.push_back("token " + tok_row + " came out of " +
                                      (k == 0 ? std::string("the prefill") : "round " + std::to_string(k)) + ": " +
                                      named(t.from[k]) + index_str(from_idx));
                    e.recomputed = at(*src[k], from_idx);
                    break;
                }
                first += n;
            }
            break;
        }
        case Op::Tile: {
            // The tile's rows and keys start at its blocks; m, l, acc carry on from the tile
            // before in the same row of tiles (the last link of each).
            const std::int64_t q0 = s.rows.first, k0 = s.keys.first;
            // [B, H, rows, keys or hd] or, for m and l, [B, H, rows].
            const std::int64_t th = idx[1], tr_row = idx[2], i = q0 + tr_row;
            const bool is_scores = t.name == "tile_scores";
            const bool first = s.tile_k == 0;
            // The links by name: this step's tile_scores (and m, values), and the same tensor
            // of the tile before, whose rows this step updates in place.
            const auto link_to = [&](const std::string& name, bool this_step) -> int {
                for (std::size_t n = 0; n < t.from.size(); ++n)
                    if (t.from[n].tensor == name && (t.from[n].step == s.index) == this_step) return static_cast<int>(n);
                return -1;
            };
            const int before_at = is_scores ? -1 : link_to(t.name, false);
            const Step* prev = before_at >= 0 ? tr.source_step(t.from[static_cast<std::size_t>(before_at)]) : nullptr;
            if (!first && !is_scores && !prev) return missing(), e;
            const int scores_at = link_to("tile_scores", true);
            const TensorRecord* scores = is_scores ? (src.empty() ? nullptr : src[0])
                                         : scores_at >= 0 ? src[static_cast<std::size_t>(scores_at)] : nullptr;
            if (!scores || scores->data.empty()) return missing(), e;
            const TensorRecord* m_old_rec = prev ? prev->find("m") : nullptr;
            const double m_old = first ? -INFINITY : m_old_rec ? at(*m_old_rec, {batch, th, tr_row}) : NAN;
            double tile_max = -INFINITY;
            const std::int64_t nk = is_scores ? t.shape[3] : scores->shape[3];
            for (std::int64_t j = 0; j < nk && !is_scores; ++j)
                tile_max = std::max<double>(tile_max, at(*scores, {batch, th, tr_row, j}));
            const double m_new = std::max(m_old, tile_max);
            const double rescale = std::isinf(m_old) ? 0.0 : std::exp(m_old - m_new);
            if (is_scores) {
                if (src.size() < 2 || !src[1]) return missing(), e;
                const std::int64_t key = k0 + col;
                const bool padded = c.padded() && tr.inputs.key_padding_mask[static_cast<std::size_t>(
                                                      batch * c.num_keys() + key)] != 0.0f;
                if ((c.causal && key > i) || padded) {
                    e.lines.push_back(key_token(key) + (padded ? " is <pad>" : " comes after " + token(i)) +
                                      ": masked to -inf inside the tile");
                    e.recomputed = -std::numeric_limits<double>::infinity();
                    break;
                }
                double sum = 0;
                const std::string terms =
                    query_key_dot({src[0], batch, th}, i, {src[1], batch, th / c.group_size()}, key, hd, &sum);
                const double root = std::sqrt(static_cast<double>(hd));
                e.lines.push_back("head " + std::to_string(th) + ": query of " + token(i) + " · key of " + key_token(key) +
                                  ", divided by sqrt(" + std::to_string(hd) + ")");
                e.lines.push_back("= (" + terms + ") / " + num(root));
                e.recomputed = sum / root;
                e.lines.push_back("= " + num(e.recomputed));
                break;
            }
            if (t.name == "m") {
                e.lines.push_back("running max of row " + token(i) + ": max(m before " + num(m_old) + ", this tile's max " +
                                  num(tile_max) + ")");
                e.recomputed = m_new;
                e.lines.push_back("= " + num(m_new));
                break;
            }
            double sum = 0;
            const bool is_acc = t.name == "acc";
            const int values_at = link_to("values", false);
            const TensorRecord* v = is_acc && values_at >= 0 ? src[static_cast<std::size_t>(values_at)] : nullptr;
            if (is_acc && !v) return missing(), e;
            double pv = 0;
            for (std::int64_t j = 0; j < nk; ++j) {
                const double sc = at(*scores, {batch, th, tr_row, j});
                const double p = std::isinf(sc) ? 0.0 : std::exp(sc - m_new);
                sum += p;
                if (is_acc) pv += p * at(*v, {batch, th / c.group_size(), k0 + j, col});
            }
            const TensorRecord* before = first ? nullptr : src[static_cast<std::size_t>(before_at)];
            if (!first && !before) return missing(), e;
            const double old = first ? 0.0 : before->data.empty() ? NAN
                                                                  : at(*before, is_acc ? Shape{batch, th, tr_row, col}
                                                                                       : Shape{batch, th, tr_row});
            e.lines.push_back(std::string(is_acc ? "acc" : "l") + " before " + num(old) + " × exp(m_old - m_new) = " +
                              num(old) + " × " + num(rescale));
            e.lines.push_back(is_acc ? "+ sum over this tile's keys of exp(score - m) × value[" + std::to_string(col) +
                                           "] = " + num(pv)
                                     : "+ sum over this tile's keys of exp(score - m) = " + num(sum));
            e.recomputed = old * rescale + (is_acc ? pv : sum);
            e.lines.push_back("= " + num(e.recomputed));
            break;
        }
        case Op::Normalize: {
            // Links: each query block's last acc, then its last l.
            const std::int64_t qb = row / c.flash_block(), r = row % c.flash_block();
            const std::size_t at_acc = static_cast<std::size_t>(2 * qb);
            if (at_acc + 1 >= src.size() || !src[at_acc] || !src[at_acc + 1]) return missing(), e;
            const double acc = at(*src[at_acc], {batch, head, r, col}), l = at(*src[at_acc + 1], {batch, head, r});
            e.lines.push_back("token " + token(row) + ", head " + std::to_string(head) + ": acc / l = " + num(acc) + " / " +
                              num(l));
            e.lines.push_back("the same number as softmax(scores) @ values, without the score grid");
            e.recomputed = acc / l;
            break;
        }
        case Op::Count: break;
    }
    return e;
}

}  // namespace headsplit::gui
