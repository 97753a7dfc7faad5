"""Embed tool documents (a: name+description, b: + arguments) and task sentences
with the full model; cache to full_*.npy. Also time single-sentence queries."""
import time
import numpy as np
from common import *
from minilm import MiniLM

m = MiniLM()
tools = load_tools()
for variant, wa in (("a", False), ("b", True)):
    docs = [doc_text(t, wa) for t in tools]
    t0 = time.time()
    np.save(f"full_doc_{variant}.npy", m.encode(docs))
    ntok = sum(min(len(e.ids), 256) for e in m.tok.encode_batch(docs))
    print(f"docs {variant}: {len(docs)} in {time.time()-t0:.1f}s, mean tokens {ntok/len(docs):.0f}")
for s in SETS:
    T = load_tasks(s)
    np.save(f"full_q_{s}.npy", m.encode([x[2] for x in T]))

# per-query latency: one sentence at a time (batch of 1), as a gateway would
T = load_tasks("heldout")
sents = [x[2] for x in T]
m.encode(sents[:5], batch=1)
t0 = time.time()
for q in sents:
    m.encode([q], batch=1)
dt = (time.time() - t0) / len(sents)
ntok = np.mean([len(e.ids) for e in m.tok.encode_batch(sents)])
print(f"full model query latency: {dt*1000:.1f} ms/sentence (numpy, batch 1, mean {ntok:.1f} tokens)")
