#!/usr/bin/python3
"""PyTorch autograd oracle for the backward steps of a headsplit trace (--backward, version 4).

It loads a trace, makes x, the context and every weight torch leaves that require grad,
recomputes the forward with plain torch ops in the teaching code's order (all heads at once),
calls retain_grad() on every intermediate, runs output.backward(dout) with the trace's own
dout, and checks each backward step of the trace against autograd:

  * the backward steps (op, head) are exactly those the config implies, in order;
  * every recorded gradient has autograd's shape and values within TOLERANCE, measured as
    |a - b| / max(1, |b|); loop mode's per-head tensors against slices of autograd's, and its
    partial sums (d_x after head h, dW_key of a shared key/value head) against sums of
    autograd's per-head gradients;
  * views and in-place steps share the buffer of what they were made from; new tensors and
    copies do not.

Nothing recorded is fed in, except the dropout mask (checked to hold only 0s and 1s).

Run:  /usr/bin/python3 tests/oracle_backward.py TRACE.json [...]
      /usr/bin/python3 tests/oracle_backward.py --self-test TRACE.json
        (the trace must pass, and each plausible wrong backward written into its values must fail)
Prints the largest difference per file. Exit: 0 all agree, 1 a disagreement, 2 bad input.
"""

import copy
import json
import math
import sys

import torch

TOLERANCE = 1e-5


class BadInput(Exception):
    pass


def tensor(entry, what):
    try:
        data = [math.nan if v is None else v for v in entry["data"]]
        return torch.tensor(data, dtype=torch.float32).view(entry["shape"])
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise BadInput(f"{what} is malformed: {e}") from e


def leaf(t):
    return t.clone().requires_grad_(True)


class Forward:
    """The forward, all heads at once, each intermediate kept with retain_grad()."""

    def __init__(self, doc):
        c = doc["config"]
        self.c = c
        ins, w = doc["inputs"], doc["weights"]
        self.B, self.H = c["batch"], c["heads"]
        self.G, self.hd, self.D = c["kv_heads"], c["head_dim"], c["d_out"]
        self.r = self.H // self.G
        self.x = leaf(tensor(ins["x"], "x"))
        self.cross = "context" in ins
        self.context = leaf(tensor(ins["context"], "context")) if self.cross else None
        self.dout = tensor(ins["dout"], "inputs.dout")
        self.w = {k: leaf(tensor(v, k)) for k, v in w.items()}
        self.T = self.x.shape[1]
        kv_in = self.context if self.cross else self.x
        self.S = kv_in.shape[1]
        self.pad = None
        if "key_padding_mask" in ins:
            self.pad = torch.tensor(ins["key_padding_mask"]["data"], dtype=torch.bool).view(self.B, self.S)
        self.kv_in = kv_in
        self.run(doc)

    def keep(self, t):
        t.retain_grad()
        return t

    def lin(self, inp, name):
        out = inp @ self.w["w_" + name].T
        if "b_" + name in self.w:
            out = out + self.w["b_" + name]
        return self.keep(out)

    def run(self, doc):
        B, T, S, H, G, hd, D = self.B, self.T, self.S, self.H, self.G, self.hd, self.D
        c = self.c
        self.q_rows, self.k_rows, self.v_rows = (self.lin(self.x, "query"), self.lin(self.kv_in, "key"),
                                                 self.lin(self.kv_in, "value"))
        self.q_view = self.keep(self.q_rows.view(B, T, H, hd))
        self.k_view = self.keep(self.k_rows.view(B, S, G, hd))
        self.v_view = self.keep(self.v_rows.view(B, S, G, hd))
        self.q_h = self.keep(self.q_view.transpose(1, 2))
        self.k_g = self.keep(self.k_view.transpose(1, 2))
        self.v_g = self.keep(self.v_view.transpose(1, 2))
        self.k_h, self.v_h = self.k_g, self.v_g
        if G != H:
            self.k_h = self.keep(self.k_g.repeat_interleave(self.r, dim=1))
            self.v_h = self.keep(self.v_g.repeat_interleave(self.r, dim=1))
        s = self.keep(self.q_h @ self.k_h.transpose(2, 3))
        self.chain = [("scores", s)]  # each stage's output, in forward order
        stages = []
        if c["scale_first"]:
            stages.append("scale")
        if c["causal"]:
            stages.append("mask")
        if self.pad is not None:
            stages.append("pad_mask")
        if not c["scale_first"]:
            stages.append("scale")
        for op in stages:
            if op == "scale":
                s = s / math.sqrt(hd)
            elif op == "mask":
                s = s.masked_fill(torch.ones(T, S, dtype=torch.bool).triu(1), -math.inf)
            else:
                s = s.masked_fill(self.pad[:, None, None, :], -math.inf)
            self.chain.append((op, self.keep(s)))
        self.w_att = self.keep(torch.softmax(s, dim=-1))
        self.w_drop = self.w_att
        if c["dropout"] > 0:
            self.w_drop = self.keep(self.w_att * self.dropout_mask(doc) / (1 - c["dropout"]))
        self.ctx = self.keep(self.w_drop @ self.v_h)
        self.ctx_t = self.keep(self.ctx.transpose(1, 2))
        self.merged = self.keep(self.ctx_t.contiguous().view(B, T, D))
        out = self.merged
        if c["out_proj"]:
            out = self.merged @ self.w["w_out"].T + self.w["b_out"]
        out.backward(self.dout)

    def dropout_mask(self, doc):
        """The recorded mask, [B, H, T, S] (loop mode: its heads' masks side by side)."""
        per_head = {}
        for s in doc["steps"]:
            if s["op"] == "dropout":
                for t in s["tensors"]:
                    if t["name"] == "dropout_mask":
                        m = tensor(t, "dropout_mask")
                        if not bool(((m == 0) | (m == 1)).all()):
                            raise BadInput("dropout_mask holds values other than 0 and 1")
                        per_head[s.get("head", -1)] = m
        if -1 in per_head:
            return per_head[-1]
        return torch.stack([per_head[h] for h in range(self.H)], dim=1)


