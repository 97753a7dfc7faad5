"""Miss analysis for the tuning-chosen full-model hybrid (full-c, rrf k=5) on held-out."""
import numpy as np
from evaluate import *
D = np.load("full_doc_c.npy"); Q = np.load("full_q_heldout.npy")
C = cos_rows(D, Q)
rk = {10: 0, 20: 0}; same_server = 0; miss = 0
for (line, gold, sent), lexrow, cosrow, g in zip(TASKS["heldout"], LEXROWS["heldout"], C, GOLD["heldout"]):
    f = dict(fusions(lexrow, cosrow))["rrf k=5 wd=1.0"]
    order = list(np.argsort(-f, kind="stable"))
    r = min(order.index(x) for x in g) + 1
    for k in rk: rk[k] += r <= k
    if r > 5:
        miss += 1
        gs = {IDS[x].split("/")[0] for x in g}
        same_server += any(IDS[x].split("/")[0] in gs for x in order[:5])
        print(f"{line}\trank {r}\t{','.join(gold)}\t{sent}\ttop3: {', '.join(IDS[x] for x in order[:3])}")
n = len(TASKS["heldout"])
print(f"R@10 {rk[10]/n:.3f} R@20 {rk[20]/n:.3f}; misses {miss}, of which a gold server's tool is in top 5: {same_server}")
