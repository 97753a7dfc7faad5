from eval_rerank import *
for s in SETS:
    _, rk = rank_metrics([lex_order(lr) for lr in LEXR[s]], GOLD[s])
    rk = np.array(rk)
    print(s, len(rk), " ".join(f"R@{k}={np.mean(rk<=k):.3f}" for k in (1, 5, 10, 20, 30, 50)))
