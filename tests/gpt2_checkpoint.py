"""GPT-2 checkpoints (issue 15).

Default: writes a random-weight GPT-2 folder in the Hugging Face layout (config.json,
model.safetensors, vocab.json, merges.txt; 2 layers, n_embd 16, 4 heads, a small byte-level
BPE), runs `headsplit trace --weights DIR --layer 1` on both backends and checks it against
GPT-2 written here in PyTorch: the token ids (a BPE written here), x (the real input of layer
1's attention: embeddings, block 0, ln_1 of block 1), the weights (c_attn and c_proj
transposed), and the layer's attention output. Then every step through the PyTorch oracle, and
broken folders that must be refused.

--shipped DIR: the same checks on the shipped tiny model (every layer, both backends, the
preset tiny-trained's sentence), that the preset runs that folder, and that the heads named in
docs/checkpoints.md attend as it says (on this script's own PyTorch forward).

usage: gpt2_checkpoint.py HEADSPLIT ORACLE.py WORKDIR [--shipped DIR]
"""
import json
import math
import os
import struct
import subprocess
import sys

import torch
import torch.nn.functional as F

D, H, LAYERS, POSITIONS = 16, 4, 2, 32
TEXT = "the cat sleeps on the mat, the cat's hat"


def bytes_to_unicode():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE = bytes_to_unicode()
MERGES = [("h", "e"), ("t", "he"), ("\u0120", "the"), ("a", "t"), ("c", "at"), ("\u0120", "cat"), ("e", "e"),
          ("s", "l"), ("sl", "ee"), ("slee", "p"), ("sleep", "s"), ("\u0120", "sleeps"), ("o", "n"), ("\u0120", "on"),
          ("m", "at"), ("\u0120", "mat"), ("'", "s"), ("h", "at"), ("\u0120", "hat")]


def vocabulary():
    vocab = {BYTE[b]: i for i, b in enumerate(sorted(BYTE))}
    for a, b in MERGES:
        vocab.setdefault(a + b, len(vocab))
    return vocab


