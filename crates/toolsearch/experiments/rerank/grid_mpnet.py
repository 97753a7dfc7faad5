"""neighbourhood of the chosen mpnet setting, and paired bootstrap vs lexical on held-out"""
import sys
from eval_rerank import *
m = sys.argv[1] if len(sys.argv) > 1 else "mpnet"
z = np.load(f"cache/{m}.npz")
for v in ("c", "a"):
    print(f"doc {v}: R@5 tuning/held-out for lin a (rows) x pool (cols)")
    print("        " + "  ".join(f"{str(N):>11s}" for N in POOLS))
    for meth in [f"lin a={a}" for a in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)] + ["rrf k=5 wd=1.0", "rrf k=10 wd=1.0", "rrf k=20 wd=1.0", "dense"]:
        cells = []
        for N in POOLS:
            r = []
            for s in SETS:
                C = z[f"q_{s}"] @ z[f"doc_{v}"].T
                r.append(rank_metrics([rerank(lr, ls, c, N, meth) for lr, ls, c in zip(LEXR[s], LEXS[s], C)], GOLD[s])[0][1])
            cells.append(f"{r[0]:.3f}/{r[1]:.3f}")
        print(f"{meth:16s}" + "  ".join(cells))
# paired bootstrap, chosen setting
v, N, meth = sys.argv[2:5] if len(sys.argv) > 4 else ("c", "all", "lin a=0.4")
N = N if N == "all" else int(N)
s = "heldout"
C = z[f"q_{s}"] @ z[f"doc_{v}"].T
_, rk = rank_metrics([rerank(lr, ls, c, N, meth) for lr, ls, c in zip(LEXR[s], LEXS[s], C)], GOLD[s])
_, rb = rank_metrics([lex_order(lr) for lr in LEXR[s]], GOLD[s])
h = (np.array(rk) <= 5).astype(float); b = (np.array(rb) <= 5).astype(float)
rng = np.random.default_rng(0); n = len(h)
ds = [(h[i] - b[i]).mean() for i in (rng.integers(0, n, n) for _ in range(10000))]
hs = [h[i].mean() for i in (rng.integers(0, n, n) for _ in range(10000))]
print(f"held-out R@5 {h.mean():.3f} (95% bootstrap {np.percentile(hs,2.5):.3f}-{np.percentile(hs,97.5):.3f}); gain vs lexical {h.mean()-b.mean():+.3f} (95% {np.percentile(ds,2.5):+.3f}..{np.percentile(ds,97.5):+.3f}); fixed {int(((h==1)&(b==0)).sum())}, broken {int(((h==0)&(b==1)).sum())}")
rk = np.array(rk)
print("held-out misses:", int((rk > 5).sum()), "gold at rank 6-10:", int(((rk > 5) & (rk <= 10)).sum()), "11-20:", int(((rk > 10) & (rk <= 20)).sum()), ">20:", int((rk > 20).sum()))
