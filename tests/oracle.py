#!/usr/bin/python3
"""PyTorch oracle for headsplit trace JSON (format "headsplit-trace", version 4).

headsplit implements multi-head causal self-attention in C++ and records every step.
This script is the reference we did not write: it loads a trace, copies the exported
weights as they are into real torch.nn.Linear modules (which is what proves the
[D_out, D_in] nn.Linear layout claim), recomputes the whole forward pass with torch
ops in the order the trace's config implies, and checks that

  * the list of steps (op, head, tensor names) is exactly the one the config implies,
  * every recorded tensor has torch's shape, -inf (null in JSON) in the same places,
    no NaN, and values within TOLERANCE of torch's,
  * view tensors have torch's strides and storage offset, all others are row-major,
  * "view"/"in_place" tensors share the buffer of the tensor torch shares storage
    with, and "new"/"copy" tensors get a buffer no earlier step used.

Nothing recorded is fed forward, except the dropout mask (torch cannot regenerate
the app's random numbers); that mask is checked to hold only 0s and 1s.

Run:  /usr/bin/python3 tests/oracle.py TRACE.json [TRACE2.json ...]
Exit: 0 all files agree, 1 some trace disagrees with torch, 2 unreadable/bad input.
"""

import json
import math
import sys

import torch
from torch import nn

# Absolute tolerance on every recorded value. The values are float32 and the longest
# dot products are sums of a few thousand products (D_in or D_out terms); torch/BLAS
# and the app add them in different orders, which moves the last bits by ~1e-6 .. 1e-5
# at these magnitudes. 1e-4 leaves room for that and still catches any real error
# (a wrong row, a missing bias, a wrong scale or mask are off by far more).
TOLERANCE = 1e-4

NEW, VIEW, IN_PLACE, COPY = "new", "view", "in_place", "copy"


class BadInput(Exception):
    """The file is not a usable headsplit trace (exit 2)."""


class Ref:
    """Torch's version of one recorded tensor."""

    def __init__(self, name, t, kind, layout=None):
        self.name = name
        self.kind = kind  # the storage the trace should record: new, view, in_place, copy
        # strides and offset to expect: torch's own for views, in-place tensors and windows
        # of a larger buffer (the KV cache); row-major for the rest
        self.layout = layout or ("torch" if kind in (VIEW, IN_PLACE) else "row_major")
        self.values = t.detach().clone()  # snapshot: later in-place steps change t
        self.stride = tuple(t.stride())
        self.offset = t.storage_offset()
        self.storage = t.storage().data_ptr()


class Reference:
    """The steps the config implies, each with torch's tensors."""

    def __init__(self):
        self.steps = []  # (op, head, [Ref])
        self._alive = []  # keep every tensor alive so no storage address is reused

    def step(self, op, head, *tensors, round=None):
        refs = []
        for entry in tensors:
            name, t, kind = entry[:3]
            self._alive.append(t)
            refs.append(Ref(name, t, kind, *entry[3:]))
        self.steps.append((op, head, round, refs))


def as_tensor(entry, what, shape=None):
    """A finite float32 tensor from a {"shape", "data"} entry of inputs/weights."""
    try:
        got_shape, data = list(entry["shape"]), entry["data"]
        if shape is not None and got_shape != list(shape):
            raise BadInput(f"{what} has shape {got_shape}, expected {list(shape)}")
        if any(v is None for v in data):
            raise BadInput(f"{what} holds null (non-finite) values")
        return torch.tensor(data, dtype=torch.float32).view(got_shape)
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise BadInput(f"{what} is malformed: {e}") from e


def linear(d_in, d_out, weight, bias):
    """A real nn.Linear with the exported weight (and bias) copied in as they are."""
    layer = nn.Linear(d_in, d_out, bias=bias is not None)
    layer.weight.copy_(weight)  # shapes were checked: [d_out, d_in], no broadcasting
    if bias is not None:
        layer.bias.copy_(bias)
    return layer


def recorded_dropout_masks(doc):
    """The dropout_mask of every dropout step, keyed by head (None outside loop mode)."""
    masks = {}
    for s in doc["steps"]:
        if s.get("op") != "dropout":
            continue
        for t in s.get("tensors", []):
            if t.get("name") == "dropout_mask":
                data = t["data"]
                mask = torch.tensor([math.nan if v is None else v for v in data],
                                    dtype=torch.float32).view(t["shape"])
                masks.setdefault(s.get("head"), (s.get("index"), mask))
    return masks


def token_lists(value, what):
    if not isinstance(value, list) or not value or not all(
            isinstance(seq, list) and seq and all(isinstance(t, str) for t in seq) for seq in value):
        raise BadInput(f"{what} is not a list of non-empty token lists")
    return value


