import json
import numpy as np
from evaluate import *

Q = {s: np.load(f"full_q_{s}.npy") for s in SETS}
allrows = lexical_rows()
chosen = {}
for v in ("a", "b", "c"):
    rows, best = evaluate(f"full-{v}", np.load(f"full_doc_{v}.npy"), Q)
    allrows += rows
    chosen[f"full-{v}"] = best
json.dump({"rows": allrows, "chosen": chosen}, open("results_full.json", "w"), indent=0)
for r in allrows:
    if r[1] in ("dense", "bm25f") or r[1] == chosen.get(r[0]):
        print(fmt(r) + ("  <- chosen on tuning" if r[1] == chosen.get(r[0]) else ""))
