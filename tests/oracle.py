#!/usr/bin/python3
"""PyTorch oracle for headsplit trace JSON (format "headsplit-trace", version 2).

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

    def __init__(self, name, t, kind):
        self.name = name
        self.kind = kind  # the storage the trace should record: new, view, in_place, copy
        self.values = t.detach().clone()  # snapshot: later in-place steps change t
        self.stride = tuple(t.stride())
        self.offset = t.storage_offset()
        self.storage = t.storage().data_ptr()


class Reference:
    """The steps the config implies, each with torch's tensors."""

    def __init__(self):
        self.steps = []  # (op, head, [Ref])
        self._alive = []  # keep every tensor alive so no storage address is reused

    def step(self, op, head, *tensors):
        refs = []
        for name, t, kind in tensors:
            self._alive.append(t)
            refs.append(Ref(name, t, kind))
        self.steps.append((op, head, refs))


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


def reference(doc, problems):
    """Recompute the forward pass with torch; returns a Reference."""
    try:
        cfg = doc["config"]
        mode = cfg["mode"]
        d_in, d_out, num_heads = int(cfg["d_in"]), int(cfg["d_out"]), int(cfg["heads"])
        head_dim = int(cfg["head_dim"])
        causal, out_proj = bool(cfg["causal"]), bool(cfg["out_proj"])
        qkv_bias, scale_first = bool(cfg["qkv_bias"]), bool(cfg["scale_first"])
        p = float(cfg["dropout"])
        weights = doc["weights"]
        x_entry = doc["inputs"]["x"]
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"config/inputs/weights incomplete: {e!r}") from e
    if mode not in ("loop", "split", "fused"):
        raise BadInput(f"unknown mode {mode!r}")
    if num_heads < 1 or d_out % num_heads or head_dim != d_out // num_heads:
        raise BadInput(f"heads={num_heads}, head_dim={head_dim} do not fit d_out={d_out}")
    if not 0.0 <= p < 1.0:
        raise BadInput(f"dropout {p} is not in [0, 1)")

    x = as_tensor(x_entry, "inputs.x")
    if x.dim() != 3 or x.shape[2] != d_in:
        raise BadInput(f"inputs.x has shape {list(x.shape)}, expected [B, T, {d_in}]")
    b, num_tokens = x.shape[0], x.shape[1]
    if "batch" in cfg and cfg["batch"] != b:
        raise BadInput(f"config.batch={cfg['batch']} but inputs.x has batch {b}")
    if isinstance(cfg.get("tokens"), list) and len(cfg["tokens"]) != num_tokens:
        raise BadInput(f"config has {len(cfg['tokens'])} tokens but inputs.x has {num_tokens}")

    def weight(key, shape):
        if key not in weights:
            raise BadInput(f"weights.{key} missing")
        return as_tensor(weights[key], f"weights.{key}", shape)

    w_query = weight("w_query", [d_out, d_in])
    w_key = weight("w_key", [d_out, d_in])
    w_value = weight("w_value", [d_out, d_in])
    b_query = b_key = b_value = None
    if qkv_bias:
        b_query = weight("b_query", [d_out])
        b_key = weight("b_key", [d_out])
        b_value = weight("b_value", [d_out])
    if out_proj:
        w_out, b_out = weight("w_out", [d_out, d_out]), weight("b_out", [d_out])

    masks = recorded_dropout_masks(doc)
    ref = Reference()
    causal_mask = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)

    def mask_scale_softmax_dropout(attn_scores, head):
        """mask/scale (in place, in the configured order), softmax, dropout."""
        for op in (("scale", "mask") if scale_first else ("mask", "scale")):
            if op == "mask" and causal:
                attn_scores.masked_fill_(causal_mask, -torch.inf)
                ref.step("mask", head, ("attn_scores", attn_scores, IN_PLACE))
            elif op == "scale":
                attn_scores.div_(math.sqrt(head_dim))
                ref.step("scale", head, ("attn_scores", attn_scores, IN_PLACE))
        attn_weights = torch.softmax(attn_scores, dim=-1)
        ref.step("softmax", head, ("attn_weights", attn_weights, NEW))
        if p > 0:
            index, mask = masks.get(head, (None, None))
            if mask is None or list(mask.shape) != list(attn_weights.shape):
                mask = torch.ones_like(attn_weights)  # the step-list check reports this
            elif not ((mask == 0) | (mask == 1)).all():
                bad = mask[~((mask == 0) | (mask == 1))][0].item()
                problems.append(f"step {index} (dropout{head_label(head)}) tensor dropout_mask: "
                                f"holds {bad}, not only 0s and 1s")
            attn_weights = attn_weights * mask / (1.0 - p)
            ref.step("dropout", head, ("dropout_mask", mask, NEW),
                     ("attn_weights", attn_weights, NEW))
        return attn_weights

    ref.step("input", None, ("x", x, NEW))

    if mode == "loop":
        contexts = []
        for h in range(num_heads):
            rows = slice(h * head_dim, (h + 1) * head_dim)
            part = lambda bias: None if bias is None else bias[rows]
            W_query = linear(d_in, head_dim, w_query[rows], part(b_query))
            W_key = linear(d_in, head_dim, w_key[rows], part(b_key))
            W_value = linear(d_in, head_dim, w_value[rows], part(b_value))
            queries, keys, values = W_query(x), W_key(x), W_value(x)
            ref.step("project", h, ("queries", queries, NEW), ("keys", keys, NEW),
                     ("values", values, NEW))
            attn_scores = queries @ keys.transpose(1, 2)
            ref.step("scores", h, ("attn_scores", attn_scores, NEW))
            attn_weights = mask_scale_softmax_dropout(attn_scores, h)
            context_vec = attn_weights @ values
            ref.step("context", h, ("context_vec", context_vec, NEW))
            contexts.append(context_vec)
        context_vec = torch.cat(contexts, dim=-1)
        ref.step("concat", None, ("context_vec", context_vec, COPY))
    else:
        if mode == "fused":
            cat_bias = None if not qkv_bias else torch.cat([b_query, b_key, b_value])
            W_qkv = linear(d_in, 3 * d_out, torch.cat([w_query, w_key, w_value]), cat_bias)
            qkv = W_qkv(x)
            ref.step("project", None, ("qkv", qkv, NEW))
            queries, keys, values = qkv.chunk(3, dim=-1)
            ref.step("split", None, ("queries", queries, VIEW), ("keys", keys, VIEW),
                     ("values", values, VIEW))
        else:
            W_query = linear(d_in, d_out, w_query, b_query)
            W_key = linear(d_in, d_out, w_key, b_key)
            W_value = linear(d_in, d_out, w_value, b_value)
            queries, keys, values = W_query(x), W_key(x), W_value(x)
            ref.step("project", None, ("queries", queries, NEW), ("keys", keys, NEW),
                     ("values", values, NEW))
        queries = queries.view(b, num_tokens, num_heads, head_dim)
        keys = keys.view(b, num_tokens, num_heads, head_dim)
        values = values.view(b, num_tokens, num_heads, head_dim)
        ref.step("view", None, ("queries", queries, VIEW), ("keys", keys, VIEW),
                 ("values", values, VIEW))
        queries, keys, values = queries.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        ref.step("transpose", None, ("queries", queries, VIEW), ("keys", keys, VIEW),
                 ("values", values, VIEW))
        attn_scores = queries @ keys.transpose(2, 3)
        ref.step("scores", None, ("attn_scores", attn_scores, NEW))
        attn_weights = mask_scale_softmax_dropout(attn_scores, None)
        context_vec = attn_weights @ values
        ref.step("context", None, ("context_vec", context_vec, NEW))
        context_vec = context_vec.transpose(1, 2)
        ref.step("transpose_back", None, ("context_vec", context_vec, VIEW))
        context_vec = context_vec.contiguous().view(b, num_tokens, d_out)
        ref.step("merge", None, ("context_vec", context_vec, COPY))

    if out_proj:
        output = linear(d_out, d_out, w_out, b_out)(context_vec)
        ref.step("out_proj", None, ("output", output, NEW))
    return ref