def reference(doc, problems):
    """Recompute the forward pass with torch; returns a Reference."""
    try:
        cfg = doc["config"]
        mode = cfg["mode"]
        d_in, d_out, num_heads = int(cfg["d_in"]), int(cfg["d_out"]), int(cfg["heads"])
        head_dim = int(cfg["head_dim"])
        kv_heads = int(cfg.get("kv_heads", num_heads))
        decode_from = int(cfg.get("decode_from", 0))
        causal, out_proj = bool(cfg["causal"]), bool(cfg["out_proj"])
        qkv_bias, scale_first = bool(cfg["qkv_bias"]), bool(cfg["scale_first"])
        p = float(cfg["dropout"])
        weights = doc["weights"]
        x_entry = doc["inputs"]["x"]
        cross = "context" in cfg
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"config/inputs/weights incomplete: {e!r}") from e
    if mode not in ("loop", "split", "fused", "flash"):
        raise BadInput(f"unknown mode {mode!r}")
    if num_heads < 1 or d_out % num_heads or head_dim != d_out // num_heads:
        raise BadInput(f"heads={num_heads}, head_dim={head_dim} do not fit d_out={d_out}")
    if kv_heads < 1 or num_heads % kv_heads:
        raise BadInput(f"kv_heads={kv_heads} does not divide heads={num_heads}")
    if not 0.0 <= p < 1.0:
        raise BadInput(f"dropout {p} is not in [0, 1)")
    group = num_heads // kv_heads
    kv_dim = kv_heads * head_dim

    x = as_tensor(x_entry, "inputs.x")
    if x.dim() != 3 or x.shape[2] != d_in:
        raise BadInput(f"inputs.x has shape {list(x.shape)}, expected [B, T, {d_in}]")
    b, num_tokens = x.shape[0], x.shape[1]
    if "batch" in cfg and cfg["batch"] != b:
        raise BadInput(f"config.batch={cfg['batch']} but inputs.x has batch {b}")
    sentences = token_lists(cfg.get("batch_tokens", [cfg.get("tokens")]), "config.batch_tokens")
    if len(sentences) != b or max(len(seq) for seq in sentences) != num_tokens:
        raise BadInput(f"config.batch_tokens ({len(sentences)} sentences, longest {max(len(q) for q in sentences)}) "
                       f"do not fit inputs.x {list(x.shape)}")
    if isinstance(cfg.get("tokens"), list) and cfg["tokens"] != sentences[0]:
        raise BadInput("config.tokens is not the first sentence of config.batch_tokens")
    if not 0 <= decode_from < num_tokens:
        raise BadInput(f"decode_from={decode_from} is not in [0, T={num_tokens})")

    # The keys' side: the text itself, or the context (cross-attention).
    if cross:
        contexts = token_lists(cfg["context"], "config.context")
        d_kv_in = int(cfg["d_context"])
        kv_in = as_tensor(doc["inputs"].get("context", {}), "inputs.context")
        num_keys = max(len(seq) for seq in contexts)
        if list(kv_in.shape) != [b, num_keys, d_kv_in]:
            raise BadInput(f"inputs.context has shape {list(kv_in.shape)}, expected {[b, num_keys, d_kv_in]}")
        key_lengths = [len(contexts[0 if len(contexts) == 1 else i]) for i in range(b)]
    else:
        d_kv_in, kv_in, num_keys = d_in, x, num_tokens
        key_lengths = [len(seq) for seq in sentences]
    # The key padding mask, derived from the token lists (true = padding), and the one the
    # trace gives must be the same.
    derived = torch.tensor([[j >= n for j in range(num_keys)] for n in key_lengths], dtype=torch.bool)
    padded = bool(derived.any())
    if padded:
        entry = doc["inputs"].get("key_padding_mask")
        if not isinstance(entry, dict) or entry.get("shape") != [b, num_keys] or entry.get("data") != derived.flatten().tolist():
            problems.append(f"inputs.key_padding_mask is not the padding of the token lists ({derived.tolist()})")
    elif "key_padding_mask" in doc["inputs"]:
        problems.append("inputs.key_padding_mask is given but no sentence is padded")
    key_padding_mask = derived

    def weight(key, shape):
        if key not in weights:
            raise BadInput(f"weights.{key} missing")
        return as_tensor(weights[key], f"weights.{key}", shape)

    w_query = weight("w_query", [d_out, d_in])
    w_key = weight("w_key", [kv_dim, d_kv_in])
    w_value = weight("w_value", [kv_dim, d_kv_in])
    b_query = b_key = b_value = None
    if qkv_bias:
        b_query = weight("b_query", [d_out])
        b_key = weight("b_key", [kv_dim])
        b_value = weight("b_value", [kv_dim])
    if out_proj:
        w_out, b_out = weight("w_out", [d_out, d_out]), weight("b_out", [d_out])

    masks = recorded_dropout_masks(doc)
    ref = Reference()
    rnd = [None]  # the decoding round the next steps belong to

    def step(op, head, *tensors):
        ref.step(op, head, *tensors, round=rnd[0])

    def attention_rows(queries, keys, values, head, causal_here):
        """scores, masks and scale (in the configured order), softmax, dropout, context."""
        attn_scores = queries @ keys.transpose(-2, -1)
        step("scores", head, ("attn_scores", attn_scores, NEW))
        tq, tk = attn_scores.shape[-2], attn_scores.shape[-1]
        pad = key_padding_mask[:, :tk]
        pad = pad[:, None, :] if attn_scores.dim() == 3 else pad[:, None, None, :]
        order = ("scale", "mask", "pad_mask") if scale_first else ("mask", "pad_mask", "scale")
        for op in order:
            if op == "mask" and causal_here:
                attn_scores.masked_fill_(torch.triu(torch.ones(tq, tk, dtype=torch.bool), diagonal=1), -torch.inf)
                step("mask", head, ("attn_scores", attn_scores, IN_PLACE))
            elif op == "pad_mask" and padded:
                attn_scores.masked_fill_(pad, -torch.inf)
                step("pad_mask", head, ("attn_scores", attn_scores, IN_PLACE))
            elif op == "scale":
                attn_scores.div_(math.sqrt(head_dim))
                step("scale", head, ("attn_scores", attn_scores, IN_PLACE))
        attn_weights = torch.softmax(attn_scores, dim=-1)
        step("softmax", head, ("attn_weights", attn_weights, NEW))
        if p > 0:
            index, mask = masks.get(head, (None, None))
            if mask is None or list(mask.shape) != list(attn_weights.shape):
                mask = torch.ones_like(attn_weights)  # the step-list check reports this
            elif not ((mask == 0) | (mask == 1)).all():
                bad = mask[~((mask == 0) | (mask == 1))][0].item()
                problems.append(f"step {index} (dropout{head_label(head)}) tensor dropout_mask: "
                                f"holds {bad}, not only 0s and 1s")
            attn_weights = attn_weights * mask / (1.0 - p)
            step("dropout", head, ("dropout_mask", mask, NEW), ("attn_weights", attn_weights, NEW))
        context_vec = attn_weights @ values
        step("context", head, ("context_vec", context_vec, NEW))
        return context_vec

    def project(q_in, k_in):
        """Q, K, V of all heads: three nn.Linear, or one stacked and split."""
        if mode == "fused":
            cat_bias = None if not qkv_bias else torch.cat([b_query, b_key, b_value])
            W_qkv = linear(d_in, d_out + 2 * kv_dim, torch.cat([w_query, w_key, w_value]), cat_bias)
            qkv = W_qkv(q_in)
            step("project", None, ("qkv", qkv, NEW))
            queries, keys, values = qkv.split([d_out, kv_dim, kv_dim], dim=-1)
            step("split", None, ("queries", queries, VIEW), ("keys", keys, VIEW), ("values", values, VIEW))
        else:
            queries = linear(d_in, d_out, w_query, b_query)(q_in)
            keys = linear(d_kv_in, kv_dim, w_key, b_key)(k_in)
            values = linear(d_kv_in, kv_dim, w_value, b_value)(k_in)
            step("project", None, ("queries", queries, NEW), ("keys", keys, NEW), ("values", values, NEW))
        return queries, keys, values

    def heads(queries, keys, values):
        n_q, n_k = queries.shape[1], keys.shape[1]
        queries = queries.view(b, n_q, num_heads, head_dim)
        keys = keys.view(b, n_k, kv_heads, head_dim)
        values = values.view(b, n_k, kv_heads, head_dim)
        step("view", None, ("queries", queries, VIEW), ("keys", keys, VIEW), ("values", values, VIEW))
        queries, keys, values = queries.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        step("transpose", None, ("queries", queries, VIEW), ("keys", keys, VIEW), ("values", values, VIEW))
        return queries, keys, values

    def repeat(keys, values):
        if group == 1:
            return keys, values
        keys = keys.repeat_interleave(group, dim=1)
        values = values.repeat_interleave(group, dim=1)
        step("repeat_kv", None, ("keys", keys, COPY), ("values", values, COPY))
        return keys, values

    def merge(context_vec):
        n = context_vec.shape[2]
        context_vec = context_vec.transpose(1, 2)
        step("transpose_back", None, ("context_vec", context_vec, VIEW))
        context_vec = context_vec.contiguous().view(b, n, d_out)
        step("merge", None, ("context_vec", context_vec, COPY))
        return context_vec

    def output_of(context_vec):
        if not out_proj:
            return context_vec
        output = linear(d_out, d_out, w_out, b_out)(context_vec)
        step("out_proj", None, ("output", output, NEW))
        return output

    inputs = [("x", x, NEW)]
    if cross:
        inputs.append(("context", kv_in, NEW))
    if padded:
        inputs.append(("key_padding_mask", key_padding_mask.float(), NEW))
    step("input", None, *inputs)

    if decode_from:
        # Prefill the first P tokens, then one token per round against the KV cache.
        cache_k = x.new_zeros(b, kv_heads, num_tokens, head_dim)
        cache_v = x.new_zeros(b, kv_heads, num_tokens, head_dim)
        outputs = []
        for r in range(num_tokens - decode_from + 1):
            rnd[0] = r
            pos, n = (0, decode_from) if r == 0 else (decode_from + r - 1, 1)
            rows = x[:, pos:pos + n]
            queries, keys, values = heads(*project(rows, rows))
            cache_k[:, :, pos:pos + n] = keys
            cache_v[:, :, pos:pos + n] = values
            keys, values = cache_k[:, :, :pos + n], cache_v[:, :, :pos + n]
            kind = COPY if r == 0 else IN_PLACE
            step("cache_append", None, ("keys", keys, kind, "torch"), ("values", values, kind, "torch"))
            keys, values = repeat(keys, values)
            outputs.append(output_of(merge(attention_rows(queries, keys, values, None, r == 0))))
        rnd[0] = None
        result = torch.cat(outputs, dim=1)
        step("assemble", None, ("output" if out_proj else "context_vec", result, COPY))
        # Independently of the rounds: the same numbers as one full causal pass.
        full = full_pass(x, x, w_query, w_key, w_value, b_query, b_key, b_value,
                         (w_out, b_out) if out_proj else None, num_heads, kv_heads, key_padding_mask, True)
        diff = (full - result).abs().max().item()
        if not diff <= 1e-5:
            problems.append(f"decoding: the assembled output differs from one full causal pass by {diff:.3g} (> 1e-5)")
    elif mode == "loop":
        contexts = []
        for h in range(num_heads):
            g = h // group
            q_rows = slice(h * head_dim, (h + 1) * head_dim)
            kv_rows = slice(g * head_dim, (g + 1) * head_dim)
            part = lambda bias, rows: None if bias is None else bias[rows]
            W_query = linear(d_in, head_dim, w_query[q_rows], part(b_query, q_rows))
            W_key = linear(d_kv_in, head_dim, w_key[kv_rows], part(b_key, kv_rows))
            W_value = linear(d_kv_in, head_dim, w_value[kv_rows], part(b_value, kv_rows))
            queries, keys, values = W_query(x), W_key(kv_in), W_value(kv_in)
            step("project", h, ("queries", queries, NEW), ("keys", keys, NEW), ("values", values, NEW))
            contexts.append(attention_rows(queries, keys, values, h, causal))
        context_vec = torch.cat(contexts, dim=-1)
        step("concat", None, ("context_vec", context_vec, COPY))
        output_of(context_vec)
    elif mode == "flash":
        # FlashAttention's loop, written here from its definition: per block of query rows,
        # per block of keys (under a causal mask only those not wholly after the rows), a
        # running max m, a running sum l and an accumulator rescaled by exp(m_old - m_new).
        # m, l, acc and the tile live in buffers made once; each step records windows of them.
        block = int(cfg.get("block", 0))
        if not 1 <= block <= num_tokens:
            raise BadInput(f"config.block={block} is not in [1, T={num_tokens}]")
        queries, keys, values = heads(*project(x, kv_in))
        m_all = x.new_full((b, num_heads, num_tokens), -torch.inf)
        l_all = x.new_zeros(b, num_heads, num_tokens)
        acc_all = x.new_zeros(b, num_heads, num_tokens, head_dim)
        tile = x.new_zeros(b, num_heads, block, block)
        k_h = keys.repeat_interleave(group, dim=1)  # query head h reads key/value head h // group
        v_h = values.repeat_interleave(group, dim=1)
        allowed = (~key_padding_mask[:, None, None, :]).expand(b, 1, num_tokens, num_keys)
        if causal:
            allowed = allowed & torch.ones(num_tokens, num_keys, dtype=torch.bool).tril()
        for q0 in range(0, num_tokens, block):
            q1 = min(q0 + block, num_tokens)
            for k0 in range(0, num_keys, block):
                if causal and k0 > q1 - 1:
                    continue  # every key of the tile comes after every query: skipped
                k1 = min(k0 + block, num_keys)
                s = (queries[:, :, q0:q1] @ k_h[:, :, k0:k1].transpose(2, 3)) / math.sqrt(head_dim)
                s = s.masked_fill(~allowed[..., q0:q1, k0:k1].expand_as(s), -torch.inf)
                window = tile[:, :, :q1 - q0, :k1 - k0]
                window.copy_(s)
                m_old = m_all[:, :, q0:q1].clone()
                m_new = torch.maximum(m_old, s.amax(-1))
                p_tile = torch.exp(s - m_new[..., None]).nan_to_num(0.0)  # a row with nothing seen: 0
                rescale = torch.exp(m_old - m_new).nan_to_num(0.0)
                l_all[:, :, q0:q1] = l_all[:, :, q0:q1] * rescale + p_tile.sum(-1)
                acc_all[:, :, q0:q1] = acc_all[:, :, q0:q1] * rescale[..., None] + p_tile @ v_h[:, :, k0:k1]
                m_all[:, :, q0:q1] = m_new
                kind = NEW if k0 == 0 else IN_PLACE
                step("tile", None, ("tile_scores", window, NEW, "window"), ("m", m_all[:, :, q0:q1], kind, "window"),
                     ("l", l_all[:, :, q0:q1], kind, "window"), ("acc", acc_all[:, :, q0:q1], kind, "window"))
        acc_all.div_(l_all[..., None])
        step("normalize", None, ("context_vec", acc_all, IN_PLACE))
        result = output_of(merge(acc_all))
        # Independently of the tiles: the same numbers as the whole softmax.
        full = full_pass(x, kv_in, w_query, w_key, w_value, b_query, b_key, b_value,
                         (w_out, b_out) if out_proj else None, num_heads, kv_heads, key_padding_mask, causal)
        diff = (full - result).abs().max().item()
        if not diff <= 1e-5:
            problems.append(f"flash: the output differs from the whole softmax by {diff:.3g} (> 1e-5)")
    else:
        queries, keys, values = heads(*project(x, kv_in))
        keys, values = repeat(keys, values)
        output_of(merge(attention_rows(queries, keys, values, None, causal)))

    if padded and not decode_from:
        check_against_mha(cfg, ref, x, kv_in, w_query, w_key, w_value, b_query, b_key, b_value,
                          (w_out, b_out) if out_proj else None, key_padding_mask, problems)
    return ref