def grad(t):
    return t.grad.detach().clone()


def expected_ops(c, f):
    """The backward's (op, head) list the config implies."""
    chain_back = [op + "_back" for op, _ in reversed(f.chain[1:])]
    attention = ["context_back"] + (["dropout_back"] if c["dropout"] > 0 else []) + ["softmax_back"] + chain_back + [
        "scores_back"]
    ops = [("out_proj_back", None)] if c["out_proj"] else []
    if c["mode"] == "loop":
        for h in range(c["heads"]):
            ops += [("concat_back", h)] + [(op, h) for op in attention] + [("project_back", h)]
        return ops
    ops += [("merge_back", None), ("transpose_back_grad", None)]
    if c["mode"] == "flash":
        blk, T, S = c["block"], f.T, f.S
        qb, kb = -(-T // blk), -(-S // blk)
        runs = lambda i, j: not c["causal"] or j * blk <= min((i + 1) * blk, T) - 1
        ops += [("flash_back_rows", None)] + [("tile_back", None) for j in range(kb) for i in range(qb) if runs(i, j)]
    else:
        ops += [(op, None) for op in attention]
        if c["kv_heads"] != c["heads"]:
            ops.append(("repeat_kv_back", None))
    ops += [("transpose_grad", None), ("view_back", None)]
    if c["mode"] == "fused":
        ops.append(("split_back", None))
    return ops + [("project_back", None)]


class Expect:
    """What autograd says each backward tensor holds, by step and name."""

    def __init__(self, doc, f):
        self.f = f
        self.c = doc["config"]
        # (op, stage) -> the gradient of that in-place stage's input, from the chain
        self.chain_grads = {}
        for i in range(len(f.chain) - 1, 0, -1):
            self.chain_grads[f.chain[i][0] + "_back"] = grad(f.chain[i - 1][1])

    def loop_partials(self, h):
        """Loop mode after head h: dW_key/dW_value/db_key/db_value of its key/value head, d_x, d_context."""
        f, hd = self.f, self.f.hd
        g = h // f.r
        rows = lambda t: t.reshape(-1, t.shape[-1])
        dk = lambda i: grad(f.k_h)[:, i]
        dv = lambda i: grad(f.v_h)[:, i]
        dq = lambda i: grad(f.q_h)[:, i]
        members = [i for i in range(g * f.r, h + 1)]
        kv = rows(f.kv_in.detach())
        out = {
            "dW_key": sum(rows(dk(i)).T @ kv for i in members),
            "dW_value": sum(rows(dv(i)).T @ kv for i in members),
            "db_key": sum(dk(i).sum((0, 1)) for i in members),
            "db_value": sum(dv(i).sum((0, 1)) for i in members),
        }
        wq, wk, wv = (f.w[n].detach() for n in ("w_query", "w_key", "w_value"))
        blk = lambda w, i: w[i * hd:(i + 1) * hd]
        q_part = sum(dq(i) @ blk(wq, i) for i in range(h + 1))
        kv_part = sum(dk(i) @ blk(wk, i // f.r) + dv(i) @ blk(wv, i // f.r) for i in range(h + 1))
        if f.cross:
            out["d_x"], out["d_context"] = q_part, kv_part
        else:
            out["d_x"] = q_part + kv_part
        return out

    def tile_window(self, step, name):
        """Flash: a tile's p, and the sums dq, dk, dv hold once the tiles so far (key blocks
        outer) have added theirs: prefixes of autograd's products."""
        f = self.f
        q0, k0 = step["rows"][0], step["keys"][0]
        q1, k1 = q0 + step["rows"][1], k0 + step["keys"][1]
        d_raw = grad(f.chain[0][1])  # the gradient of q @ k^T, before any scale or mask
        group = lambda t: t.view(f.B, f.G, f.r, *t.shape[2:]).sum(2)
        if name == "tile_probs":
            return f.w_att.detach()[:, :, q0:q1, k0:k1]
        if name == "d_queries":
            return d_raw[:, :, q0:q1, :k1] @ f.k_h.detach()[:, :, :k1]
        if name == "d_keys":
            return group(d_raw[:, :, :q1, k0:k1].transpose(-2, -1) @ f.q_h.detach()[:, :, :q1])
        return group(f.w_att.detach()[:, :, :q1, k0:k1].transpose(-2, -1) @ grad(f.ctx)[:, :, :q1])

    def tensor(self, step, name):
        f, c, op, h = self.f, self.c, step["op"], step.get("head")
        hd = f.hd
        per = (lambda t: t[:, h]) if h is not None else (lambda t: t)
        W = lambda n: grad(f.w[n])
        if name == "d_output":
            return f.dout
        if op == "out_proj_back":
            return {"dW_out": W("w_out"), "db_out": W("b_out"), "d_context_vec": grad(f.merged)}[name]
        if op == "merge_back":
            return grad(f.ctx_t)
        if op == "concat_back":
            return grad(f.merged)[:, :, h * hd:(h + 1) * hd]
        if op == "transpose_back_grad":
            return grad(f.ctx)
        if op == "context_back":
            return per(grad(f.v_h)) if name == "d_values" else per(grad(f.w_drop))
        if op == "dropout_back":
            return per(grad(f.w_att))
        if op == "softmax_back":
            return per(grad(f.chain[-1][1]))
        if op in ("scale_back", "mask_back", "pad_mask_back"):
            return per(self.chain_grads[op])
        if op == "scores_back":
            return per(grad(f.q_h)) if name == "d_queries" else per(grad(f.k_h))
        if op == "flash_back_rows":
            if name == "lse":
                return torch.logsumexp(f.chain[-1][1].detach(), dim=-1)
            return (grad(f.ctx) * f.ctx.detach()).sum(-1)
        if op == "tile_back":
            return self.tile_window(step, name)
        if op == "repeat_kv_back":
            return grad(f.k_g) if name == "d_keys" else grad(f.v_g)
        if op == "transpose_grad":
            return grad({"d_queries": f.q_view, "d_keys": f.k_view, "d_values": f.v_view}[name])
        if op == "view_back":
            return grad({"d_queries": f.q_rows, "d_keys": f.k_rows, "d_values": f.v_rows}[name])
        if op == "split_back":
            return torch.cat([grad(f.q_rows), grad(f.k_rows), grad(f.v_rows)], dim=-1)
        if op == "project_back":
            if h is not None:
                if name in ("dW_query", "db_query"):
                    return W(name.replace("dW_", "w_").replace("db_", "b_"))[h * hd:(h + 1) * hd]
                return self.loop_partials(h)[name]
            if name == "dW_qkv":
                return torch.cat([W("w_query"), W("w_key"), W("w_value")], dim=0)
            if name == "db_qkv":
                return torch.cat([W("b_query"), W("b_key"), W("b_value")], dim=0)
            if name == "d_x":
                return grad(f.x)
            if name == "d_context":
                return grad(f.context)
            return W(name.replace("dW_", "w_").replace("db_", "b_"))
        raise KeyError(f"{op}: {name}")


STORAGE = {"merge_back": "view", "concat_back": "view", "transpose_back_grad": "view", "transpose_grad": "view",
           "split_back": "view", "view_back": "copy", "scale_back": "in_place", "mask_back": "in_place",
           "pad_mask_back": "in_place"}


def check(doc):
    """(largest difference, problems) of one trace."""
    c = doc["config"]
    if not c.get("backward"):
        raise BadInput("the trace has no backward pass (run headsplit trace --backward)")
    f = Forward(doc)
    ex = Expect(doc, f)
    problems, worst = [], 0.0
    back = [s for s in doc["steps"] if s.get("pass") == "backward"]
    got_ops = [(s["op"], s.get("head")) for s in back]
    want = expected_ops(c, f)
    if got_ops != want:
        problems.append(f"backward steps {got_ops} != {want}")
        return worst, problems
    by_index = {s["index"]: s for s in doc["steps"]}
    for s in back:
        for t in s["tensors"]:
            where = f"step {s['index']} {s['op']}" + (f" head {s['head']}" if "head" in s else "") + f" {t['name']}"
            try:
                want_t = ex.tensor(s, t["name"])
            except KeyError:
                problems.append(f"{where}: autograd has no such gradient")
                continue
            got = tensor(t, where)
            if list(got.shape) != list(want_t.shape):
                problems.append(f"{where}: shape {list(got.shape)} != autograd's {list(want_t.shape)}")
                continue
            if torch.isnan(got).any() or torch.isinf(got).any():
                problems.append(f"{where}: holds NaN or infinity")
                continue
            err = ((got - want_t).abs() / want_t.abs().clamp(min=1)).max().item() if got.numel() else 0.0
            worst = max(worst, err)
            if err > TOLERANCE:
                problems.append(f"{where}: differs from autograd by {err:.2e} (> {TOLERANCE:.0e})")
            kind = STORAGE.get(s["op"])
            if t["name"] == "d_output":
                kind = "new"
            if kind and t["storage"] != kind:
                problems.append(f"{where}: storage {t['storage']}, expected {kind}")
            links = [l for l in t["from"] if "step" in l]
            if links and t["storage"] in ("view", "in_place"):
                src = next((u for u in by_index[links[0]["step"]]["tensors"] if u["name"] == links[0]["tensor"]), None)
                if src is None or src["buffer"] != t["buffer"]:
                    problems.append(f"{where}: a {t['storage']} must share the buffer of {links[0]}")
    return worst, problems


def wrong_backwards(doc):
    """(what, trace) pairs: the trace's values as each plausible wrong backward would give them."""
    def first(op, name):
        for s in doc["steps"]:
            if s["op"] == op:
                for t in s["tensors"]:
                    if t["name"] == name:
                        return s, t
        return None, None

    def edited(op, name, change):
        d = copy.deepcopy(doc)
        s, t = None, None
        for s2 in d["steps"]:
            if s2["op"] == op:
                t = next((u for u in s2["tensors"] if u["name"] == name), None)
                if t is not None:
                    s = s2
                    break
        if t is None:
            return None
        t["data"] = change(d, s, t)
        return d

    out = []
    _, a_t = first("softmax", "attn_weights")
    if a_t is not None:
        # softmax backward without the row's dot product: A * dA
        def no_dot(d, s, t):
            sb = next(u for u in d["steps"] if u["op"] == "softmax_back" and u.get("head") == s.get("head"))
            src = next(u for u in sb["tensors"] if u["name"] == "d_attn_scores")
            back = [u for u in d["steps"] if u["index"] < sb["index"] and u["op"] in ("context_back", "dropout_back")
                    and u.get("head") == s.get("head")][-1]
            da = next(u for u in back["tensors"] if u["name"] == "d_attn_weights")
            a = next(u for u in d["steps"] if u["op"] == "softmax" and u.get("head") == s.get("head"))["tensors"][-1]
            return [x * y for x, y in zip(a["data"], da["data"])]
        out.append(("softmax backward without the row dot product", edited("softmax_back", "d_attn_scores", no_dot)))
    # the mask lets gradient through: the masked cells keep the softmax's gradient of the raw
    # scores, here made visibly wrong by adding 1 where the forward masked
    def leak(d, s, t):
        mask = next(u for u in d["steps"] if u["op"] == "mask" and u.get("head") == s.get("head"))["tensors"][-1]
        return [v + (1.0 if m is None else 0.0) for v, m in zip(t["data"], mask["data"])]
    out.append(("the mask letting gradient through", edited("mask_back", "d_attn_scores", leak)))
    # d keys not summed over the group: only the first query head of each group
    def unsummed(d, s, t):
        prev = next(u for u in d["steps"] if u["op"] == "scores_back")
        dk = torch.tensor(next(u for u in prev["tensors"] if u["name"] == "d_keys")["data"]).view(
            next(u for u in prev["tensors"] if u["name"] == "d_keys")["shape"])
        r = dk.shape[1] // t["shape"][1]
        return dk[:, ::r].reshape(-1).tolist()
    out.append(("d keys not summed over a group", edited("repeat_kv_back", "d_keys", unsummed)))
    # the view's gradient read without the copy: the transposed gradient's memory read as rows
    def no_copy(d, s, t):
        prev = next(u for u in d["steps"] if u["op"] == "transpose_grad")
        src = next(u for u in prev["tensors"] if u["name"] == "d_queries")
        g = torch.tensor(src["data"]).view(src["shape"])  # [B, T, H, hd] as the transpose gives it
        return g.transpose(1, 2).contiguous().view(-1).tolist()  # its buffer's order, [B, H, T, hd]
    out.append(("the view's gradient read without the copy", edited("view_back", "d_queries", no_copy)))
    return [(what, d) for what, d in out if d is not None]


def main(argv):
    self_test = "--self-test" in argv
    paths = [a for a in argv if a != "--self-test"]
    if not paths:
        print(__doc__.strip().splitlines()[0])
        return 2
    status = 0
    for path in paths:
        try:
            with open(path) as fh:
                doc = json.load(fh)
            if doc.get("format") != "headsplit-trace" or doc.get("version") != 4:
                raise BadInput("not a headsplit-trace document of version 4")
            worst, problems = check(doc)
        except (OSError, ValueError, BadInput) as e:
            print(f"oracle_backward: {path}: {e}")
            return 2
        c = doc["config"]
        label = f"{path}: mode {c['mode']}, backend {c['backend']}"
        if problems:
            status = 1
            print(f"{label}: {len(problems)} problems")
            for p in problems[:20]:
                print("  " + p)
        else:
            print(f"{label}: every gradient equals autograd's, largest difference {worst:.2e}")
        if self_test:
            for what, bad in wrong_backwards(doc):
                _, found = check(bad)
                if not found:
                    print(f"{path}: self-test: {what} was NOT caught")
                    status = 1
                else:
                    print(f"{path}: self-test: {what} caught ({found[0][:90]})")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
