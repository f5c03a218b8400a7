#include "headsplit/io/export.hpp"

#include "headsplit/io/config_options.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "headsplit/base/numbers.hpp"
#include "headsplit/io/config_options.hpp"
#include "headsplit/teaching/narration.hpp"
#include "python_text.hpp"

namespace headsplit {

namespace {

using detail::for_qkv;
using detail::list_str;
using detail::py_string;
using detail::replace_words;
using detail::spelled_out;
using detail::Writer;

// ---- what the script says -------------------------------------------------------------

struct Library {
    const char* name;     // "PyTorch"
    const char* make;     // the helper that turns an embedded list into an array: "tensor"
    const char* imports;
    const char* make_def;
    const char* needs;    // how to get it
};

Library library(ScriptKind kind) {
    if (kind == ScriptKind::PyTorch)
        return {"PyTorch", "tensor", "import torch\nfrom torch import nn\n",
                "def tensor(values, shape):\n"
                "    \"\"\"A float32 tensor of `shape` from the values embedded below (row-major).\"\"\"\n"
                "    return torch.tensor(values, dtype=torch.float32).view(shape)\n",
                "PyTorch (Debian's python3-torch, or pip install torch)"};
    return {"NumPy", "array", "import numpy as np\n",
            "def array(values, shape):\n"
            "    \"\"\"A float32 array of `shape` from the values embedded below (row-major).\"\"\"\n"
            "    return np.array(values, dtype=np.float32).reshape(shape)\n",
            "NumPy only (Debian's python3-numpy, or pip install numpy)"};
}

// One line like the header of `headsplit trace`, with every switch that changes the numbers.
std::string config_line(const Config& c) {
    std::string text;
    for (const std::string& t : c.tokens) {
        if (text.size() > 60) {
            text += " ...";
            break;
        }
        text += (text.empty() ? "" : " ") + t;
    }
    std::string line = "\"" + text + "\"  B=" + std::to_string(c.batch) + " T=" + std::to_string(c.num_tokens()) +
                       " D_in=" + std::to_string(c.d_in) + " D_out=" + std::to_string(c.d_out) +
                       " heads=" + std::to_string(c.heads) + " head_dim=" + std::to_string(c.head_dim()) +
                       "  mode=" + mode_name(c.mode) + " backend=" + backend_name(c.backend) +
                       (c.causal ? " causal" : " not-causal") +
                       (c.weights_dir.empty() || c.dropout > 0 ? " seed=" + std::to_string(c.seed) : "");
    if (c.dropout > 0) line += " dropout=" + exact_number(c.dropout, false);
    if (c.scale_first) line += " scale-first";
    if (c.qkv_bias) line += " qkv-bias";
    if (!c.out_proj) line += " no-out-proj";
    if (c.grouped()) line += " kv_heads=" + std::to_string(c.kv_head_count());
    if (c.cross()) line += " context S=" + std::to_string(c.num_keys()) + " D_context=" + std::to_string(c.context_dim());
    if (c.padded()) line += " padded";
    if (c.decoding()) line += " decode_from=" + std::to_string(c.decode_from);
    return line;
}

// Plain multi-head self-attention on one sentence: every step's PyTorch line runs as written.
bool plain(const Config& c) { return !c.grouped() && !c.cross() && c.batch == 1 && !c.decoding(); }

// The rows of x a decoding round reads ("x[:, 3:4]"), or x.
std::string x_rows(const Step& s) {
    if (s.round < 0) return "x";
    return "x[:, " + std::to_string(s.rows.first) + ":" + std::to_string(s.rows.end()) + "]";
}

// The statements of a step of GQA / MQA, cross-attention, a padded batch or decoding, where the
// code panel's line stands for the idea but needs its sizes spelled out to run.
std::vector<std::string> variant_statements(const Step& s, const Config& c, ScriptKind kind) {
    const bool torch = kind == ScriptKind::PyTorch;
    const bool per_head = s.head >= 0;
    const std::string xr = x_rows(s), kv_in = c.cross() ? "context" : xr;
    const std::string qb = c.qkv_bias ? " + self.b_query" : "", kb = c.qkv_bias ? " + self.b_key" : "",
                      vb = c.qkv_bias ? " + self.b_value" : "";
    switch (s.op) {
        case Op::Input:
            return {c.cross() ? "b, num_tokens, d_in = x.shape; num_keys = context.shape[1]" : "b, num_tokens, d_in = x.shape"};
        case Op::Project:
            if (per_head) {
                if (torch)
                    return {"queries = self.heads[h].W_query(x)", "keys = self.heads[h].W_key(" + kv_in + ")",
                            "values = self.heads[h].W_value(" + kv_in + ")"};
                return {"g = h // (self.num_heads // self.num_kv_heads)  # the key/value head that head h uses",
                        "q_rows = slice(h * self.head_dim, (h + 1) * self.head_dim)",
                        "kv_rows = slice(g * self.head_dim, (g + 1) * self.head_dim)",
                        std::string("queries = x @ self.W_query[q_rows].T") + (c.qkv_bias ? " + self.b_query[q_rows]" : ""),
                        "keys = " + kv_in + " @ self.W_key[kv_rows].T" + (c.qkv_bias ? " + self.b_key[kv_rows]" : ""),
                        "values = " + kv_in + " @ self.W_value[kv_rows].T" + (c.qkv_bias ? " + self.b_value[kv_rows]" : "")};
            }
            if (c.mode == Mode::Fused)
                return {torch ? "qkv = self.W_qkv(" + xr + ")" : "qkv = " + xr + " @ self.W_qkv.T" + (c.qkv_bias ? " + self.b_qkv" : "")};
            if (torch)
                return {"queries, keys, values = self.W_query(" + xr + "), self.W_key(" + kv_in + "), self.W_value(" + kv_in + ")"};
            return {"queries = " + xr + " @ self.W_query.T" + qb, "keys = " + kv_in + " @ self.W_key.T" + kb,
                    "values = " + kv_in + " @ self.W_value.T" + vb};
        case Op::Split:
            return {torch ? "queries, keys, values = qkv.split([self.d_out, self.kv_dim, self.kv_dim], dim=-1)"
                          : "queries, keys, values = np.split(qkv, [self.d_out, self.d_out + self.kv_dim], axis=-1)"};
        case Op::View: {
            const std::string f = torch ? ".view(" : ".reshape(";
            return {"queries = queries" + f + "b, queries.shape[1], self.num_heads, self.head_dim)",
                    "keys = keys" + f + "b, keys.shape[1], self.num_kv_heads, self.head_dim)",
                    "values = values" + f + "b, values.shape[1], self.num_kv_heads, self.head_dim)"};
        }
        case Op::CacheAppend: {
            // The round's rows are written into the cache; attention reads the cache up to them.
            const std::string window = std::to_string(s.rows.first) + ":" + std::to_string(s.rows.end()),
                              upto = std::to_string(s.rows.end());
            std::vector<std::string> out;
            if (s.round == 0)
                for (const char* cache : {"cache_k", "cache_v"})
                    out.push_back(std::string("self.") + cache + " = " +
                                  (torch ? "keys.new_zeros(b, self.num_kv_heads, num_tokens, self.head_dim)"
                                         : "np.zeros((b, self.num_kv_heads, num_tokens, self.head_dim), dtype=np.float32)") +
                                  "  # allocated once for every position");
            out.push_back("self.cache_k[:, :, " + window + "] = keys");
            out.push_back("self.cache_v[:, :, " + window + "] = values");
            out.push_back("keys, values = self.cache_k[:, :, :" + upto + "], self.cache_v[:, :, :" + upto + "]");
            return out;
        }
        case Op::RepeatKv:
            if (torch)
                return {"keys = keys.repeat_interleave(self.num_heads // self.num_kv_heads, dim=1)",
                        "values = values.repeat_interleave(self.num_heads // self.num_kv_heads, dim=1)"};
            return {"keys = np.repeat(keys, self.num_heads // self.num_kv_heads, axis=1)",
                    "values = np.repeat(values, self.num_heads // self.num_kv_heads, axis=1)"};
        case Op::Mask:
            return {torch ? "attn_scores.masked_fill_(self.mask.bool()[:attn_scores.shape[-2], :attn_scores.shape[-1]], -torch.inf)"
                          : "attn_scores[..., self.mask[:attn_scores.shape[-2], :attn_scores.shape[-1]]] = -np.inf"};
        case Op::PadMask: {
            const std::string pad = std::string("key_padding_mask[:, None, ") + (per_head ? "" : "None, ") +
                                    ":attn_scores.shape[-1]]";
            return {torch ? "attn_scores.masked_fill_(" + pad + ", -torch.inf)"
                          : "attn_scores[np.broadcast_to(" + pad + ", attn_scores.shape)] = -np.inf"};
        }
        case Op::Merge:
            return {torch ? "context_vec = context_vec.contiguous().view(b, context_vec.shape[1], self.d_out)"
                          : "context_vec = np.ascontiguousarray(context_vec).reshape(b, context_vec.shape[1], self.d_out)"};
        case Op::Assemble: {
            const std::string out = c.out_proj ? "output" : "context_vec";
            return {out + (torch ? " = torch.cat(outputs, dim=1)" : " = np.concatenate(outputs, axis=1)")};
        }
        default: break;
    }
    return {};  // the plain statement serves
}

// The class name the code panel uses for this mode ("class MultiHeadAttention(nn.Module):").
std::string class_name(const Config& c) {
    const std::string first = module_header(c).front();
    const std::size_t open = first.find('(');
    return first.substr(6, open - 6);
}

// The statements of one step, in the script's library. PyTorch uses the step's own line
// (Step::code) wherever it runs as written; NumPy has its equivalent.
std::vector<std::string> statements(const Step& s, const Config& c, ScriptKind kind) {
    const bool torch = kind == ScriptKind::PyTorch;
    const bool per_head = s.head >= 0;
    if (!plain(c))
        if (std::vector<std::string> v = variant_statements(s, c, kind); !v.empty()) return v;
    switch (s.op) {
        case Op::Input:
            return {s.code};
        case Op::Project: {
            if (torch) return spelled_out(s.code);
            if (c.mode == Mode::Fused) return {std::string("qkv = x @ self.W_qkv.T") + (c.qkv_bias ? " + self.b_qkv" : "")};
            if (!per_head) return for_qkv(std::string("queries = x @ self.W_query.T") + (c.qkv_bias ? " + self.b_query" : ""));
            std::vector<std::string> out = {"rows = slice(h * self.head_dim, (h + 1) * self.head_dim)  # head h's rows of W"};
            for (const std::string& l :
                 for_qkv(std::string("queries = x @ self.W_query[rows].T") + (c.qkv_bias ? " + self.b_query[rows]" : "")))
                out.push_back(l);
            return out;
        }
        case Op::Split:
            return {torch ? s.code : "queries, keys, values = np.split(qkv, 3, axis=-1)"};
        case Op::View:
            return torch ? spelled_out(s.code)
                         : for_qkv("queries = queries.reshape(b, num_tokens, self.num_heads, self.head_dim)");
        case Op::Transpose:
            return torch ? spelled_out(s.code) : for_qkv("queries = queries.swapaxes(1, 2)");
        case Op::Scores:
            return {torch ? s.code : per_head ? "attn_scores = queries @ keys.swapaxes(1, 2)"
                                              : "attn_scores = queries @ keys.swapaxes(2, 3)"};
        case Op::Mask:
            return {torch ? s.code : "attn_scores[..., self.mask[:num_tokens, :num_tokens]] = -np.inf"};
        case Op::Scale:
            return {torch ? s.code : "attn_scores /= self.head_dim ** 0.5"};
        case Op::Softmax:
            if (torch) return {s.code};
            return {"attn_weights = np.exp(attn_scores - attn_scores.max(axis=-1, keepdims=True))",
                    "attn_weights /= attn_weights.sum(axis=-1, keepdims=True)"};
        case Op::Dropout:
            return {"# self.dropout(attn_weights) would draw a new random mask: use the one headsplit drew",
                    std::string("dropout_mask = self.dropout_mask") + (per_head ? "[:, h]" : ""),
                    "attn_weights = attn_weights * dropout_mask / (1 - self.dropout_p)"};
        case Op::Context:
            return {"context_vec = attn_weights @ values"};
        case Op::TransposeBack:
            return {torch ? s.code : "context_vec = context_vec.swapaxes(1, 2)"};
        case Op::Merge:
            return {torch ? s.code : "context_vec = np.ascontiguousarray(context_vec).reshape(b, num_tokens, self.d_out)"};
        case Op::Concat:
            return {torch ? "context_vec = torch.cat(context_vecs, dim=-1)" : "context_vec = np.concatenate(context_vecs, axis=-1)"};
        case Op::OutProj:
            return {torch ? s.code : "output = context_vec @ self.W_out.T + self.b_out"};
        case Op::CacheAppend:
        case Op::RepeatKv:
        case Op::PadMask:
        case Op::Assemble:
        case Op::Tile:
        case Op::Normalize:
        // The backward pass: the export command refuses a backward trace before any script.
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
        case Op::Count: break;
    }
    throw std::invalid_argument(std::string("export: no script line for op ") + op_name(s.op));
}

// show("view", queries=queries, keys=keys, values=values): prints the row, keeps the values.
std::string show_call(const Step& s) {
    std::string call = std::string("show(\"") + op_name(s.op) + "\"" + (s.head >= 0 ? ", h" : "") +
                       (s.round >= 0 ? ", rnd=" + std::to_string(s.round) : "");
    for (const TensorRecord& t : s.tensors) call += ", " + t.name + "=" + t.name;
    return call + ")";
}

// The explanation for a comment; loop mode's body stands for every head.
std::string explain_for_script(const Step& s) {
    if (s.head < 0) return s.explain;
    std::string text = s.explain;
    for (const char* head : {"Head ", "head "}) {
        const std::string from = head + std::to_string(s.head), to = std::string(head) + "h";
        for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
            text.replace(at, from.size(), to);
    }
    return text;
}

// forward(self, x): every step of the trace in its order; loop mode's per-head steps once,
// inside the for loop over heads (as the code panel lists them).
void write_forward(Writer& w, const Trace& tr, ScriptKind kind) {
    const Config& c = tr.config;
    w.line(4, c.cross() || c.padded() ? "def forward(self, x, context=None, key_padding_mask=None):" : "def forward(self, x):");
    if (c.decoding()) w.line(8, "outputs = []  # the prefill's rows, then one row per round");
    bool in_loop = false;
    for (const Step& s : tr.steps) {
        if (s.head > 0) continue;
        if (s.index > 0) w.blank();
        if (s.head == 0 && !in_loop) {
            w.line(8, "context_vecs = []");
            w.line(8, "for h in range(self.num_heads):");
        }
        in_loop = s.head == 0;
        const int indent = in_loop ? 12 : 8;
        w.comment(indent, (in_loop ? std::string(op_name(s.op)) + ", per head"
                                   : "step " + std::to_string(s.index) + ", " + op_name(s.op)) +
                              ": " + explain_for_script(s));
        w.lines(indent, statements(s, tr.config, kind));
        w.line(indent, show_call(s));
        if (in_loop && s.op == Op::Context) w.line(indent, "context_vecs.append(context_vec)");
        // A decoding round ends with its output (or its merged context without W_out).
        if (s.round >= 0 && (s.op == Op::OutProj || (s.op == Op::Merge && !c.out_proj)))
            w.line(indent, std::string("outputs.append(") + (c.out_proj ? "output" : "context_vec") + ")");
    }
    w.blank();
    w.line(8, module_return(tr.config));
}

// `w_query = tensor(W_QUERY, [D_OUT, D_IN])` for the three weights (and biases) embedded
// below, into locals or (prefix "self.") the attributes W_query, b_query, ...
std::vector<std::string> weight_lines(const Config& c, const char* make, const std::string& prefix = "") {
    const std::string w = prefix.empty() ? "w_query" : prefix + "W_query", b = prefix + "b_query";
    std::vector<std::string> out = for_qkv(w + " = " + make + "(W_QUERY, [D_OUT, D_IN])");
    if (!plain(c))  // keys and values: kv_heads heads, from D_in or D_context
        for (std::size_t i = 1; i < 3; ++i) out[i] = replace_words(out[i], {"D_OUT", "D_IN"}, {"KV_DIM", "D_KV_IN"});
    if (c.qkv_bias) {
        std::vector<std::string> bias = for_qkv(b + " = " + make + "(B_QUERY, [D_OUT])");
        if (!plain(c))
            for (std::size_t i = 1; i < 3; ++i) bias[i] = replace_words(bias[i], {"D_OUT"}, {"KV_DIM"});
        out.insert(out.end(), bias.begin(), bias.end());
    }
    return out;
}

void write_torch_module(Writer& w, const Config& c) {
    const std::string bias = c.qkv_bias ? "True" : "False";
    if (c.mode == Mode::Loop) {
        w.line(0, "class Head(nn.Module):");
        w.line(4, "\"\"\"One head's own projections (loop mode): three d_in x head_dim weights.\"\"\"");
        w.blank();
        w.line(4, "def __init__(self, d_in, head_dim, d_kv_in=None):");
        w.line(8, "super().__init__()");
        w.lines(8, for_qkv("self.W_query = nn.Linear(d_in, head_dim, bias=" + bias + ")"));
        if (!plain(c)) {
            w.line(8, "# keys and values read the context (or x) and are shared within a group of heads");
            w.lines(8, {"self.W_key = nn.Linear(d_kv_in or d_in, head_dim, bias=" + bias + ")",
                        "self.W_value = nn.Linear(d_kv_in or d_in, head_dim, bias=" + bias + ")"});
        }
        w.blank();
        w.blank();
    }
    w.line(0, "class " + class_name(c) + "(nn.Module):");
    w.line(4, "def __init__(self, d_in, d_out, num_heads, context_length):");
    w.line(8, "super().__init__()");
    w.line(8, "self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads");
    if (!plain(c)) w.line(8, "self.num_kv_heads, self.kv_dim = NUM_KV_HEADS, KV_DIM  # keys and values: kv heads");
    if (c.mode == Mode::Loop)
        w.line(8, plain(c) ? "self.heads = nn.ModuleList([Head(d_in, self.head_dim) for _ in range(num_heads)])"
                           : "self.heads = nn.ModuleList([Head(d_in, self.head_dim, D_KV_IN) for _ in range(num_heads)])");
    else if (c.mode == Mode::Fused)
        w.line(8, plain(c) ? "self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=" + bias + ")"
                           : "self.W_qkv = nn.Linear(d_in, d_out + 2 * self.kv_dim, bias=" + bias + ")");
    else if (plain(c))
        w.lines(8, for_qkv("self.W_query = nn.Linear(d_in, d_out, bias=" + bias + ")"));
    else
        w.lines(8, {"self.W_query = nn.Linear(d_in, d_out, bias=" + bias + ")",
                    "self.W_key = nn.Linear(D_KV_IN, self.kv_dim, bias=" + bias + ")",
                    "self.W_value = nn.Linear(D_KV_IN, self.kv_dim, bias=" + bias + ")"});
    if (c.out_proj) w.line(8, "self.out_proj = nn.Linear(d_out, d_out)");
    if (c.causal)
        w.line(8, "self.register_buffer(\"mask\", torch.triu(torch.ones(context_length, context_length), diagonal=1))");
    if (c.dropout > 0) {
        w.line(8, "self.dropout_p = DROPOUT  # nn.Dropout(DROPOUT) would draw its own mask");
        w.line(8, "self.register_buffer(\"dropout_mask\", tensor(DROPOUT_MASK, DROPOUT_MASK_SHAPE))");
    }
    w.blank();
}

void write_torch_loader(Writer& w, const Config& c) {
    w.line(0, "def load_weights(model):");
    w.line(4, "\"\"\"headsplit's weights, copied in as they are: nn.Linear's [out_features, in_features].\"\"\"");
    w.line(4, "with torch.no_grad():");
    w.lines(8, weight_lines(c, "tensor"));
    if (c.mode == Mode::Loop) {
        w.line(8, "for h, head in enumerate(model.heads):");
        w.line(12, "rows = slice(h * model.head_dim, (h + 1) * model.head_dim)  # head h's rows of W");
        if (plain(c)) {
            w.lines(12, for_qkv("head.W_query.weight.copy_(w_query[rows])"));
            if (c.qkv_bias) w.lines(12, for_qkv("head.W_query.bias.copy_(b_query[rows])"));
        } else {
            w.line(12, "g = h // (model.num_heads // model.num_kv_heads)  # its key/value head's rows");
            w.line(12, "kv_rows = slice(g * model.head_dim, (g + 1) * model.head_dim)");
            w.lines(12, {"head.W_query.weight.copy_(w_query[rows])", "head.W_key.weight.copy_(w_key[kv_rows])",
                         "head.W_value.weight.copy_(w_value[kv_rows])"});
            if (c.qkv_bias)
                w.lines(12, {"head.W_query.bias.copy_(b_query[rows])", "head.W_key.bias.copy_(b_key[kv_rows])",
                             "head.W_value.bias.copy_(b_value[kv_rows])"});
        }
    } else if (c.mode == Mode::Fused) {
        w.line(8, "# W_qkv is W_query, W_key and W_value stacked row-wise");
        w.line(8, "model.W_qkv.weight.copy_(torch.cat([w_query, w_key, w_value]))");
        if (c.qkv_bias) w.line(8, "model.W_qkv.bias.copy_(torch.cat([b_query, b_key, b_value]))");
    } else {
        w.lines(8, for_qkv("model.W_query.weight.copy_(w_query)"));
        if (c.qkv_bias) w.lines(8, for_qkv("model.W_query.bias.copy_(b_query)"));
    }
    if (c.out_proj) {
        w.line(8, "model.out_proj.weight.copy_(tensor(W_OUT, [D_OUT, D_OUT]))");
        w.line(8, "model.out_proj.bias.copy_(tensor(B_OUT, [D_OUT]))");
    }
}

void write_numpy_module(Writer& w, const Config& c) {
    w.line(0, "class " + class_name(c) + ":");
    w.line(4, "\"\"\"The module in NumPy. Weights keep nn.Linear's [out_features, in_features] layout: x @ W.T.\"\"\"");
    w.blank();
    w.line(4, "def __init__(self, context_length):");
    w.line(8, "self.d_out, self.num_heads, self.head_dim = D_OUT, NUM_HEADS, D_OUT // NUM_HEADS");
    if (!plain(c)) w.line(8, "self.num_kv_heads, self.kv_dim = NUM_KV_HEADS, KV_DIM  # keys and values: kv heads");
    if (c.mode == Mode::Fused) {
        w.lines(8, weight_lines(c, "array"));
        w.line(8, "# W_qkv is W_query, W_key and W_value stacked row-wise");
        w.line(8, "self.W_qkv = np.concatenate([w_query, w_key, w_value])");
        if (c.qkv_bias) w.line(8, "self.b_qkv = np.concatenate([b_query, b_key, b_value])");
    } else {
        w.lines(8, weight_lines(c, "array", "self."));
    }
    if (c.out_proj) {
        w.line(8, "self.W_out = array(W_OUT, [D_OUT, D_OUT])");
        w.line(8, "self.b_out = array(B_OUT, [D_OUT])");
    }
    if (c.causal) w.line(8, "self.mask = np.triu(np.ones((context_length, context_length), dtype=bool), k=1)");
    if (c.dropout > 0) {
        w.line(8, "self.dropout_p = DROPOUT");
        w.line(8, "self.dropout_mask = array(DROPOUT_MASK, DROPOUT_MASK_SHAPE)");
    }
    w.blank();
}

// Recording and checking, the same for both libraries: values travel as Python lists.
const char* const kShowAndCheck = R"PY(STEPS = []  # what this script computed: (op, head, [(tensor, shape, values)]) per step


def label(op, head, rnd=None):
    if rnd is not None:  # decoding: the prefill, then round 1, 2, ...
        return f"{op} (prefill)" if rnd == 0 else f"{op} (r{rnd})"
    return op if head is None else f"{op} (head {head})"


def show(op, head=None, rnd=None, **tensors):
    """Prints the step's row as `headsplit trace` does (the shape of its first tensor) and
    keeps a copy of its values (the next in-place step would change them)."""
    shape = list(next(iter(tensors.values())).shape)
    print(f"{len(STEPS):<6}{label(op, head, rnd):<26}{', '.join(tensors):<34}{shape}")
    STEPS.append((op, head, [(name, list(t.shape), t.flatten().tolist()) for name, t in tensors.items()]))


def position(i, shape):
    """Flat index i as [a, b, ...] in shape."""
    index = []
    for size in reversed(shape):
        index.append(i % size)
        i //= size
    return list(reversed(index))


def fail(message):
    print(f"\nMISMATCH: {message}", file=sys.stderr)
    return 1


def check():
    """Every value of every step against headsplit's trace (TRACE, below): within TOLERANCE,
    and -inf exactly where the trace has -inf. Returns the exit code."""
    largest = 0.0
    for index, (step, recorded) in enumerate(zip(STEPS, TRACE)):
        (op, head, tensors), (want_op, want_head, want_tensors) = step, recorded
        where = f"step {index} ({label(want_op, want_head)})"
        names, want_names = [t[0] for t in tensors], [t[0] for t in want_tensors]
        if (op, head, names) != (want_op, want_head, want_names):
            return fail(f"{where}: this script ran {label(op, head)} with {', '.join(names)} there, "
                        f"the trace has {', '.join(want_names)}")
        for (name, shape, values), (_, want_shape, want_values) in zip(tensors, want_tensors):
            if shape != want_shape:
                return fail(f"{where}: {name} has shape {shape} here, {want_shape} in the trace")
            if len(want_values) != math.prod(want_shape):
                return fail(f"{where}: the trace's {name} holds {len(want_values)} values, "
                            f"its shape {want_shape} needs {math.prod(want_shape)}")
            for i, (got, want) in enumerate(zip(values, want_values)):
                if got == want:
                    continue
                difference = abs(got - want)
                if not difference <= TOLERANCE:
                    return fail(f"{where} differs from the trace: {name}{position(i, shape)} is {got:.9g} "
                                f"here, {want:.9g} in the trace (difference {difference:.3g} > {TOLERANCE:g})")
                largest = max(largest, difference)
    if len(STEPS) != len(TRACE):
        return fail(f"this script ran {len(STEPS)} steps, the trace has {len(TRACE)}")
    print(f"\nall {len(TRACE)} steps match headsplit's trace within {TOLERANCE:g} "
          f"(largest difference {largest:.3g})")
    return 0
)PY";

// The dropout mask of the whole pass, [B, H, T, T]: the dropout step's own, or in loop mode
// each head's [B, T, T] put back at its head.
std::vector<float> dropout_mask(const Trace& tr) {
    const Config& c = tr.config;
    const std::int64_t T = c.num_tokens(), per_head = T * c.num_keys();
    std::vector<float> mask(static_cast<std::size_t>(c.batch * c.heads * per_head));
    for (const Step& s : tr.steps) {
        const TensorRecord* m = s.op == Op::Dropout ? s.find("dropout_mask") : nullptr;
        if (!m) continue;
        if (s.head < 0) return m->values();
        for (std::int64_t b = 0; b < c.batch; ++b)
            for (std::int64_t k = 0; k < per_head; ++k)
                mask[static_cast<std::size_t>((b * c.heads + s.head) * per_head + k)] =
                    m->values()[static_cast<std::size_t>(b * per_head + k)];
    }
    return mask;
}

void write_data(Writer& w, const Trace& tr) {
    const Config& c = tr.config;
    const Weights& wt = tr.weights;
    w.line(0, "# ---- What headsplit used and recorded " + std::string(60, '-'));
    w.line(0, "inf = math.inf  # -inf: a masked attention score");
    w.blank();
    const std::string in = "[" + std::to_string(c.d_out) + ", " + std::to_string(c.d_in) + "]";
    const std::string kv_in = list_str({c.kv_width(), c.key_dim()});
    const std::string out = "[" + std::to_string(c.d_out) + ", " + std::to_string(c.d_out) + "]";
    const std::string bias = "[" + std::to_string(c.d_out) + "]", kv_bias = list_str({c.kv_width()});
    w.values(0, "X = [  # x " + list_str({c.batch, c.num_tokens(), c.d_in}), tr.inputs.x, "]");
    if (c.cross())
        w.values(0, "CONTEXT = [  # the context " + list_str({c.batch, c.num_keys(), c.key_dim()}), tr.inputs.context, "]");
    if (c.padded())
        w.values(0, "KEY_PADDING_MASK = [  # " + list_str({c.batch, c.num_keys()}) + ", 1: a padded key",
                 tr.inputs.key_padding_mask, "]");
    w.values(0, "W_QUERY = [  # " + in + ", nn.Linear's [out_features, in_features]", wt.w_query, "]");
    w.values(0, "W_KEY = [  # " + kv_in, wt.w_key, "]");
    w.values(0, "W_VALUE = [  # " + kv_in, wt.w_value, "]");
    if (c.qkv_bias) {
        w.values(0, "B_QUERY = [  # " + bias, wt.b_query, "]");
        w.values(0, "B_KEY = [  # " + kv_bias, wt.b_key, "]");
        w.values(0, "B_VALUE = [  # " + kv_bias, wt.b_value, "]");
    }
    if (c.out_proj) {
        w.values(0, "W_OUT = [  # " + out, wt.w_out, "]");
        w.values(0, "B_OUT = [  # " + bias, wt.b_out, "]");
    }
    if (c.dropout > 0) {
        const Shape shape{c.batch, c.heads, c.num_tokens(), c.num_keys()};
        w.line(0, "DROPOUT_MASK_SHAPE = " + list_str(shape) + "  # [b, heads, tokens, keys]");
        w.values(0, "DROPOUT_MASK = [  # 1: kept, 0: dropped (drawn by headsplit from the seed)", dropout_mask(tr), "]");
    }
    w.blank();
    w.line(0, "# headsplit's trace: per step its op, head (loop mode) and tensors (name, shape, values).");
    w.line(0, "TRACE = [");
    for (const Step& s : tr.steps) {
        w.line(4, "# step " + std::to_string(s.index) + ": " + op_name(s.op) +
                      (s.head >= 0 ? " (head " + std::to_string(s.head) + ")" : ""));
        w.line(4, std::string("(\"") + op_name(s.op) + "\", " + (s.head >= 0 ? std::to_string(s.head) : "None") + ", [");
        for (const TensorRecord& t : s.tensors)
            w.values(8, "(\"" + t.name + "\", " + list_str(t.shape) + ", [", t.values(), "]),");
        w.line(4, "]),");
    }
    w.line(0, "]");
}

}  // namespace