def full_pass(x, kv_in, w_query, w_key, w_value, b_query, b_key, b_value, out, num_heads, kv_heads,
              key_padding_mask, causal):
    """Grouped-query attention written as plainly as possible: per head, per batch element,
    softmax over the keys that are allowed. No views, no repeat, no cache."""
    b, t, _ = x.shape
    s = kv_in.shape[1]
    head_dim = w_query.shape[0] // num_heads
    group = num_heads // kv_heads
    q = torch.nn.functional.linear(x, w_query, b_query)
    k = torch.nn.functional.linear(kv_in, w_key, b_key)
    v = torch.nn.functional.linear(kv_in, w_value, b_value)
    out_rows = torch.zeros(b, t, num_heads * head_dim)
    for n in range(b):
        for h in range(num_heads):
            g = h // group
            qh = q[n, :, h * head_dim:(h + 1) * head_dim]
            kh = k[n, :, g * head_dim:(g + 1) * head_dim]
            vh = v[n, :, g * head_dim:(g + 1) * head_dim]
            scores = (qh @ kh.T) / math.sqrt(head_dim)
            allowed = ~key_padding_mask[n][None, :].expand(t, s)
            if causal:
                allowed = allowed & torch.ones(t, s, dtype=torch.bool).tril()
            scores = scores.masked_fill(~allowed, -torch.inf)
            out_rows[n, :, h * head_dim:(h + 1) * head_dim] = torch.softmax(scores, dim=-1) @ vh
    if out is None:
        return out_rows
    return torch.nn.functional.linear(out_rows, out[0], out[1])


