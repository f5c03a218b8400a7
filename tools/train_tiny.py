#!/usr/bin/python3
"""Trains HeadSplit's tiny GPT-2 (the `tiny-trained` preset) and writes it as a Hugging Face
GPT-2 folder: config.json, model.safetensors, vocab.json, merges.txt, plus training.json (the
settings, the losses, the time taken and what each head attends to).

Everything comes from this machine: the corpus is the English quotations of Debian's
`fortunes` package (fortune-mod, BSD licence: /usr/share/doc/fortunes/copyright), the
byte-level BPE vocabulary is trained here on it, and the model is a GPT-2 (pre-LayerNorm
blocks, tanh GELU, learned positions, tied embeddings) trained here with Debian's PyTorch on
the CPU. Seeded: the same seed, steps, torch version and thread count give the same bytes.

usage: /usr/bin/python3 tools/train_tiny.py [--out assets/tiny-gpt2] [--steps 6000] [--seed 15]
       (apt-get install fortunes first; `make tiny-model` does both)
"""
import argparse
import collections
import hashlib
import json
import math
import os
import re
import struct
import sys
import time

import torch
import torch.nn.functional as F

# The fortune files read: quotations and jokes in plain English prose. Left out: pictures
# (ascii-art), other languages (translate-me), program code (perl), word salad (zippy), and
# the files of jokes about groups of people (ethnic, men-women) and about drugs.
FILES = ["art", "computers", "cookie", "definitions", "education", "food", "fortunes", "goedel", "humorists",
         "kids", "law", "linux", "literature", "love", "magic", "medicine", "miscellaneous", "news", "paradoxum",
         "people", "pets", "platitudes", "riddles", "science", "songs-poems", "sports", "wisdom", "work"]
EOT = "<|endoftext|>"

# GPT-2's pre-split, in Python's re: letters are [^\W\d_], digits \d, and the rest of \w (the
# underscore) counts as punctuation, as it does in GPT-2's \p{L} / \p{N} classes.
PRESPLIT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")