const char* script_kind_name(ScriptKind kind) { return kind == ScriptKind::PyTorch ? "PyTorch" : "NumPy"; }

std::int64_t script_values(const Trace& tr) {
    const Config& c = tr.config;
    std::int64_t n = c.batch * c.num_tokens() * c.d_in + c.d_out * c.d_in + 2 * c.kv_width() * c.key_dim();
    if (c.cross()) n += c.batch * c.num_keys() * c.key_dim();
    if (c.padded()) n += c.batch * c.num_keys();
    if (c.qkv_bias) n += c.d_out + 2 * c.kv_width();
    if (c.out_proj) n += c.d_out * c.d_out + c.d_out;
    if (c.dropout > 0) n += c.batch * c.heads * c.num_tokens() * c.num_keys();
    for (const Step& s : tr.steps) n += s.numbers();
    return n;
}

void check_script_size(const Trace& tr) {
    const std::int64_t n = script_values(tr);
    if (n > kMaxScriptValues)
        throw ConfigError("a take-home script holds at most " + std::to_string(kMaxScriptValues) +
                          " values (inputs, weights and every step's tensors) and this configuration has " +
                          std::to_string(n) + "; use fewer tokens (--tokens, --text) or a smaller --d-in and --d-out, "
                          "e.g. --tokens 16 --d-in 48 --d-out 48 --heads 12");
}