def check_against_mha(cfg, ref, x, kv_in, w_query, w_key, w_value, b_query, b_key, b_value, out,
                      key_padding_mask, problems):
    """A padded batch's output, padded query rows included, against torch's own
    nn.MultiheadAttention with key_padding_mask, where its parameters can hold the trace's
    (D_in = D_out, one key/value head per head, Q/K/V bias and output projection, no dropout);
    elsewhere against full_pass()."""
    d_in, d_out, num_heads = int(cfg["d_in"]), int(cfg["d_out"]), int(cfg["heads"])
    kv_heads = int(cfg.get("kv_heads", num_heads))
    causal = bool(cfg["causal"])
    final = ref.steps[-1][3][-1].values
    mha_fits = (d_in == d_out and kv_heads == num_heads and b_query is not None and out is not None
                and float(cfg["dropout"]) == 0)
    if mha_fits:
        d_kv = kv_in.shape[2]
        mha = nn.MultiheadAttention(d_out, num_heads, bias=True, batch_first=True,
                                    kdim=d_kv, vdim=d_kv)
        if d_kv == d_out:
            mha.in_proj_weight.copy_(torch.cat([w_query, w_key, w_value]))
        else:
            mha.q_proj_weight.copy_(w_query)
            mha.k_proj_weight.copy_(w_key)
            mha.v_proj_weight.copy_(w_value)
        mha.in_proj_bias.copy_(torch.cat([b_query, b_key, b_value]))
        mha.out_proj.weight.copy_(out[0])
        mha.out_proj.bias.copy_(out[1])
        t, s = x.shape[1], kv_in.shape[1]
        attn_mask = torch.ones(t, s, dtype=torch.bool).triu(1) if causal else None
        expected, _ = mha(x, kv_in, kv_in, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                          need_weights=False)
        what = "nn.MultiheadAttention with key_padding_mask"
    else:
        expected = full_pass(x, kv_in, w_query, w_key, w_value, b_query, b_key, b_value, out,
                             num_heads, kv_heads, key_padding_mask, causal)
        what = "a per-head, per-sentence softmax over the allowed keys"
    if float(cfg["dropout"]) > 0:
        return  # the trace's dropout mask is not known to either
    diff = (expected - final).abs().max().item()
    if not diff <= TOLERANCE:
        problems.append(f"padded batch: the output differs from {what} by {diff:.3g}")


