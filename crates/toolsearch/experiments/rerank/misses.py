"""held-out misses of the tuning-chosen mpnet setting (doc c, all tools, lin a=0.4)"""
from eval_rerank import *
z = np.load("cache/mpnet.npz"); s = "heldout"
C = z[f"q_{s}"] @ z["doc_c"].T
same_server = 0; n = 0
for (line, gold, sent), lr, ls, c, g in zip(TASKS[s], LEXR[s], LEXS[s], C, GOLD[s]):
    o = rerank(lr, ls, c, "all", "lin a=0.4")
    rank = next((k + 1 for k, t in enumerate(o) if t in g), 999)
    if rank > 5:
        n += 1
        gs = {IDS[i].split("/")[0] for i in g}
        same_server += any(IDS[t].split("/")[0] in gs for t in o[:5])
        print(f"L{line} rank={rank} gold={','.join(gold)} | {sent[:90]}\n    top3: {', '.join(IDS[t] for t in o[:3])}")
print(f"misses {n}; a tool of a gold server in top 5: {same_server}")