def head_label(head):
    return "" if head is None else f", head {head}"


def signature(op, head, names):
    return f"{op}{'' if head is None else f'[head {head}]'}({', '.join(names)})"


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
    if ref.kind == VIEW:
        if list(rec["strides"]) != list(ref.stride) or rec["offset"] != ref.offset:
            issues.append(f"strides {rec['strides']} offset {rec['offset']}, torch's view has "
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
            source = (i == 0 and t["name"] == "x") or t["name"] == "dropout_mask"
            if source != (len(links) == 0):
                problems.append(f"{where}: from {links} (only x and the dropout mask have none)")
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
        if doc.get("version") != 2:
            raise BadInput(f"unsupported version {doc.get('version')!r} (this oracle reads 2)")
        if not isinstance(doc.get("steps"), list):
            raise BadInput("no steps list")
        problems = []
        check_links(doc, problems)
        with torch.no_grad():
            ref = reference(doc, problems)
        steps = doc["steps"]
        recorded = [signature(s["op"], s.get("head"), [t["name"] for t in s["tensors"]])
                    for s in steps]
    except BadInput as e:
        return 2, [f"oracle: {path}: bad input: {e}"]
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        return 2, [f"oracle: {path}: bad input: {e!r}"]

    expected = [signature(op, head, [r.name for r in refs]) for op, head, refs in ref.steps]
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
        for i, (s, (op, head, refs)) in enumerate(zip(steps, ref.steps)):
            if s.get("index") != i:
                problems.append(f"step {i} ({op}{head_label(head)}): index field is {s.get('index')}")
            for r, t in zip(refs, s["tensors"]):
                n_tensors += 1
                diff, issues = compare(r, t)
                max_diff = max(max_diff, diff)
                buf = t["buffer"]
                if r.kind in (VIEW, IN_PLACE):
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