std::string export_script(const Trace& tr, ScriptKind kind) {
    if (tr.config.mode == Mode::Flash)
        throw ConfigError("take-home scripts are written for loop, split and fused mode; flash mode gives the same "
                          "numbers as split, so export --mode split");
    check_script_size(tr);
    for (const Step& s : tr.steps)
        for (const TensorRecord& t : s.tensors)
            if (!t.has_values() && numel(t.shape) > 0)
                throw std::invalid_argument("export: step " + std::to_string(s.index) + "'s " + t.name +
                                            " holds no values (a planned trace); export a recorded run");
    const Config& c = tr.config;
    const Library lib = library(kind);
    const bool torch = kind == ScriptKind::PyTorch;
    Writer w;
    // The docstring shows the sentence and the weights' source as `headsplit trace` prints them:
    // raw (r""") where they hold a backslash, so that it reads as typed; a """ inside is broken.
    const auto shown = [](std::string text) {
        for (std::size_t at = text.find("\"\"\""); at != std::string::npos; at = text.find("\"\"\"", at + 3))
            text.replace(at, 3, "\"\"\\\"");
        return text;
    };
    const std::string config = shown(config_line(c)), weights = shown("Weights: \"" + weights_source(c) + "\".");
    const bool raw = (config + weights).find('\\') != std::string::npos;
    w.line(0, "#!/usr/bin/env python3");
    w.line(0, std::string(raw ? "r" : "") + "\"\"\"HeadSplit take-home script (" + lib.name +
                  "): multi-head self-attention, " + mode_name(c.mode) + " mode.");
    w.blank();
    w.line(0, config);
    w.line(0, weights);
    w.blank();
    w.wrapped(0, "", "Written by `headsplit export`. The inputs and weights at the bottom of this file are the ones "
                 "headsplit used; the module below runs the same " + std::to_string(tr.steps.size()) +
                 " steps in the same order, prints each step's shape as `headsplit trace` does, then checks every "
                 "value it computed against headsplit's own trace (TRACE, at the bottom) within " +
                 exact_number(kScriptTolerance, false) + ".");
    w.blank();
    w.line(0, std::string("Run it with python3. Needs ") + lib.needs + ".");
    w.line(0, "\"\"\"");
    w.line(0, "import math");
    w.line(0, "import sys");
    w.blank();
    w.line(0, lib.imports);
    w.line(0, "D_IN, D_OUT, NUM_HEADS = " + std::to_string(c.d_in) + ", " + std::to_string(c.d_out) + ", " +
                  std::to_string(c.heads));
    if (!plain(c))
        w.line(0, "NUM_KV_HEADS, KV_DIM, D_KV_IN = " + std::to_string(c.kv_head_count()) + ", " +
                      std::to_string(c.kv_width()) + ", " + std::to_string(c.key_dim()) +
                      "  # key/value heads, their width, what keys and values read");
    if (c.dropout > 0) w.line(0, "DROPOUT = " + exact_number(c.dropout, false));
    w.line(0, "TOLERANCE = " + exact_number(kScriptTolerance, false) +
                  "  # float32 in another order of additions moves values by about 1e-7 .. 1e-6");
    w.blank();
    w.blank();
    w.line(0, lib.make_def);
    w.blank();
    if (torch) write_torch_module(w, c);
    else write_numpy_module(w, c);
    write_forward(w, tr, kind);
    w.blank();
    w.blank();
    if (torch) {
        write_torch_loader(w, c);
        w.blank();
        w.blank();
    }
    w.line(0, kShowAndCheck);
    w.blank();
    w.line(0, "def main():");
    w.line(4, "print(" + py_string(std::string("HeadSplit take-home script (") + lib.name + "): " + config_line(c)) + ")");
    w.line(4, "print()");
    w.line(4, "print(f\"{'step':<6}{'op':<26}{'tensors':<34}shape\")");
    w.line(4, std::string("x = ") + lib.make + "(X, " + list_str({c.batch, c.num_tokens(), c.d_in}) + ")");
    std::string args = "x";
    if (c.cross()) {
        w.line(4, std::string("context = ") + lib.make + "(CONTEXT, " + list_str({c.batch, c.num_keys(), c.key_dim()}) + ")");
        args += ", context=context";
    }
    if (c.padded()) {
        w.line(4, std::string("key_padding_mask = ") + lib.make + "(KEY_PADDING_MASK, " +
                      list_str({c.batch, c.num_keys()}) + ")" + (torch ? ".bool()" : ".astype(bool)") + "  # true: padding");
        args += ", key_padding_mask=key_padding_mask";
    }
    if (torch) {
        w.line(4, "model = " + class_name(c) + "(D_IN, D_OUT, NUM_HEADS, context_length=x.shape[1])");
        w.line(4, "load_weights(model)");
        w.line(4, "with torch.no_grad():");
        w.line(8, "model(" + args + ")");
    } else {
        w.line(4, "model = " + class_name(c) + "(context_length=x.shape[1])");
        w.line(4, "model.forward(" + args + ")");
    }
    w.line(4, "return check()");
    w.blank();
    w.blank();
    write_data(w, tr);
    w.blank();
    w.line(0, "if __name__ == \"__main__\":");
    w.line(4, "sys.exit(main())");
    return w.text();
}

}  // namespace headsplit
