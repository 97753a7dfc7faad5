"""Build static (per-entry lookup) tables by running every vocabulary entry ALONE
through the full model (mean pooling incl. [CLS]/[SEP], as sentence-transformers, not normalised).
  word table : words of the tool texts + wordfreq top-30k English words (no task words)
  token table: the model's 30522 WordPiece vocabulary entries (model2vec style)"""
import re, time
import numpy as np
from wordfreq import top_n_list
from common import *
from minilm import MiniLM

WORD_RE = re.compile(r"[a-z]+")


def words_of(text):
    # split identifiers (camelCase, snake_case) then lower-case words
    return WORD_RE.findall(split_name(text))


if __name__ == "__main__":
    m = MiniLM()
    tools = load_tools()
    tw = set()
    for t in tools:
        tw.update(words_of(doc_text(t, True)))
    gen = [w for w in top_n_list("en", 30000) if WORD_RE.fullmatch(w)]
    vocab = sorted(tw | set(gen))
    print(f"tool words {len(tw)}, wordfreq words {len(gen)}, vocab {len(vocab)}")
    t0 = time.time()
    V = m.encode(vocab, batch=512, normalize=False)
    print(f"word table {V.shape} in {time.time()-t0:.0f}s")
    np.save("static_word.npy", V)
    open("static_word_vocab.txt", "w").write("\n".join(vocab) + "\n")

    # token table: feed [CLS] tok [SEP] for every vocabulary id
    ids = np.arange(m.word.shape[0])
    t0 = time.time()
    out = np.zeros((len(ids), 384), np.float32)
    for s in range(0, len(ids), 1024):
        b = ids[s:s + 1024]
        x = np.stack([np.full(len(b), 101), b, np.full(len(b), 102)], 1)
        h = m._forward(x, np.ones(x.shape, np.float32))
        out[s:s + len(b)] = h.mean(1)
    print(f"token table {out.shape} in {time.time()-t0:.0f}s")
    np.save("static_token.npy", out)