def head_label(head):
    return "" if head is None else f", head {head}"


def signature(op, head, names, round=None):
    return (f"{op}{'' if head is None else f'[head {head}]'}{'' if round is None else f'[round {round}]'}"
            f"({', '.join(names)})")


def row_major(shape):
    strides, n = [], 1
    for size in reversed(shape):
        strides.append(n)
        n *= size
    return list(reversed(strides))


def compare(ref, rec):
    """(max abs diff, [what differs]) between torch's tensor and a recorded one."""
    shape = rec["shape"]
    if list(ref.values.shape) != list(shape):
        return 0.0, [f"shape {shape}, torch has {list(ref.values.shape)}"]
    data = rec["data"]
    if len(data) != ref.values.numel():
        return 0.0, [f"{len(data)} values for shape {shape} ({ref.values.numel()} expected)"]
    issues = []
    if rec["view"] != (ref.kind == VIEW) or rec["storage"] != ref.kind:
        issues.append(f"storage {rec['storage']!r} (view={rec['view']}), torch's is {ref.kind!r}")
    if ref.kind == VIEW and ref.layout == "torch":
        if list(rec["strides"]) != list(ref.stride) or rec["offset"] != ref.offset:
            issues.append(f"strides {rec['strides']} offset {rec['offset']}, torch's view has "
                          f"strides {list(ref.stride)} offset {ref.offset}")
    elif ref.layout in ("torch", "window"):
        if list(rec["strides"]) != list(ref.stride) or rec["offset"] != ref.offset:
            issues.append(f"strides {rec['strides']} offset {rec['offset']}, torch's tensor has "
                          f"strides {list(ref.stride)} offset {ref.offset}")
    elif list(rec["strides"]) != row_major(shape) or rec["offset"] != 0:
        issues.append(f"strides {rec['strides']} offset {rec['offset']}, expected row-major "
                      f"{row_major(shape)} offset 0")

    torch_vals = ref.values.double()
    if torch.isnan(torch_vals).any():
        issues.append("torch's own result holds NaN (inputs too large?)")
        return 0.0, issues
    nulls = torch.tensor([v is None for v in data], dtype=torch.bool).view(shape)
    neg_inf = torch.isneginf(torch_vals)
    if not torch.equal(nulls, neg_inf):
        where = (nulls != neg_inf).nonzero()[0].tolist()
        issues.append(f"null/-inf pattern differs: {int((nulls != neg_inf).sum())} cells, first at "
                      f"{where}: trace {'null' if nulls[tuple(where)] else 'finite'}, torch "
                      f"{torch_vals[tuple(where)].item()}")
        return 0.0, issues
    vals = torch.tensor([0.0 if v is None else v for v in data], dtype=torch.float64).view(shape)
    diff = (vals - torch_vals).abs().masked_fill(nulls, 0.0)
    max_diff = diff.max().item() if diff.numel() else 0.0
    if not max_diff <= TOLERANCE:
        where = tuple((diff == diff.max()).nonzero()[0].tolist())
        issues.append(f"max abs diff {max_diff:.3g} > {TOLERANCE:g} at {list(where)}: trace "
                      f"{vals[where].item():.9g}, torch {torch_vals[where].item():.9g}")
    return max_diff, issues


