"""Full fusion grid for the full model: R@1 / R@5 / MRR@5 tuning -> held-out."""
import json
d = json.load(open("results_full.json"))
g = {}
for r in d["rows"]:
    g.setdefault(r[1], {}).setdefault(r[0], {})[r[2]] = r[3:]
labs = ["full-a", "full-b", "full-c"]
print("| method | " + " | ".join(f"{l} tuning R@1/R@5/MRR | {l} held-out R@1/R@5/MRR" for l in labs) + " |")
print("|---" * (1 + 2 * len(labs)) + "|")
for m in g:
    if m == "bm25f": continue
    cells = []
    for l in labs:
        for s in ("tasks", "heldout"):
            v = g[m][l][s]; mark = "**" if m == d["chosen"][l] else ""
            cells.append(f"{mark}{v[0]:.3f}/{v[1]:.3f}/{v[2]:.3f}{mark}")
    print(f"| {m} | " + " | ".join(cells) + " |")
