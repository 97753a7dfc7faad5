import glob, json, os, re
import numpy as np
import os
FIX = os.environ.get("FIXTURE") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixture")
RANKS = os.environ.get("RANKS", "/tmp/ranks.tsv")
SETS = {"tasks": "tasks.tsv", "heldout": "tasks-heldout.tsv"}


def split_name(s):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", s)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    s = re.sub(r"[_\-./:]+", " ", s)
    return " ".join(s.lower().split())


def load_tools():
    tools = []  # (id, server, name, desc, [(arg, argdesc)])
    for f in sorted(glob.glob(f"{FIX}/tools/*.json")):
        server = os.path.basename(f)[:-5]
        for t in json.load(open(f)):
            props = (t.get("inputSchema") or {}).get("properties") or {}
            args = [(k, (v or {}).get("description") or "") for k, v in props.items()]
            tools.append((f"{server}/{t['name']}", server, t["name"], t.get("description") or "", args))
    return tools


def first_sentence(d):
    d = " ".join(d.split())
    m = re.search(r"(.+?[.!?])(\s|$)", d)
    s = m.group(1) if m else d
    return s[:300]


def doc_text(t, with_args, short=False):
    _, server, name, desc, args = t
    s = f"{split_name(server)} {split_name(name)}: {first_sentence(desc) if short else desc.strip()}"
    if with_args and args:
        parts = []
        for a, d in args:
            parts.append(f"{split_name(a)}: {d.strip()}" if d else split_name(a))
        s += " Arguments: " + "; ".join(parts)
    return s


def load_tasks(which):
    out = []  # (line, [gold ids], sentence)
    for i, line in enumerate(open(f"{FIX}/{SETS[which]}", encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        gold, sent = line.split("\t", 1)
        out.append((i, gold.split(","), sent))
    return out


def load_lexical(tool_ids):
    """{(set, line): np.array of lexical score over all tools (0 if not in top 50)}"""
    idx = {t: i for i, t in enumerate(tool_ids)}
    lex = {}
    with open(RANKS) as f:
        next(f)
        for l in f:
            s, line, rank, tool, score = l.rstrip("\n").split("\t")
            key = (s, int(line))
            if key not in lex:
                lex[key] = np.zeros(len(tool_ids), np.float64)
            lex[key][idx[tool]] = float(score)
    return lex


def metrics(score_rows, golds):
    """score_rows: list of np arrays over tools; golds: list of lists of tool indices.
    Ties broken by tool index (stable)."""
    r1 = r5 = mrr = 0.0
    for sc, g in zip(score_rows, golds):
        order = np.argsort(-sc, kind="stable")[:5]
        rank = next((k + 1 for k, t in enumerate(order) if t in g), None)
        if rank == 1:
            r1 += 1
        if rank is not None:
            r5 += 1
            mrr += 1.0 / rank
    n = len(golds)
    return r1 / n, r5 / n, mrr / n


def ranks_of(sc):
    """1-based rank of every tool under score sc (stable ties)."""
    order = np.argsort(-sc, kind="stable")
    r = np.empty(len(sc), np.int64)
    r[order] = np.arange(1, len(sc) + 1)
    return r