def expected_spans(s, T, S, P, block):
    """The query rows and key positions step `s` must hold, from the configuration alone:
    a flash tile its blocks; a decoding round its token(s) and, until its cache_append, its
    new keys, from there the cache so far; any other step all T rows and all S keys."""
    tile, rnd = s.get("tile"), s.get("round")
    if tile is not None:
        q0, k0 = tile["query_block"] * block, tile["key_block"] * block
        return [q0, min(block, T - q0)], [k0, min(block, S - k0)]
    if rnd is None:
        return [0, T], [0, S]
    pos, n = (0, P) if rnd == 0 else (P + rnd - 1, 1)
    if s["op"] in ("project", "split", "view", "transpose"):
        return [pos, n], [pos, n]
    return [pos, n], [0, pos + n]


def check_axes(doc, problems):
    """Every tensor names what each of its dims counts, and the sizes agree with the
    configuration: batch B, head H, kv_head the key/value heads (grouped only), token the
    step's rows, key the step's keys, feature one of the model's widths. Each step's rows and
    keys are the ones its round or tile implies."""
    cfg = doc["config"]
    B, T = doc["inputs"]["x"]["shape"][:2]
    S = doc["inputs"]["context"]["shape"][1] if "context" in doc["inputs"] else T
    H, G, hd = int(cfg["heads"]), int(cfg.get("kv_heads", cfg["heads"])), int(cfg["head_dim"])
    d_in, d_out = int(cfg["d_in"]), int(cfg["d_out"])
    widths = {d_in, d_out, hd, G * hd, d_out + 2 * G * hd, int(cfg.get("d_context", d_in))}
    P, block = int(cfg.get("decode_from", 0)), int(cfg.get("block", 0) or 1)
    names = {"batch", "head", "kv_head", "token", "key", "feature"}
    for i, s in enumerate(doc["steps"]):
        where = f"step {i} ({s['op']})"
        rows, keys = expected_spans(s, T, S, P, block)
        if s.get("rows") != rows:
            problems.append(f"{where}: rows {s.get('rows')}, expected {rows}")
        has_keys = any("key" in (t.get("axes") or []) for t in s["tensors"])
        if has_keys and s.get("keys") != keys:
            problems.append(f"{where}: keys {s.get('keys')}, expected {keys}")
        if not has_keys and "keys" in s:
            problems.append(f"{where}: keys {s['keys']} written, but no tensor has a key axis")
        for t in s["tensors"]:
            axes, shape = t.get("axes"), t["shape"]
            if not isinstance(axes, list) or len(axes) != len(shape) or len(set(axes)) != len(axes) \
                    or not set(axes) <= names:
                problems.append(f"{where} tensor {t['name']}: axes {axes} do not name each dim of {shape} once")
                continue
            size = {"batch": B, "head": H, "kv_head": G, "token": rows[1], "key": keys[1]}
            for a, n in zip(axes, shape):
                want = size.get(a)
                if a == "kv_head" and G == H:
                    problems.append(f"{where} tensor {t['name']}: a kv_head axis without grouped heads")
                elif a == "feature" and n not in widths:
                    problems.append(f"{where} tensor {t['name']}: a feature axis of {n}, not a width of the model")
                elif want is not None and n != want:
                    problems.append(f"{where} tensor {t['name']}: its {a} axis holds {n}, expected {want}")


