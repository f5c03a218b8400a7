#include "explain.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "layout.hpp"

namespace headsplit::gui {

namespace {

std::string num(double v) {
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

std::vector<std::int64_t> unravel(const Shape& shape, std::int64_t i) {
    std::vector<std::int64_t> idx(shape.size());
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    return idx;
}

std::string index_str(const std::vector<std::int64_t>& idx) {
    std::string s;
    for (auto v : idx) s += "[" + std::to_string(v) + "]";
    return s;
}

// The most recent step at or before `before` with this op (and head), or nullptr.
const Step* find_back(const Trace& tr, int before, Op op, int head) {
    for (int i = before; i >= 0; --i)
        if (tr.steps[i].op == op && tr.steps[i].head == head) return &tr.steps[i];
    return nullptr;
}

float at(const TensorRecord& t, std::initializer_list<std::int64_t> idx) {
    std::int64_t flat = 0;
    std::size_t d = 0;
    for (auto v : idx) flat = flat * t.shape[d++] + v;
    return t.data[static_cast<std::size_t>(flat)];
}

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

// Q, K or V of one head as [T, hd]: from the transpose step, or loop mode's project step.
struct HeadMatrix {
    const TensorRecord* t = nullptr;
    std::int64_t head = 0;
    bool batched = false;  // [1, H, T, hd] rather than [1, T, hd]
    float get(std::int64_t row, std::int64_t col) const {
        return batched ? at(*t, {0, head, row, col}) : at(*t, {0, row, col});
    }
};

HeadMatrix head_matrix(const Trace& tr, int step, int loop_head, std::int64_t head, const char* name) {
    HeadMatrix m;
    const Step* s = loop_head >= 0 ? find_back(tr, step, Op::Project, loop_head) : find_back(tr, step, Op::Transpose, -1);
    if (!s) return m;
    m.t = s->find(name);
    m.head = head;
    m.batched = loop_head < 0;
    return m;
}

}  // namespace

Explanation explain_cell(const Trace& tr, int step, int tensor, std::int64_t index) {
    Explanation e;
    const Step& s = tr.steps.at(step);
    const TensorRecord& t = s.tensors.at(tensor);
    const Config& c = tr.config;
    const auto idx = unravel(t.shape, index);
    const float value = t.data.empty() ? NAN : t.data[static_cast<std::size_t>(index)];
    e.title = t.name + index_str(idx) + " = " + num(value);
    if (t.data.empty()) {
        e.lines.push_back("shapes only: this configuration was not computed");
        return e;
    }
    const std::int64_t hd = c.head_dim(), D = c.d_out, Di = c.d_in;
    const std::int64_t address = element_offset(t, index);
    auto address_line = [&] {
        std::string a = "memory address " + std::to_string(t.offset);
        for (std::size_t d = 0; d < idx.size(); ++d) a += " + " + std::to_string(idx[d]) + "·" + std::to_string(t.strides[d]);
        return a + " = " + std::to_string(address) + " of buffer " + std::to_string(t.buffer);
    };
    // Matrix coordinates: row (query token) and column of the last two dims; the head from
    // the batched dim or the loop step.
    const std::int64_t row = idx.size() >= 2 ? idx[idx.size() - 2] : 0;
    const std::int64_t col = idx.back();
    const std::int64_t head = s.head >= 0 ? s.head : (idx.size() == 4 ? idx[1] : 0);
    const std::string tok_row = row < c.num_tokens() ? "\"" + c.tokens[row] + "\"" : "";

    switch (s.op) {
        case Op::Input: {
            e.lines.push_back("feature " + std::to_string(col) + " of token " + tok_row + "'s embedding");
            e.lines.push_back(c.embeddings.empty() ? "generated from seed " + std::to_string(c.seed) +
                                                         " and the word itself, so a repeated word gets the same row"
                                                   : "the preset's fixed embedding");
            e.recomputed = tr.inputs.x[static_cast<std::size_t>(row * Di + col)];
            break;
        }
        case Op::Project: {
            // Which weight row: loop heads use their block; fused qkv picks Q, K or V by column.
            const std::vector<float>* w = &tr.weights.w_query;
            const std::vector<float>* b = &tr.weights.b_query;
            std::string wname = "W_query";
            std::int64_t out_row = col;
            if (t.name == "keys") w = &tr.weights.w_key, b = &tr.weights.b_key, wname = "W_key";
            if (t.name == "values") w = &tr.weights.w_value, b = &tr.weights.b_value, wname = "W_value";
            if (t.name == "qkv") {
                const std::int64_t part = col / D;
                out_row = col % D;
                w = part == 0 ? &tr.weights.w_query : part == 1 ? &tr.weights.w_key : &tr.weights.w_value;
                b = part == 0 ? &tr.weights.b_query : part == 1 ? &tr.weights.b_key : &tr.weights.b_value;
                wname = part == 0 ? "W_query" : part == 1 ? "W_key" : "W_value";
            }
            if (s.head >= 0) out_row = s.head * hd + col;
            std::vector<double> xs, ws;
            for (std::int64_t i = 0; i < Di; ++i) {
                xs.push_back(tr.inputs.x[static_cast<std::size_t>(row * Di + i)]);
                ws.push_back((*w)[static_cast<std::size_t>(out_row * Di + i)]);
            }
            double sum = 0;
            const std::string terms = dot_text(xs, ws, &sum);
            e.lines.push_back("x[" + std::to_string(row) + "] (token " + tok_row + ") · " + wname + "[" +
                              std::to_string(out_row) + "] (row " + std::to_string(out_row) + " of the nn.Linear weight)");
            e.lines.push_back("= " + terms);
            if (!b->empty()) {
                sum += (*b)[static_cast<std::size_t>(out_row)];
                e.lines.push_back("+ bias " + num((*b)[static_cast<std::size_t>(out_row)]));
            }
            e.lines.push_back("= " + num(sum) + "   (feature " + std::to_string(out_row % D) + " belongs to head " +
                              std::to_string((out_row % D) / hd) + ")");
            e.recomputed = sum;
            break;
        }
        case Op::Split:
        case Op::View:
        case Op::Transpose:
        case Op::TransposeBack: {
            e.lines.push_back("the same number as before this step, not a copy:");
            e.lines.push_back(address_line());
            e.lines.push_back("strides " + shape_str(t.strides) + ": how many elements to skip per step along each dim");
            e.recomputed = value;
            break;
        }
        case Op::Scores: {
            const HeadMatrix q = head_matrix(tr, step, s.head, head, "queries");
            const HeadMatrix k = head_matrix(tr, step, s.head, head, "keys");
            if (!q.t || !k.t) break;
            std::vector<double> a, b;
            for (std::int64_t d = 0; d < hd; ++d) {
                a.push_back(q.get(row, d));
                b.push_back(k.get(col, d));
            }
            double sum = 0;
            const std::string terms = dot_text(a, b, &sum);
            e.lines.push_back("head " + std::to_string(head) + ": query of " + tok_row + " · key of \"" + c.tokens[col] + "\"");
            e.lines.push_back("= " + terms);
            e.lines.push_back("= " + num(sum));
            e.recomputed = sum;
            break;
        }
        case Op::Mask: {
            if (col > row) {
                e.lines.push_back("\"" + c.tokens[col] + "\" comes after " + tok_row + ": a token may not look ahead,");
                e.lines.push_back("so the score becomes -inf (0 after softmax)");
                e.recomputed = -std::numeric_limits<double>::infinity();
            } else {
                e.lines.push_back("\"" + c.tokens[col] + "\" is not after " + tok_row + ": the score is kept");
                e.recomputed = value;
            }
            break;
        }
        case Op::Scale: {
            const Step& prev = tr.steps.at(step - 1);
            const float raw = prev.tensors[0].data[static_cast<std::size_t>(index)];
            const double root = std::sqrt(static_cast<double>(hd));
            e.lines.push_back("score / sqrt(head_dim) = " + num(raw) + " / sqrt(" + std::to_string(hd) + ")");
            e.lines.push_back("= " + num(raw) + " / " + num(root) + " = " + num(raw / root));
            e.recomputed = raw / root;
            break;
        }
        case Op::Softmax: {
            const Step& prev = tr.steps.at(step - 1);
            const std::int64_t T = t.shape.back();
            const std::int64_t row_start = index - col;
            double mx = -INFINITY;
            for (std::int64_t j = 0; j < T; ++j) mx = std::max<double>(mx, prev.tensors[0].data[row_start + j]);
            double denom = 0;
            std::string exps;
            for (std::int64_t j = 0; j < T; ++j) {
                const double ex = std::exp(prev.tensors[0].data[row_start + j] - mx);
                denom += ex;
                if (j < 6) exps += (j ? ", " : "") + num(ex);
            }
            const double mine = std::exp(prev.tensors[0].data[index] - mx);
            e.lines.push_back("row " + tok_row + " of head " + std::to_string(head) + ": exp(score - row max " + num(mx) + ")");
            e.lines.push_back("exps: " + exps + (T > 6 ? ", ..." : ""));
            e.lines.push_back("= " + num(mine) + " / " + num(denom) + " (their sum) = " + num(mine / denom));
            e.recomputed = mine / denom;
            break;
        }
        case Op::Dropout: {
            const TensorRecord* mask = s.find("dropout_mask");
            const Step* soft = find_back(tr, step, Op::Softmax, s.head);
            if (!mask || !soft) break;
            const float keep = mask->data[static_cast<std::size_t>(index)];
            const float before = soft->tensors[0].data[static_cast<std::size_t>(index)];
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
            const Step* wstep = find_back(tr, step, Op::Dropout, s.head);
            if (!wstep) wstep = find_back(tr, step, Op::Softmax, s.head);
            const HeadMatrix v = head_matrix(tr, step, s.head, head, "values");
            if (!wstep || !v.t) break;
            const TensorRecord& w = *wstep->find("attn_weights");
            const std::int64_t T = c.num_tokens();
            std::vector<double> ws, vs;
            for (std::int64_t j = 0; j < T; ++j) {
                ws.push_back(idx.size() == 4 ? at(w, {0, head, row, j}) : at(w, {0, row, j}));
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
            const std::int64_t h = col / hd, d = col % hd;
            e.lines.push_back("copied from head " + std::to_string(h) + "'s context of token " + tok_row + ", feature " +
                              std::to_string(d));
            e.lines.push_back("now at " + address_line() + " (row-major, contiguous)");
            e.recomputed = value;
            break;
        }
        case Op::OutProj: {
            const Step* merged = find_back(tr, step, Op::Merge, -1);
            if (!merged) merged = find_back(tr, step, Op::Concat, -1);
            if (!merged) break;
            std::vector<double> a, b;
            for (std::int64_t g = 0; g < D; ++g) {
                a.push_back(at(merged->tensors[0], {0, row, g}));
                b.push_back(tr.weights.w_out[static_cast<std::size_t>(col * D + g)]);
            }
            double sum = 0;
            const std::string terms = dot_text(a, b, &sum);
            sum += tr.weights.b_out[static_cast<std::size_t>(col)];
            e.lines.push_back("merged context of " + tok_row + " · W_out[" + std::to_string(col) + "] + b_out[" +
                              std::to_string(col) + "]: mixes all heads");
            e.lines.push_back("= " + terms + " + " + num(tr.weights.b_out[static_cast<std::size_t>(col)]));
            e.lines.push_back("= " + num(sum));
            e.recomputed = sum;
            break;
        }
        case Op::Count: break;
    }
    return e;
}

}  // namespace headsplit::gui