def encode(text, vocab, merges):
    """GPT-2's encoder: pre-split (enough of its pattern for ASCII text), bytes to characters,
    merges by rank."""
    import re
    pieces = re.findall(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+", text)
    ranks = {m: i for i, m in enumerate(merges)}
    ids = []
    for piece in pieces:
        word = [BYTE[b] for b in piece.encode()]
        while len(word) > 1:
            pairs = [(ranks.get((word[i], word[i + 1]), math.inf), i) for i in range(len(word) - 1)]
            best = min(pairs)[0]
            if best == math.inf:
                break
            first, second = merges[best]
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == first and word[i + 1] == second:
                    out.append(first + second)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = out
        ids += [vocab[w] for w in word]
    return ids


def read_safetensors(path):
    """A safetensors file read here (header length, JSON header, little-endian data)."""
    import numpy
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", f"{name}: {e['dtype']}"
        a, b = e["data_offsets"]
        out[name] = torch.from_numpy(numpy.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").copy()).view(e["shape"])
    return out


def write_safetensors(path, tensors):
    header, data, offset = {}, b"", 0
    for name, t in tensors.items():
        raw = t.contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def gpt2_to_layer(w, ids, layer, D, H, eps=1e-5, ablate=None, act=None):
    """x for layer `layer`'s attention, that attention's output and its softmax [H, T, T], by
    GPT-2's definition. ablate=(layer, head): that head's output is replaced by its mean over
    the positions (it then says nothing about which token is where). act: the MLP's
    activation (default GPT-2's gelu_new, the tanh GELU); the MLP's width is c_fc's."""
    act = act or (lambda t: F.gelu(t, approximate="tanh"))
    T = len(ids)
    h = w["wte.weight"][ids] + w["wpe.weight"][:T]
    probs = []

    def attention(i, a):
        qkv = a @ w[f"h.{i}.attn.c_attn.weight"] + w[f"h.{i}.attn.c_attn.bias"]
        q, k, v = (t.view(T, H, D // H).transpose(0, 1) for t in qkv.split(D, dim=-1))
        s = (q @ k.transpose(1, 2)) / math.sqrt(D // H)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -math.inf)
        probs.append(torch.softmax(s, dim=-1))
        ctx = probs[-1] @ v
        if ablate and ablate[0] == i:
            ctx[ablate[1]] = ctx[ablate[1]].mean(dim=0)
        ctx = ctx.transpose(0, 1).reshape(T, D)
        return ctx @ w[f"h.{i}.attn.c_proj.weight"] + w[f"h.{i}.attn.c_proj.bias"]

    for i in range(layer):
        a = F.layer_norm(h, (D,), w[f"h.{i}.ln_1.weight"], w[f"h.{i}.ln_1.bias"], eps)
        h = h + attention(i, a)
        m = F.layer_norm(h, (D,), w[f"h.{i}.ln_2.weight"], w[f"h.{i}.ln_2.bias"], eps)
        f = act(m @ w[f"h.{i}.mlp.c_fc.weight"] + w[f"h.{i}.mlp.c_fc.bias"])
        h = h + f @ w[f"h.{i}.mlp.c_proj.weight"] + w[f"h.{i}.mlp.c_proj.bias"]
    x = F.layer_norm(h, (D,), w[f"h.{layer}.ln_1.weight"], w[f"h.{layer}.ln_1.bias"], eps)
    return x, attention(layer, x), probs[-1]


def check_layer(headsplit, oracle, work, args, w, D, H, ids, layer, backend, act=None):
    """`headsplit trace ARGS` on `backend` against GPT-2's layer `layer`: token ids, x, the
    weights, the output, and every step through the oracle. Returns (problems, trace)."""
    x, attn_out, _ = gpt2_to_layer(w, ids, layer, D, H, act=act)
    problems = []
    out = f"{work}/trace_{backend}_{layer}.json"
    subprocess.run([headsplit, "trace"] + args + ["--backend", backend, "--json", out], check=True,
                   stdout=subprocess.DEVNULL)
    doc = json.load(open(out))
    cfg = doc["config"]
    where = f"{backend}, layer {layer}"
    if cfg["token_ids"] != ids:
        problems.append(f"{where}: token ids {cfg['token_ids']}, GPT-2's BPE gives {ids}")
    if [cfg["d_in"], cfg["d_out"], cfg["heads"], cfg["qkv_bias"], cfg["out_proj"]] != [D, D, H, True, True]:
        problems.append(f"{where}: sizes {cfg['d_in']}, {cfg['d_out']}, {cfg['heads']} heads")
    if cfg["checkpoint"]["layer"] != layer:
        problems.append(f"{where}: the trace says layer {cfg['checkpoint']['layer']}")
    got_x = torch.tensor(doc["inputs"]["x"]["data"]).view(len(ids), D)
    dx = (got_x - x).abs().max().item()
    if not dx <= 1e-4:
        problems.append(f"{where}: x differs from the layer's input by {dx:.3g}")
    c_attn = w[f"h.{layer}.attn.c_attn.weight"]
    for k, name in enumerate(("w_query", "w_key", "w_value")):
        got = torch.tensor(doc["weights"][name]["data"]).view(D, D)
        if not torch.equal(got, c_attn[:, k * D:(k + 1) * D].T.contiguous()):
            problems.append(f"{where}: {name} is not c_attn's columns {k * D}..{(k + 1) * D - 1}, transposed")
    if not torch.equal(torch.tensor(doc["weights"]["w_out"]["data"]).view(D, D), w[f"h.{layer}.attn.c_proj.weight"].T):
        problems.append(f"{where}: w_out is not c_proj's weight transposed")
    out_rec = next(t for t in doc["steps"][-1]["tensors"] if t["name"] == "output")
    d_out = (torch.tensor(out_rec["data"]).view(len(ids), D) - attn_out).abs().max().item()
    if not d_out <= 1e-4:
        problems.append(f"{where}: the attention output differs from GPT-2's by {d_out:.3g}")
    r = subprocess.run([sys.executable, oracle, out], capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"{where}: the oracle: {r.stdout.strip()[-300:]}")
    print(f"gpt2 checkpoint on {where}: {len(ids)} tokens, x within {dx:.2g}, output within {d_out:.2g}")
    return problems, doc


def main(headsplit, oracle, work):
    torch.manual_seed(15)
    vocab = vocabulary()
    V = len(vocab)
    w = {"wte.weight": torch.randn(V, D) * 0.5, "wpe.weight": torch.randn(POSITIONS, D) * 0.2}
    for i in range(LAYERS):
        w[f"h.{i}.ln_1.weight"] = 1 + 0.1 * torch.randn(D)
        w[f"h.{i}.ln_1.bias"] = 0.1 * torch.randn(D)
        w[f"h.{i}.attn.c_attn.weight"] = torch.randn(D, 3 * D) * 0.4
        w[f"h.{i}.attn.c_attn.bias"] = torch.randn(3 * D) * 0.1
        w[f"h.{i}.attn.c_proj.weight"] = torch.randn(D, D) * 0.3
        w[f"h.{i}.attn.c_proj.bias"] = torch.randn(D) * 0.1
        w[f"h.{i}.ln_2.weight"] = 1 + 0.1 * torch.randn(D)
        w[f"h.{i}.ln_2.bias"] = 0.1 * torch.randn(D)
        w[f"h.{i}.mlp.c_fc.weight"] = torch.randn(D, 4 * D) * 0.3
        w[f"h.{i}.mlp.c_fc.bias"] = torch.randn(4 * D) * 0.1
        w[f"h.{i}.mlp.c_proj.weight"] = torch.randn(4 * D, D) * 0.2
        w[f"h.{i}.mlp.c_proj.bias"] = torch.randn(D) * 0.1
    w["ln_f.weight"], w["ln_f.bias"] = torch.ones(D), torch.zeros(D)
    write_safetensors(f"{work}/model.safetensors", w)
    json.dump({"n_embd": D, "n_head": H, "n_layer": LAYERS, "n_positions": POSITIONS, "vocab_size": V,
               "layer_norm_epsilon": 1e-5, "model_type": "gpt2"}, open(f"{work}/config.json", "w"))
    json.dump(vocab, open(f"{work}/vocab.json", "w"), ensure_ascii=False)
    with open(f"{work}/merges.txt", "w") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES))

    ids = encode(TEXT, vocab, MERGES)
    problems = []
    for backend in ("cpu", "gl"):
        problems += check_layer(headsplit, oracle, work, ["--weights", work, "--layer", "1", "--text", TEXT],
                                w, D, H, ids, 1, backend)[0]
    problems += config_keys(headsplit, oracle, work, w, ids)
    problems += refusals(headsplit, work, w, vocab)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


# What docs/checkpoints.md says of the shipped model's heads on the preset's sentence ("The cat sat on
# the mat, and the dog sat on the cat.", tokens 0 .. 14), as (layer, head, pattern, at least):
# the head's average weight, over the queries from the third token on, on the token before
# ("prev") or the first token ("first"); over the queries whose token came earlier, on the
# token after each earlier copy ("induction"); "spread" is the row's entropy over a flat
# row's (1: attends to everything alike); ("key", j, a, b) is the average weight on token j of
# the queries a .. b-1.
DOCUMENTED_HEADS = [
    (0, 3, "prev", 0.25),                                     # the token before
    (0, 0, "first", 0.55), (2, 3, "first", 0.55),             # the first token
    (3, 2, "induction", 0.45),                                # what followed the word last time
    (3, 2, ("key", 4, 11, 12), 0.5),                          # the 2nd " on": " the" (after the 1st " on")
    (3, 2, ("key", 2, 13, 14), 0.7),                          # the 2nd " cat": " sat" (after the 1st " cat")
    (0, 2, "spread", 0.8), (1, 3, "spread", 0.75),            # broad
]


def head_measures(probs, ids):
    """prev, first, same, induction, spread of every head of one layer's softmax [H, T, T]."""
    H, T, _ = probs.shape
    out = {k: torch.zeros(H) for k in ("prev", "first", "same", "induction", "spread")}
    repeated = 0
    for t in range(2, T):
        row = probs[:, t, :t + 1]
        out["prev"] += row[:, t - 1] / (T - 2)
        out["first"] += row[:, 0] / (T - 2)
        out["spread"] += -(row.clamp_min(1e-12).log() * row).sum(-1) / math.log(t + 1) / (T - 2)
        earlier = [j for j in range(t) if ids[j] == ids[t]]
        if earlier:
            out["same"] += row[:, earlier].sum(-1)
            out["induction"] += row[:, [j + 1 for j in earlier]].sum(-1)
            repeated += 1
    out["same"] /= max(repeated, 1)
    out["induction"] /= max(repeated, 1)
    return out


def shipped(headsplit, oracle, work, folder):
    cfg = json.load(open(f"{folder}/config.json"))
    D, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    eps = cfg["layer_norm_epsilon"]
    assert eps == 1e-5, eps
    w = read_safetensors(f"{folder}/model.safetensors")
    vocab = json.load(open(f"{folder}/vocab.json", encoding="utf-8"))
    lines = open(f"{folder}/merges.txt", encoding="utf-8").read().splitlines()
    merges = [tuple(line.split(" ")) for line in lines[1:] if line]
    problems = []
    size = sum(os.path.getsize(f"{folder}/{n}") for n in os.listdir(folder))
    if size > 5 * 2 ** 20:
        problems.append(f"{folder} holds {size} bytes, over the 5 MB the issue allows")

    # The preset's run: its sentence (the pieces put back together), its layer, its folder.
    problems_preset, doc = check_layer(headsplit, oracle, work, ["--preset", "tiny-trained"], w, D, H,
                                       *preset_ids_and_layer(headsplit, work, vocab, merges))
    problems += problems_preset
    if os.path.realpath(doc["config"]["checkpoint"]["dir"]) != os.path.realpath(folder):
        problems.append(f"the preset runs {doc['config']['checkpoint']['dir']}, not {folder}")
    text = "".join(doc["config"]["tokens"])
    ids = encode(text, vocab, merges)
    for layer in range(L):
        for backend in ("cpu", "gl"):
            problems += check_layer(headsplit, oracle, work, ["--weights", folder, "--layer", str(layer), "--text", text],
                                    w, D, H, ids, layer, backend)[0]
    for layer, head, pattern, least in DOCUMENTED_HEADS:
        probs = gpt2_to_layer(w, ids, layer, D, H)[2]
        if isinstance(pattern, tuple):
            _, j, a, b = pattern
            got = probs[head, a:b, j].mean().item()
        else:
            got = head_measures(probs, ids)[pattern][head].item()
        print(f"tiny model, layer {layer} head {head}: {pattern} {got:.2f} (docs/checkpoints.md says at least {least})")
        if not got >= least:
            problems.append(f"layer {layer} head {head}: {pattern} is {got:.2f} on {text!r}, "
                            f"docs/checkpoints.md says >= {least}")
    problems += induction_needs_previous_token(w, ids, D, H, text)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


# The circuit of docs/checkpoints.md: head 3.2 finds what followed the earlier copy of a token
# through head 0.3, which tells each position its previous token. With 0.3's output averaged over the
# positions, 3.2's induction weight must collapse; with any other head of layers 0-2 averaged,
# it must stay.
INDUCTION, PREVIOUS = (3, 2), (0, 3)


def induction_needs_previous_token(w, ids, D, H, text):
    def induction(ablate):
        probs = gpt2_to_layer(w, ids, INDUCTION[0], D, H, ablate=ablate)[2]
        return head_measures(probs, ids)["induction"][INDUCTION[1]].item()

    problems = []
    intact = induction(None)
    for layer in range(INDUCTION[0]):
        for head in range(H):
            got = induction((layer, head))
            if (layer, head) == PREVIOUS:
                print(f"tiny model: head {INDUCTION[0]}.{INDUCTION[1]}'s induction {intact:.2f}, {got:.2f} "
                      f"with head {layer}.{head} averaged out")
                if not got < 0.2:
                    problems.append(f"head {layer}.{head} averaged out leaves induction {got:.2f} on {text!r}, "
                                    f"docs/checkpoints.md says it collapses (< 0.2)")
            elif not got > 0.4:
                problems.append(f"head {layer}.{head} averaged out drops induction to {got:.2f}, "
                                f"docs/checkpoints.md says only head {PREVIOUS[0]}.{PREVIOUS[1]} matters (> 0.4)")
    return problems


def preset_ids_and_layer(headsplit, work, vocab, merges):
    """The preset's token ids by this script's BPE (from its text, read off a first run) and
    its layer."""
    out = f"{work}/preset.json"
    subprocess.run([headsplit, "trace", "--preset", "tiny-trained", "--json", out], check=True, stdout=subprocess.DEVNULL)
    doc = json.load(open(out))
    return encode("".join(doc["config"]["tokens"]), vocab, merges), doc["config"]["checkpoint"]["layer"], "cpu"


def config_keys(headsplit, oracle, work, w, ids):
    """config.json's keys that change what a block computes: followed as Hugging Face's GPT-2
    follows them (checked against this script's PyTorch forward with the same change), or the
    folder refused naming the key and its value."""
    import shutil
    problems = []

    def folder(name, change_config, weights=None):
        d = f"{work}/keys_{name}"
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for f in ("vocab.json", "merges.txt"):
            shutil.copy(f"{work}/{f}", d)
        cfg = json.load(open(f"{work}/config.json"))
        change_config(cfg)
        json.dump(cfg, open(f"{d}/config.json", "w"))
        write_safetensors(f"{d}/model.safetensors", weights or w)
        return d

    runs = [("relu", "relu", F.relu), ("gelu", "gelu", F.gelu), ("quick_gelu", "quick_gelu", lambda t: t * torch.sigmoid(1.702 * t)),
            ("silu", "silu", F.silu)]
    for name, act_name, act in runs:
        d = folder(name, lambda cfg: cfg.update(activation_function=act_name))
        problems += check_layer(headsplit, oracle, d, ["--weights", d, "--layer", "1", "--text", TEXT], w, D, H, ids, 1,
                                "cpu", act=act)[0]
        # The activation matters: the same folder read with GPT-2's own differs.
        x_usual, _, _ = gpt2_to_layer(w, ids, 1, D, H)
        x_this, _, _ = gpt2_to_layer(w, ids, 1, D, H, act=act)
        apart = (x_usual - x_this).abs().max().item()
        if apart < 3e-4:  # three times the tolerance x is checked to
            problems.append(f"activation_function {act_name}: the test's weights do not tell it from gelu_new ({apart:.2g})")
        print(f"  activation_function {act_name}: x differs from gelu_new's by {apart:.2g}")
    # n_inner: an MLP 24 wide instead of 4 x 16.
    narrow = dict(w)
    for i in range(LAYERS):
        narrow[f"h.{i}.mlp.c_fc.weight"] = w[f"h.{i}.mlp.c_fc.weight"][:, :24].contiguous()
        narrow[f"h.{i}.mlp.c_fc.bias"] = w[f"h.{i}.mlp.c_fc.bias"][:24].contiguous()
        narrow[f"h.{i}.mlp.c_proj.weight"] = w[f"h.{i}.mlp.c_proj.weight"][:24].contiguous()
    d = folder("n_inner", lambda cfg: cfg.update(n_inner=24), narrow)
    problems += check_layer(headsplit, oracle, d, ["--weights", d, "--layer", "1", "--text", TEXT], narrow, D, H, ids, 1, "cpu")[0]

    def refused(name, change, want):
        d = folder(name, change)
        r = subprocess.run([headsplit, "trace", "--weights", d, "--layer", "1"], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or want not in lines[0]:
            problems.append(f"config.json {name}: exit {r.returncode}, said {r.stderr.strip()[:300]!r}, expected {want!r}")

    refused("unknown_activation", lambda cfg: cfg.update(activation_function="gelu_newer"),
            'activation_function "gelu_newer" is not one HeadSplit runs; use one of gelu_new')
    refused("activation_number", lambda cfg: cfg.update(activation_function=3), "activation_function 3 is not one")
    refused("unscaled", lambda cfg: cfg.update(scale_attn_weights=False),
            "scale_attn_weights is false: its attention scores are not scaled at all")
    refused("by_layer", lambda cfg: cfg.update(scale_attn_by_inverse_layer_idx=True),
            "scale_attn_by_inverse_layer_idx is true: its attention scores are also divided")
    refused("inner_text", lambda cfg: cfg.update(n_inner="wide"), "n_inner is missing or not a whole number")
    print(f"gpt2 checkpoint: {len(runs)} activations and n_inner followed; 5 config keys refused")
    return problems


def refusals(headsplit, work, w, vocab):
    """Broken folders and options: exit 2, one line on stderr naming what is wrong, no file left."""
    import os
    import shutil
    problems = []

    def variant(name, change):
        d = f"{work}/{name}"
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(work, d, ignore=shutil.ignore_patterns("trace_*", "bad_*"))
        change(d)
        return d

    def refused(args, want):
        out = f"{work}/refused.json"
        r = subprocess.run([headsplit, "trace", "--json", out] + args, capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or want not in lines[0] or os.path.exists(out):
            problems.append(f"{' '.join(args)[-80:]}: exit {r.returncode}, said {r.stderr.strip()[:300]!r}, "
                            f"expected one line with {want!r}")

    def truncate(d):
        size = os.path.getsize(f"{d}/model.safetensors")
        with open(f"{d}/model.safetensors", "r+b") as f:
            f.truncate(size - 10)

    def drop_tensor(d):
        rest = {k: v for k, v in w.items() if k != "h.1.attn.c_proj.bias"}
        write_safetensors(f"{d}/model.safetensors", rest)

    def wider(d):
        cfg = json.load(open(f"{d}/config.json"))
        cfg["n_embd"] = 32
        json.dump(cfg, open(f"{d}/config.json", "w"))

    def no_merges(d):
        open(f"{d}/merges.txt", "w").write("#version: 0.2\n")

    def huge_header(d):
        with open(f"{d}/model.safetensors", "r+b") as f:
            f.write(struct.pack("<Q", 1 << 40))

    refused(["--weights", f"{work}/nowhere"], "not found; --weights takes a Hugging Face GPT-2 folder")
    refused(["--weights", work, "--layer", "2"], "--layer 2 is not a layer of this checkpoint; use 0 to 1")
    refused(["--weights", work, "--heads", "2"], "--heads cannot be used with --weights")
    refused(["--layer", "1"], "give --weights DIR too")
    refused(["--weights", variant("bad_truncated", truncate)], "(a truncated file?)")
    refused(["--weights", variant("bad_missing", drop_tensor), "--layer", "1"], 'no tensor "h.1.attn.c_proj.bias"')
    refused(["--weights", variant("bad_wider", wider)], "expected [")
    refused(["--weights", variant("bad_merges", no_merges)], "merges.txt: no merges")
    refused(["--weights", variant("bad_header", huge_header)], "the header claims 1099511627776 bytes")

    # Readers bounded in entries, not only bytes: more merges than tokens (each merge makes
    # one), a vocabulary of more than 2^20 tokens (both under the 64 MiB a file may have).
    def many_merges(d):
        with open(f"{d}/merges.txt", "a") as f:
            f.write("".join(f"q{k} r{k}\n" for k in range(len(vocab) + 1)))

    def many_tokens(d):
        big = dict(vocab)
        big.update({f"x{k}": len(vocab) + k for k in range((1 << 20) + 1 - len(vocab))})
        json.dump(big, open(f"{d}/vocab.json", "w"))

    refused(["--weights", variant("bad_many_merges", many_merges)], "merges.txt: more merges than the")
    refused(["--weights", variant("bad_many_tokens", many_tokens)], "vocab.json: 1048577 tokens, more than the 1048576")
    print(f"gpt2 checkpoint: 11 broken folders and options refused")
    return problems


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[4] == "--shipped":
        sys.exit(shipped(*sys.argv[1:4], sys.argv[5]))
    sys.exit(main(*sys.argv[1:4]))