def check_links(doc, problems):
    """Every tensor's "from" names tensors of earlier steps (or, for dropout's output, its mask
    just before it in the same step) or weights the document holds; only x and the dropout
    mask have none; a view or in-place tensor's first link is the buffer it shares."""
    steps = doc["steps"]
    for i, s in enumerate(steps):
        for k, t in enumerate(s["tensors"]):
            where = f"step {i} ({s['op']}) tensor {t['name']}"
            links = t.get("from")
            if not isinstance(links, list):
                problems.append(f"{where}: no from list")
                continue
            source = (i == 0 and t["name"] in ("x", "context", "key_padding_mask")) or t["name"] == "dropout_mask"
            if source != (len(links) == 0):
                problems.append(f"{where}: from {links} (only the inputs and the dropout mask have none)")
            for n, link in enumerate(links):
                if set(link) == {"weight"}:
                    if link["weight"] not in doc.get("weights", {}):
                        problems.append(f"{where}: links to weight {link['weight']!r}, which the trace lacks")
                    continue
                if set(link) != {"step", "tensor"} or not isinstance(link["step"], int):
                    problems.append(f"{where}: malformed link {link}")
                    continue
                j = link["step"]
                names = [u["name"] for u in steps[j]["tensors"]] if 0 <= j < len(steps) else []
                earlier = j < i or (j == i and link["tensor"] in names[:k])
                if not earlier or link["tensor"] not in names:
                    problems.append(f"{where}: link {link} does not name an earlier tensor")
                    continue
                if n == 0 and t["storage"] in ("view", "in_place"):
                    src = steps[j]["tensors"][names.index(link["tensor"])]
                    if src["buffer"] != t["buffer"]:
                        problems.append(f"{where}: a {t['storage']} of buffer {t['buffer']} links to "
                                        f"{link}, which is buffer {src['buffer']}")


