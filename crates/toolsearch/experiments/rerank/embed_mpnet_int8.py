"""all-mpnet-base-v2 with every 2-D weight (encoder matrices + word/position embeddings) rounded to
int8 with one fp32 scale per row (symmetric), then dequantised: does recall survive int8 storage?"""
import os, sys, json, time
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import numpy as np
from common import load_tools, load_tasks, doc_text, SETS
from mpnet import MPNet

m = MPNet()
nbytes = 0
def q8(a, axis):
    global nbytes
    s = np.abs(a).max(axis=axis, keepdims=True) / 127.0 + 1e-12
    nbytes += a.size + s.size * 4
    return (np.round(a / s).clip(-127, 127) * s).astype(np.float32)
for k in list(m.wt):
    m.wt[k] = np.ascontiguousarray(q8(m.wt[k], 0))   # wt is W.T: scale per output column = per row of W
for k in ("embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight"):
    m.w[k] = q8(m.w[k], 1)
other = sum(v.nbytes for k, v in m.w.items() if not (k.startswith("encoder.layer") and v.ndim == 2) and k not in ("embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight", "embeddings.position_ids") and not k.startswith("pooler"))
tools = load_tools()
out = {"doc_a": m.encode([doc_text(t, False) for t in tools]), "doc_c": m.encode([doc_text(t, False, short=True) for t in tools])}
for s in SETS:
    out["q_" + s] = m.encode([x[2] for x in load_tasks(s)])
np.savez("cache/mpnet8.npz", **out)
ref = np.load("cache/mpnet.npz")
info = {"int8_bytes": nbytes, "fp32_other_bytes": other, "mean_cos_to_fp32_doc_c": float((out["doc_c"] * ref["doc_c"]).sum(1).mean()),
        "min_cos_to_fp32_q": float(min((out["q_" + s] * ref["q_" + s]).sum(1).min() for s in SETS))}
json.dump(info, open("cache/mpnet8.info.json", "w")); print(info)
