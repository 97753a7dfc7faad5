"""Rerank the lexical top-N with a bi-encoder's cosine, every setting chosen on the tuning set.
usage: eval_rerank.py model [model2 ...]   (several models = their cosines averaged)"""
import sys, json, itertools
import numpy as np
from common import load_tools, load_tasks, SETS, RANKS

TOOLS = load_tools(); IDS = [t[0] for t in TOOLS]; IX = {t: i for i, t in enumerate(IDS)}; NT = len(IDS)
TASKS = {s: load_tasks(s) for s in SETS}
GOLD = {s: [set(IX[g] for g in gg) for _, gg, _ in TASKS[s]] for s in SETS}
LR = {}; LS = {}
for l in list(open(RANKS))[1:]:
    s, line, rank, tool, score = l.rstrip("\n").split("\t")
    k = (s, int(line))
    if k not in LR:
        LR[k] = np.full(NT, np.inf); LS[k] = np.zeros(NT)
    LR[k][IX[tool]] = int(rank); LS[k][IX[tool]] = float(score)
LEXR = {s: [LR[(s, l)] for l, _, _ in TASKS[s]] for s in SETS}
LEXS = {s: [LS[(s, l)] for l, _, _ in TASKS[s]] for s in SETS}


def rank_metrics(orders, golds):
    r1 = r5 = mrr = 0.0; rk = []
    for o, g in zip(orders, golds):
        rank = next((k + 1 for k, t in enumerate(o[:50]) if t in g), 999)
        rk.append(rank)
        r1 += rank == 1; r5 += rank <= 5; mrr += (1 / rank if rank <= 5 else 0)
    n = len(golds)
    return (r1 / n, r5 / n, mrr / n), rk


def lex_order(lr):
    return np.argsort(lr, kind="stable")


def ranks_in(sc, cand):
    """1-based rank within cand (bool mask) by score sc (desc), inf outside"""
    r = np.full(len(sc), np.inf)
    idx = np.where(cand)[0]
    o = idx[np.argsort(-sc[idx], kind="stable")]
    r[o] = np.arange(1, len(o) + 1)
    return r


METHODS = ["dense"] + [f"rrf k={k} wd={w}" for k in (2, 5, 10, 20, 60) for w in (0.5, 1.0, 2.0)] + \
          [f"lin a={a}" for a in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)]
POOLS = [10, 20, 30, 50, "all"]


def rerank(lr, ls, cos, N, method):
    if N == "all":
        cand = np.ones(NT, bool)
    else:
        cand = lr <= N
    lrc = np.where(cand, lr, np.inf)
    if method == "dense":
        f = np.where(cand, cos, -np.inf)
    elif method.startswith("rrf"):
        k, w = [float(x.split("=")[1]) for x in method.split()[1:]]
        dr = ranks_in(cos, cand)
        f = np.where(cand, 1 / (k + lrc) + w / (k + dr), -np.inf)
    else:
        a = float(method.split("=")[1])
        c = cos[cand]; lx = ls / ls.max()
        cn = (cos - c.min()) / (c.max() - c.min() + 1e-12)
        f = np.where(cand, a * lx + (1 - a) * cn, -np.inf)
    # ties / non-candidates fall back to lexical order
    return np.lexsort((lr, -f))


def main(models):
    Z = [np.load(f"cache/{m}.npz") for m in models]
    res = {}
    for v in ("a", "c"):
        for s in SETS:
            C = sum(z[f"q_{s}"] @ z[f"doc_{v}"].T for z in Z) / len(Z)
            for N, meth in itertools.product(POOLS, METHODS):
                orders = [rerank(lr, ls, c, N, meth) for lr, ls, c in zip(LEXR[s], LEXS[s], C)]
                res[(v, N, meth, s)], _ = rank_metrics(orders, GOLD[s])
    base = {s: rank_metrics([lex_order(lr) for lr in LEXR[s]], GOLD[s])[0] for s in SETS}
    keys = sorted({k[:3] for k in res}, key=str)
    key_t = lambda k: (res[k + ("tasks",)][1], res[k + ("tasks",)][2], res[k + ("tasks",)][0])
    key_h = lambda k: (res[k + ("heldout",)][1], res[k + ("heldout",)][2], res[k + ("heldout",)][0])
    chosen = max(keys, key=key_t)
    oracle = max(keys, key=key_h)
    # ties on tuning: how spread is held-out among the settings tied at the top on tuning
    tied = [k for k in keys if key_t(k)[:2] == key_t(chosen)[:2]]
    f = lambda r: "%.3f / %.3f / %.3f" % r
    label = "+".join(models)
    out = {"models": label, "baseline": base, "chosen": [str(chosen), res[chosen + ("tasks",)], res[chosen + ("heldout",)]],
           "oracle": [str(oracle), res[oracle + ("tasks",)], res[oracle + ("heldout",)]],
           "tied_on_tuning": len(tied), "tied_heldout_r5_range": [min(res[k + ("heldout",)][1] for k in tied), max(res[k + ("heldout",)][1] for k in tied)]}
    # best per pool (chosen on tuning), for the table
    per_pool = {}
    for N in POOLS:
        for v in ("a", "c"):
            ks = [k for k in keys if k[1] == N and k[0] == v]
            b = max(ks, key=key_t)
            per_pool[f"{v} N={N}"] = [b[2], res[b + ("tasks",)], res[b + ("heldout",)]]
        ks = [k for k in keys if k[1] == N and k[2] == "dense"]
        for k in ks:
            per_pool[f"{k[0]} N={N} dense-only"] = ["dense", res[k + ("tasks",)], res[k + ("heldout",)]]
    out["per_pool"] = per_pool
    json.dump(out, open(f"results_{label}.json", "w"), indent=1, default=str)
    print(f"## {label}")
    print(f"lexical baseline: tuning {f(base['tasks'])}  held-out {f(base['heldout'])}")
    print(f"CHOSEN on tuning {chosen}: tuning {f(res[chosen + ('tasks',)])}  held-out {f(res[chosen + ('heldout',)])}  (tied on tuning R@5+MRR: {len(tied)}, held-out R@5 range {out['tied_heldout_r5_range']})")
    print(f"ORACLE (best held-out) {oracle}: tuning {f(res[oracle + ('tasks',)])}  held-out {f(res[oracle + ('heldout',)])}")
    for k, (m, t, h) in per_pool.items():
        print(f"  {k:22s} {m:16s} tuning {f(t)}  held-out {f(h)}")


if __name__ == "__main__":
    main(sys.argv[1:])