def check_file(path):
    """Returns (exit code, lines to print)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return 2, [f"oracle: {path}: cannot read trace: {e}"]
    try:
        if not isinstance(doc, dict) or doc.get("format") != "headsplit-trace":
            raise BadInput("not a headsplit-trace document")
        if doc.get("version") != 4:
            raise BadInput(f"unsupported version {doc.get('version')!r} (this oracle reads 4)")
        if not isinstance(doc.get("steps"), list):
            raise BadInput("no steps list")
        problems = []
        check_links(doc, problems)
        check_axes(doc, problems)
        with torch.no_grad():
            ref = reference(doc, problems)
        steps = doc["steps"]
        recorded = [signature(s["op"], s.get("head"), [t["name"] for t in s["tensors"]], s.get("round"))
                    for s in steps]
    except BadInput as e:
        return 2, [f"oracle: {path}: bad input: {e}"]
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        return 2, [f"oracle: {path}: bad input: {e!r}"]

    expected = [signature(op, head, [r.name for r in refs], rnd) for op, head, rnd, refs in ref.steps]
    if recorded != expected:
        at = next((i for i, (a, b) in enumerate(zip(recorded, expected)) if a != b),
                  min(len(recorded), len(expected)))
        got = recorded[at] if at < len(recorded) else "(end of trace)"
        want = expected[at] if at < len(expected) else "(no more steps)"
        return 1, [f"oracle: {path}: FAIL: step list differs from what the config implies "
                   f"({len(recorded)} steps recorded, {len(expected)} expected): at step {at} "
                   f"the trace has {got}, expected {want}"]

    lines, max_diff, n_tensors = [], 0.0, 0
    buffer_of = {}  # torch storage address -> recorded buffer id
    seen_buffers = set()
    try:
        for i, (s, (op, head, _, refs)) in enumerate(zip(steps, ref.steps)):
            if s.get("index") != i:
                problems.append(f"step {i} ({op}{head_label(head)}): index field is {s.get('index')}")
            for r, t in zip(refs, s["tensors"]):
                n_tensors += 1
                diff, issues = compare(r, t)
                max_diff = max(max_diff, diff)
                buf = t["buffer"]
                if r.layout == "window":
                    # A window of a buffer made up front (flash's m, l, acc and tile): every
                    # window of one torch storage is one trace buffer, used by nothing else.
                    if r.storage in buffer_of:
                        if buffer_of[r.storage] != buf:
                            issues.append(f"buffer {buf}, but torch's windows share storage with buffer "
                                          f"{buffer_of[r.storage]}")
                    elif buf in seen_buffers:
                        issues.append(f"buffer {buf} was already used by an earlier step")
                    else:
                        buffer_of[r.storage] = buf
                elif r.kind in (VIEW, IN_PLACE):
                    if buffer_of.get(r.storage) != buf:
                        issues.append(f"buffer {buf}, but torch shares storage with buffer "
                                      f"{buffer_of.get(r.storage)}")
                else:
                    if buf in seen_buffers:
                        issues.append(f"buffer {buf} was already used by an earlier step "
                                      f"(a {r.kind} tensor needs its own)")
                    # torch's .contiguous() returns the tensor itself when it is already
                    # row-major (T=1 or one head); the app's merge copies anyway - fine.
                    buffer_of[r.storage] = buf
                seen_buffers.add(buf)
                for issue in issues:
                    problems.append(f"step {i} ({op}{head_label(head)}) tensor {r.name}: {issue}")
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        return 2, [f"oracle: {path}: bad input in step tensors: {e!r}"]

    if problems:
        lines = [f"oracle: {path}: FAIL: {p}" for p in problems]
        lines.append(f"oracle: {path} FAILED ({len(problems)} mismatch{'es' if len(problems) > 1 else ''}, "
                     f"max abs diff {max_diff:.3g})")
        return 1, lines
    return 0, [f"oracle: {path} ok ({len(steps)} steps, {n_tensors} tensors, "
               f"max abs diff {max_diff:.3g})"]


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print(f"usage: {argv[0]} TRACE.json [TRACE2.json ...]", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    worst = 0
    for path in argv[1:]:
        code, lines = check_file(path)
        for line in lines:
            print(line, file=sys.stdout if code == 0 else sys.stderr)
        worst = max(worst, code)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv))
