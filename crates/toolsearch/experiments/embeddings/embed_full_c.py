"""Variant c: server + split tool name + first sentence of the description only."""
import numpy as np
from common import *
from minilm import MiniLM
m = MiniLM()
np.save("full_doc_c.npy", m.encode([doc_text(t, False, short=True) for t in load_tools()]))
