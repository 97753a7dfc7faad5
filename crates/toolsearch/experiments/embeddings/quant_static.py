"""int8 / float16 quantisation check of the word table (c docs, SIF weights), fusion fixed to
what the tuning set chose for the float32 table; prints sizes."""
import json
import numpy as np
from eval_static import *

chosen = json.load(open("results_static.json"))["chosen"]
qseqs = {s: [seq("word", x[2]) for x in TASKS[s]] for s in SETS}
dseqs = [seq("word", doc_text(t, False, short=True)) for t in TOOLS]
w = weights("word", "sif", dseqs)
n = TABLES["word"].shape[0]
for dims in (384, 256, 128):
    E = pca(TABLES["word"], dims).astype(np.float32)
    label = f"static-word-{dims}-c-sif"
    for qn in ("f32", "f16", "int8"):
        if qn == "f16":
            Eq = E.astype(np.float16).astype(np.float32)
        elif qn == "int8":  # per-row symmetric scale (one f32 scale per row)
            sc = np.abs(E).max(1, keepdims=True) / 127
            Eq = np.round(E / sc).astype(np.int8).astype(np.float32) * sc
        else:
            Eq = E
        D = embed(Eq, w, dseqs); Q = {s: embed(Eq, w, qseqs[s]) for s in SETS}
        rows, _ = evaluate(label, D, Q)
        for r in rows:
            if r[1] == chosen[label] and r[2] == "heldout":
                print(f"{label} {qn}: {chosen[label]} held-out R@1 {r[3]:.3f} R@5 {r[4]:.3f} MRR@5 {r[5]:.3f}")
    print(f"  size {n} x {dims}: int8 {n*dims/2**20:.1f} MiB (+{n*4/2**10:.0f} KiB row scales), f16 {n*dims*2/2**20:.1f} MiB")
vb = sum(len(x) + 1 for x in word_vocab)
print(f"vocabulary strings: {vb/1024:.0f} KiB; SIF weights f32: {n*4/1024:.0f} KiB")