def byte_characters():
    """GPT-2's map from the 256 byte values to printable characters, in its vocabulary order."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    order, chars = printable[:], [chr(b) for b in printable]
    for b in range(256):
        if b not in printable:
            order.append(b)
            chars.append(chr(256 + len(order) - len(printable) - 1))
    return dict(zip(order, chars))


BYTE = byte_characters()


def read_corpus(folder):
    """One document per fortune: ASCII only, whitespace runs folded to one space."""
    docs = []
    for name in FILES:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            sys.exit(f"train_tiny: {path} is missing; install Debian's fortunes package (apt-get install fortunes)")
        with open(path, encoding="utf-8", errors="replace") as f:
            for entry in re.split(r"^%\s*$", f.read(), flags=re.M):
                text = " ".join(entry.split())
                if len(text) >= 20 and text.isascii():
                    docs.append(text)
    return docs


def train_bpe(docs, merges_wanted):
    """Byte-level BPE: start from bytes, merge the most frequent adjacent pair inside pre-split
    pieces, again and again (ties go to the larger pair, so the result is deterministic)."""
    counts = collections.Counter(p for d in docs for p in PRESPLIT.findall(d))
    words = [[BYTE[b] for b in piece.encode()] for piece in counts]
    freq = list(counts.values())
    pairs, holders = collections.Counter(), collections.defaultdict(set)
    for i, w in enumerate(words):
        for pair in zip(w, w[1:]):
            pairs[pair] += freq[i]
            holders[pair].add(i)
    merges = []
    while len(merges) < merges_wanted and pairs:
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        for i in holders.pop(best):
            w = words[i]
            for pair in zip(w, w[1:]):
                pairs[pair] -= freq[i]
                if pairs[pair] <= 0:
                    del pairs[pair]
            words[i] = merge_pair(w, best)
            for pair in zip(words[i], words[i][1:]):
                pairs[pair] += freq[i]
                holders[pair].add(i)
    return merges


def merge_pair(word, pair):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


class Encoder:
    """GPT-2's encoding with this script's merges: pre-split, bytes to characters, then the
    lowest-ranked pair merged first until none is left."""

    def __init__(self, merges):
        self.ranks = {pair: r for r, pair in enumerate(merges)}
        self.vocab = {BYTE[b]: i for i, b in enumerate(BYTE)}
        for a, b in merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self.vocab[EOT] = len(self.vocab)
        self.cache = {}

    def piece(self, piece):
        if piece not in self.cache:
            word = [BYTE[b] for b in piece.encode()]
            while len(word) > 1:
                pair = min(zip(word, word[1:]), key=lambda p: self.ranks.get(p, math.inf))
                if pair not in self.ranks:
                    break
                word = merge_pair(word, pair)
            self.cache[piece] = [self.vocab[w] for w in word]
        return self.cache[piece]

    def encode(self, text):
        return [i for p in PRESPLIT.findall(text) for i in self.piece(p)]


def init_weights(cfg, gen):
    """GPT-2's initialisation, under the names of a Hugging Face GPT2Model."""
    D, L = cfg["n_embd"], cfg["n_layer"]

    def normal(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std

    # The position table starts as sines and cosines (frequencies 1 to 1/10000, as in the
    # original transformer's), the size of a token row: the row of position t-1 is then a fixed
    # rotation of row t's, so a head can learn "the token before me" early; it is trained on
    # like any weight. GPT-2's own start (noise of std 0.01) left no previous-token head here.
    pos = torch.arange(cfg["n_positions"], dtype=torch.float32)[:, None]
    freq = torch.pow(10000.0, -torch.arange(0, D, 2, dtype=torch.float32) / D)
    table = torch.zeros(cfg["n_positions"], D)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    w = {"wte.weight": normal(cfg["vocab_size"], D), "wpe.weight": table * 0.02 * math.sqrt(2.0)}
    for i in range(L):
        p = f"h.{i}."
        w[p + "ln_1.weight"], w[p + "ln_1.bias"] = torch.ones(D), torch.zeros(D)
        w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"] = normal(D, 3 * D), torch.zeros(3 * D)
        w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"] = normal(D, D, std=0.02 / math.sqrt(2 * L)), torch.zeros(D)
        w[p + "ln_2.weight"], w[p + "ln_2.bias"] = torch.ones(D), torch.zeros(D)
        w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"] = normal(D, 4 * D), torch.zeros(4 * D)
        w[p + "mlp.c_proj.weight"] = normal(4 * D, D, std=0.02 / math.sqrt(2 * L))
        w[p + "mlp.c_proj.bias"] = torch.zeros(D)
    w["ln_f.weight"], w["ln_f.bias"] = torch.ones(D), torch.zeros(D)
    for t in w.values():
        t.requires_grad_(True)
    return w


def forward(w, cfg, ids, dropout=0.0, gen=None, keep_attention=False):
    """GPT-2 on a batch of token ids [B, T]: the logits [B, T, V], and with keep_attention the
    softmax of every layer [L][B, H, T, T]."""
    B, T = ids.shape
    D, H = cfg["n_embd"], cfg["n_head"]
    eps = cfg["layer_norm_epsilon"]
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    kept = []

    def drop(t):
        if dropout == 0.0:
            return t
        keep = torch.rand(t.shape, generator=gen) >= dropout
        return t * keep / (1 - dropout)

    h = drop(F.embedding(ids, w["wte.weight"]) + w["wpe.weight"][:T])
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        a = F.layer_norm(h, (D,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in qkv.split(D, dim=-1))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(D // H)
        weights = torch.softmax(scores.masked_fill(causal, -math.inf), dim=-1)
        if keep_attention:
            kept.append(weights.detach())
        ctx = (drop(weights) @ v).transpose(1, 2).reshape(B, T, D)
        h = h + drop(ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"])
        m = F.layer_norm(h, (D,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        f = F.gelu(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
        h = h + drop(f @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"])
    h = F.layer_norm(h, (D,), w["ln_f.weight"], w["ln_f.bias"], eps)
    return h @ w["wte.weight"].T, kept


def loss_on(w, cfg, data, starts, block):
    with torch.no_grad():
        xs = torch.stack([data[s:s + block] for s in starts])
        ys = torch.stack([data[s + 1:s + 1 + block] for s in starts])
        logits, _ = forward(w, cfg, xs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ys.reshape(-1)).item()


def head_patterns(w, cfg, enc, docs, max_docs=400):
    """What each head does on held-out fortunes, averaged over query positions t >= 2:
    prev: the weight on token t-1; first: the weight on token 0; same: on queries whose token
    occurred earlier, the weight on those earlier copies; spread: the entropy of the row over
    the entropy of a flat row (1 = attends to everything alike)."""
    L, H = cfg["n_layer"], cfg["n_head"]
    sums = torch.zeros(4, L, H)
    counts = torch.zeros(2)  # queries, queries with an earlier copy
    for doc in docs[:max_docs]:
        ids = enc.encode(doc)[:cfg["n_positions"]]
        T = len(ids)
        if T < 4:
            continue
        _, att = forward(w, cfg, torch.tensor([ids]), keep_attention=True)
        att = torch.stack([a[0] for a in att])  # [L, H, T, T]
        ids_t = torch.tensor(ids)
        same = (ids_t[:, None] == ids_t[None, :]) & torch.ones(T, T, dtype=torch.bool).tril(-1)
        for t in range(2, T):
            row = att[:, :, t, :t + 1]
            sums[0] += row[:, :, t - 1]
            sums[1] += row[:, :, 0]
            ent = -(row.clamp_min(1e-12).log() * row).sum(-1)
            sums[3] += ent / math.log(t + 1)
            counts[0] += 1
            if same[t].any():
                sums[2] += row[:, :, :t + 1][:, :, same[t, :t + 1]].sum(-1)
                counts[1] += 1
    means = {"prev": sums[0] / counts[0], "first": sums[1] / counts[0], "same": sums[2] / counts[1].clamp_min(1),
             "spread": sums[3] / counts[0]}
    return {k: [[round(v[l, h].item(), 3) for h in range(H)] for l in range(L)] for k, v in means.items()}


def copy_heads(w, cfg, data, starts, n=32):
    """On held-out text made to repeat (n tokens, then the same n again): the strongest head at
    each of "the previous token" (weight on t-1), "the same token earlier" (on t-n) and
    "what followed it" (on t-n+1, an induction head), over the second copy's queries, and the
    loss on the first copy and on the second."""
    with torch.no_grad():
        xs = torch.stack([torch.cat([data[s:s + n], data[s:s + n + 1]]) for s in starts])
        logits, att = forward(w, cfg, xs[:, :-1], keep_attention=True)
        ce = F.cross_entropy(logits.transpose(1, 2), xs[:, 1:], reduction="none").mean(0)
        att = torch.stack(att).mean(1)  # [L, H, T, T] over the batch
        q = torch.arange(n + 1, 2 * n)
        found = {}
        for name, back in (("prev", 1), ("same", n), ("induction", n - 1)):
            score = att[:, :, q, q - back].mean(-1)
            best = int(score.argmax())
            found[name] = (best // cfg["n_head"], best % cfg["n_head"], round(score.flatten()[best].item(), 3))
        return found, round(ce[:n - 1].mean().item(), 3), round(ce[n:2 * n - 1].mean().item(), 3)


def write_safetensors(path, tensors):
    """The safetensors layout: an 8-byte little-endian header length, the JSON header, then the
    little-endian float32 data in header order. Written to a temporary name, then renamed."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        raw = t.detach().contiguous().to(torch.float32).numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path + ".part", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    os.replace(path + ".part", path)


def write_text(path, text):
    with open(path + ".part", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".part", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets",
                                                  "tiny-gpt2"))
    ap.add_argument("--corpus", default="/usr/share/games/fortunes")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--positions", type=int, default=128, help="n_positions, and the training window")
    ap.add_argument("--batch", type=int, default=16, help="windows per step")
    ap.add_argument("--merges", type=int, default=1791, help="BPE merges (vocabulary = 256 bytes + merges + 1)")
    ap.add_argument("--repeat", type=float, default=0.5,
                    help="the share of windows in which a passage comes twice (0 turns it off)")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    started = time.time()

    docs = read_corpus(args.corpus)
    order = torch.randperm(len(docs), generator=torch.Generator().manual_seed(args.seed)).tolist()
    docs = [docs[i] for i in order]
    held = max(1, len(docs) // 50)
    train_docs, val_docs = docs[held:], docs[:held]
    merges = train_bpe(train_docs, args.merges)
    enc = Encoder(merges)
    eot = enc.vocab[EOT]

    def stream(ds):
        """The documents end to end, each followed by <|endoftext|>, and where each begins."""
        ids, starts = [], []
        for d in ds:
            starts.append(len(ids))
            ids += enc.encode(d) + [eot]
        return torch.tensor(ids), torch.tensor(starts)

    (train, train_starts), (val, val_doc_starts) = stream(train_docs), stream(val_docs)
    print(f"corpus: {len(docs)} fortunes, {sum(map(len, docs))} characters; {len(enc.vocab)} tokens in the "
          f"vocabulary; {len(train)} training and {len(val)} held-out tokens "
          f"({time.time() - started:.0f} s)", flush=True)

    cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": len(enc.vocab),
           "n_positions": args.positions, "n_ctx": args.positions, "n_embd": 128, "n_layer": 4, "n_head": 4, "n_inner": None,
           "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "bos_token_id": eot,
           "eos_token_id": eot, "tie_word_embeddings": True}
    # No dropout: dropping attention weights teaches heads to spread out. The price is some
    # overfitting late in the run (about 19 passes over the corpus).
    block, batch, peak_lr, warmup, dropout = cfg["n_positions"], args.batch, 3e-3, 150, 0.0
    gen = torch.Generator().manual_seed(args.seed)
    w = init_weights(cfg, gen)
    # Weight decay on the blocks' matrices only, not on the embeddings or the norms.
    decayed = [t for n, t in w.items() if t.dim() == 2 and not n.startswith("w")]
    others = [t for n, t in w.items() if t.dim() != 2 or n.startswith("w")]
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.05}, {"params": others, "weight_decay": 0.0}],
                            lr=peak_lr, betas=(0.9, 0.95))
    # Every window starts where a fortune starts, as a sentence typed in the app starts at
    # position 0 (it runs on past the fortune's end into the next ones).
    train_starts = train_starts[train_starts < len(train) - block - 1]
    val_starts = val_doc_starts[val_doc_starts < len(val) - block - 1][:64].tolist()
    # Some windows hold a passage twice: its first 16 to 64 tokens, again, then the text goes
    # on. Predicting the second copy pays a head that looks at the previous token and one, a
    # layer up, that finds the earlier copy; plain fortunes rarely repeat enough for either to
    # form in a few thousand steps. The passage's length varies so that no fixed offset works.
    def window(s):
        if torch.rand(1, generator=gen).item() >= args.repeat:
            return train[s:s + block + 1]
        n = int(torch.randint(16, 65, (1,), generator=gen))  # 16 to 64
        return torch.cat([train[s:s + n], train[s:s + block + 1 - n]])

    log = []
    train_started = time.time()
    for step in range(1, args.steps + 1):
        lr = peak_lr * min(step / warmup, 0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps))))
        lr = max(lr, peak_lr * 0.1)
        for g in opt.param_groups:
            g["lr"] = lr
        starts = train_starts[torch.randint(0, len(train_starts), (batch,), generator=gen)]
        windows = [window(s) for s in starts.tolist()]
        xs = torch.stack([t[:-1] for t in windows])
        ys = torch.stack([t[1:] for t in windows])
        logits, _ = forward(w, cfg, xs, dropout=dropout, gen=gen)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ys.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        opt.step()
        if step % 250 == 0 or step == args.steps:
            v = loss_on(w, cfg, val, val_starts, block)
            heads, first_copy, second_copy = copy_heads(w, cfg, val, val_starts[:32])
            log.append({"step": step, "train_loss": round(loss.item(), 4), "val_loss": round(v, 4),
                        "repeat_loss": [first_copy, second_copy], "copy_heads": heads})
            print(f"step {step}: training loss {loss.item():.3f}, held-out loss {v:.3f}, repeated text "
                  f"{first_copy:.2f} then {second_copy:.2f}; best heads " +
                  ", ".join(f"{k} L{l}H{h} {x:.2f}" for k, (l, h, x) in heads.items()) +
                  f" ({time.time() - train_started:.0f} s)", flush=True)
    train_seconds = time.time() - train_started

    os.makedirs(args.out, exist_ok=True)
    tensors = {n: t.detach() for n, t in w.items()}
    write_safetensors(os.path.join(args.out, "model.safetensors"), tensors)
    write_text(os.path.join(args.out, "config.json"), json.dumps(cfg, indent=2) + "\n")
    write_text(os.path.join(args.out, "vocab.json"), json.dumps(enc.vocab, ensure_ascii=False) + "\n")
    write_text(os.path.join(args.out, "merges.txt"), "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    patterns = head_patterns(w, cfg, enc, val_docs)
    with open(os.path.join(args.out, "model.safetensors"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    report = {"seed": args.seed, "steps": args.steps, "batch": batch, "block": block, "peak_lr": peak_lr,
              "dropout": dropout, "repeat": args.repeat, "threads": args.threads, "torch": torch.__version__,
              "corpus": {"package": "fortunes", "files": FILES, "fortunes": len(docs), "train_tokens": len(train),
                         "held_out_tokens": len(val)},
              "parameters": sum(t.numel() for t in w.values()), "train_seconds": round(train_seconds),
              "losses": log, "heads": patterns, "model_sha256": digest}
    write_text(os.path.join(args.out, "training.json"), json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}: {report['parameters']} parameters, {train_seconds:.0f} s of training, final "
          f"held-out loss {log[-1]['val_loss']:.3f}; model.safetensors sha256 {digest}")
    for name in ("prev", "first", "same", "spread"):
        print(f"{name:>6}: " + "  ".join(f"L{l}:" + ",".join(f"{v:.2f}" for v in row)
                                        for l, row in enumerate(patterns[name])))


if __name__ == "__main__":
    main()
