"""Writes the static word table the toolsearch crate ships (crates/toolsearch/data/words.bin),
from the word table build_static.py makes (static_word.npy, static_word_vocab.txt): centred and
reduced by PCA to DIMS dimensions, each row multiplied by its word's SIF weight (a / (a + p(w)),
p from wordfreq: a sentence's vector is then the plain sum of its words' rows, and cosine does
not care for the missing division), and quantised to int8 with one f32 scale per row.

Format (little-endian): b"MCPXWORDS1", u32 words, u32 dims, u32 vocabulary bytes, the words
sorted and joined by "\n", then words x f32 scales, then words x dims int8 values."""
import struct, sys
import numpy as np
from wordfreq import word_frequency

DIMS = int(sys.argv[1]) if len(sys.argv) > 1 else 128
OUT = sys.argv[2] if len(sys.argv) > 2 else "words.bin"
SIF_A = 1e-4

vocab = open("static_word_vocab.txt").read().split()
assert vocab == sorted(vocab)
V = np.load("static_word.npy").astype(np.float64)
mu = V.mean(0)
U, S, Wt = np.linalg.svd(V - mu, full_matrices=False)
E = (V - mu) @ Wt[:DIMS].T
w = np.array([SIF_A / (SIF_A + word_frequency(x, "en")) for x in vocab])
E = E * w[:, None]
scale = np.abs(E).max(1) / 127
scale[scale == 0] = 1
q = np.round(E / scale[:, None]).astype(np.int8)
text = "\n".join(vocab).encode()
with open(OUT, "wb") as f:
    f.write(b"MCPXWORDS1")
    f.write(struct.pack("<III", len(vocab), DIMS, len(text)))
    f.write(text)
    f.write(scale.astype("<f4").tobytes())
    f.write(q.tobytes())
print(f"{OUT}: {len(vocab)} words x {DIMS} dims")
