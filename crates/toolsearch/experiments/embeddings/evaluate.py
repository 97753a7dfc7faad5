"""Dense / hybrid evaluation shared by the full model and the static tables."""
import numpy as np
from common import *

TOOLS = load_tools()
IDS = [t[0] for t in TOOLS]
IX = {t: i for i, t in enumerate(IDS)}
LEX = load_lexical(IDS)
TASKS = {s: load_tasks(s) for s in SETS}
GOLD = {s: [[IX[g] for g in gg] for _, gg, _ in TASKS[s]] for s in SETS}
LEXROWS = {s: [LEX[(s, l)] for l, _, _ in TASKS[s]] for s in SETS}

RRF_K = [5, 10, 20, 30, 60]
RRF_W = [2.0, 1.0, 0.5]          # weight of the dense list in RRF (lexical weight 1)
ALPHAS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]  # weight of the lexical score in linear fusion


def cos_rows(D, Q):
    D = D / (np.linalg.norm(D, axis=1, keepdims=True) + 1e-12)
    Q = Q / (np.linalg.norm(Q, axis=1, keepdims=True) + 1e-12)
    return Q @ D.T


def fusions(lexrow, cosrow):
    """yield (name, fused scores)"""
    lr = ranks_of(lexrow).astype(np.float64)
    lr[lexrow <= 0] = np.inf          # tools outside the lexical top 50 get no lexical RRF term
    dr = ranks_of(cosrow)
    for k in RRF_K:
        for w in RRF_W:
            yield f"rrf k={k} wd={w}", 1.0 / (k + lr) + w / (k + dr)
    lx = lexrow / lexrow.max() if lexrow.max() > 0 else lexrow
    cn = (cosrow - cosrow.min()) / (cosrow.max() - cosrow.min() + 1e-12)
    for a in ALPHAS:
        yield f"lin a={a}", a * lx + (1 - a) * cn


def evaluate(label, D, Q):
    """D: doc matrix; Q: {set: query matrix}. Returns rows of
    (label, method, set, r1, r5, mrr5) and prints the dense figures and the chosen fusion."""
    rows = []
    fused = {}
    for s in SETS:
        C = cos_rows(D, Q[s])
        r = metrics(list(C), GOLD[s])
        rows.append((label, "dense", s) + r)
        acc = {}
        for lexrow, cosrow in zip(LEXROWS[s], C):
            for name, f in fusions(lexrow, cosrow):
                acc.setdefault(name, []).append(f)
        for name, fl in acc.items():
            fused[(name, s)] = metrics(fl, GOLD[s])
    names = sorted({n for n, _ in fused})
    for n in names:
        for s in SETS:
            rows.append((label, n, s) + fused[(n, s)])
    # choose on tuning set: recall@5, then MRR@5
    best = max(names, key=lambda n: (fused[(n, "tasks")][1], fused[(n, "tasks")][2]))
    return rows, best


def lexical_rows():
    return [("lexical", "bm25f", s) + metrics(LEXROWS[s], GOLD[s]) for s in SETS]


def fmt(r):
    return f"{r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} | {r[4]:.3f} | {r[5]:.3f}"
