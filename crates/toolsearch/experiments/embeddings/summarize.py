"""Print a markdown summary of results_full.json and results_static.json."""
import json, sys
rows, chosen = [], {}
for f in ("results_full.json", "results_static.json"):
    d = json.load(open(f)); rows += d["rows"]; chosen.update(d["chosen"])
g = {}
for r in rows:
    g.setdefault(r[0], {}).setdefault(r[1], {})[r[2]] = r[3:]
f3 = lambda v: " / ".join(f"{x:.3f}" for x in v)
print("| config | dense tuning R@1 / R@5 / MRR@5 | dense held-out R@1 / R@5 / MRR@5 | fusion chosen on tuning | hybrid tuning R@1 / R@5 / MRR@5 | hybrid held-out R@1 / R@5 / MRR@5 |")
print("|---|---|---|---|---|---|")
lex = g["lexical"]["bm25f"]
print(f"| lexical BM25F (baseline) | {f3(lex['tasks'])} | {f3(lex['heldout'])} | - | - | - |")
labels = [l for l in g if l != "lexical"]
labels.sort(key=lambda l: (not l.startswith("full"), -g[l][chosen[l]]["tasks"][1], -g[l][chosen[l]]["tasks"][2]))
for l in labels[: int(sys.argv[1]) if len(sys.argv) > 1 else None]:
    D, c = g[l]["dense"], chosen[l]
    H = g[l][c]
    print(f"| {l} | {f3(D['tasks'])} | {f3(D['heldout'])} | {c} | {f3(H['tasks'])} | {f3(H['heldout'])} |")
