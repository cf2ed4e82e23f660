"""multi_head_attention's catalogued mistakes. Each takes its callees (split, attention, merge)
as arguments, so it can be combined with a student's own or with the reference ones."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .attention import capped, recipe


def checked(mutant: Callable) -> Callable:
    """``mutant`` with the contract's ValueError for num_heads not dividing d_model, so that it
    stands for its one mistake only (a mutant that calls split raises there anyway)."""

    def wrapped(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
        if X.shape[-1] % num_heads:
            raise ValueError("d_model is not divisible by num_heads")
        return mutant(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge)

    wrapped.__name__ = wrapped.__qualname__ = mutant.__name__
    return wrapped


def mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    d_head = X.shape[-1] // num_heads
    Qh, Kh, Vh = (split(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out_heads, weights = attention(Qh, Kh, Vh)
    return merge(out_heads) @ Wo, weights


def per_head(attention: Callable) -> Callable:
    """``attention`` called head by head on 2-D slices, the results stacked (loop-style code)."""

    def looped(Q, K, V):
        pairs = [attention(Q[h], K[h], V[h]) for h in range(len(Q))]
        return np.stack([o for o, _ in pairs]), np.stack([w for _, w in pairs])

    return looped


def _mha_no_wo(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = mha_ref(X, Wq, Wk, Wv, np.eye(X.shape[-1]), num_heads, split, attention, merge)
    return out, weights


def _mha_not_split(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = attention(X @ Wq, X @ Wk, X @ Wv)
    return out @ Wo, weights


def _mha_not_split_tiled(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = attention(X @ Wq, X @ Wk, X @ Wv)
    return out @ Wo, np.stack([weights] * num_heads)


def _mha_not_split_one(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = attention(X @ Wq, X @ Wk, X @ Wv)
    return out @ Wo, weights[None]


def _mha_scale_d_model(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    d_model = X.shape[-1]
    d_head = d_model // num_heads
    Qh, Kh, Vh = (split(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    # queries rescaled so that the per-head attention divides by sqrt(d_model) in effect
    out_heads, weights = attention(Qh * math.sqrt(d_head / d_model), Kh, Vh)
    return merge(out_heads) @ Wo, weights


_causal = recipe("causal_in_mha", mask="causal")


def _mha_causal(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    # the mask lives in multi_head_attention: its own attention code, or a mask it passes on
    return mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, _causal, merge)


def _mha_qk_swapped(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    return mha_ref(X, Wk, Wq, Wv, Wo, num_heads, split, attention, merge)


def _mha_averaged(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge)
    return out, np.mean(weights, axis=0)


def _mha_last_head(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge)
    return out, weights[-1]  # a loop over heads that keeps its last weights


def _mha_first_head(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge)
    return out, weights[0]  # OpenNMT's "return one attn": attn[:, 0]


def _mha_qkv_interleaved(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    n, d_model = X.shape
    d_head = d_model // num_heads
    qkv = (X @ np.concatenate([Wq, Wk, Wv], axis=1)).reshape(n, num_heads, 3 * d_head)
    Qh, Kh, Vh = np.split(qkv.transpose(1, 0, 2), 3, axis=-1)
    out_heads, weights = attention(Qh, Kh, Vh)
    return out_heads.transpose(1, 0, 2).reshape(n, d_model) @ Wo, weights


def _layer_norm(x: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def _residual_norm(how: str, eps: float = 1e-5) -> Callable:
    """The Transformer sublayer's Add & Norm kept inside multi_head_attention: the residual
    alone, the residual then a layer norm (post-norm), or a layer norm of X first and the
    residual after (pre-norm); layer norms without parameters, at torch's and at the
    eps=1e-6 of the jadore801120 code."""

    def mutant(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
        source = _layer_norm(X, eps) if how == "pre" else X
        out, weights = mha_ref(source, Wq, Wk, Wv, Wo, num_heads, split, attention, merge)
        out = out + X
        return (_layer_norm(out, eps) if how == "post" else out), weights

    mutant.__name__ = mutant.__qualname__ = f"_mha_residual_{how}_{eps:g}"
    return mutant


def _mha_prescaled(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    d_head = X.shape[-1] // num_heads
    Qh, Kh, Vh = (split(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out_heads, weights = attention(Qh * d_head**-0.5, Kh, Vh)  # tensor2tensor's q *= depth**-0.5
    return merge(out_heads) @ Wo, weights


def _mha_scaled_input(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    # the embedding scaling of a Transformer's input layer (X * sqrt(d_model)) done inside
    return mha_ref(X * math.sqrt(X.shape[-1]), Wq, Wk, Wv, Wo, num_heads, split, attention, merge)


def mha_capped(cap: float, how: str = "tanh") -> Callable:
    """Each head's scores capped in multi_head_attention's own code (Gemma 2's soft cap)."""
    att = capped(cap, how)

    def mutant(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
        return mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, att, merge)

    mutant.__name__ = mutant.__qualname__ = f"_mha_{how}_cap_{cap:g}"
    return mutant


def _rotate_half(x: np.ndarray) -> np.ndarray:  # GPT-NeoX, Hugging Face's LLaMA
    half = x.shape[-1] // 2
    return np.concatenate((-x[..., half:], x[..., :half]), axis=-1)


def _rotate_pairs(x: np.ndarray) -> np.ndarray:  # GPT-J, Meta's LLaMA (complex pairs)
    return np.stack((-x[..., 1::2], x[..., ::2]), axis=-1).reshape(x.shape)


def rotary(
    style: str = "half", fraction: float = 1.0, base: float = 10000.0, even: bool = False
) -> Callable:
    """Rotary position embeddings on each head's queries and keys (their first
    ``int(d_head * fraction)`` features; ``style``: which features are paired, the two halves
    or neighbours), then the reference pipeline. An odd rotary width raises, as the cos/sin
    tables built for it are one column wider than the features they rotate, unless ``even``:
    then it is rounded down to an even one (the last feature left as it is)."""

    def rope(x: np.ndarray, dim: int) -> np.ndarray:
        inv_freq = 1.0 / (base ** (np.arange(0, dim, 2) / dim))
        freqs = np.outer(np.arange(x.shape[-2]), inv_freq)
        if style == "half":
            emb, turn = np.concatenate((freqs, freqs), axis=-1), _rotate_half
        else:
            emb, turn = np.repeat(freqs, 2, axis=-1), _rotate_pairs
        rot = x[..., :dim]
        rot = rot * np.cos(emb) + turn(rot) * np.sin(emb)
        return np.concatenate((rot, x[..., dim:]), axis=-1)

    def mutant(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
        d_head = X.shape[-1] // num_heads
        dim = int(d_head * fraction) // 2 * 2 if even else int(d_head * fraction)
        Qh, Kh, Vh = (split(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        out_heads, weights = attention(rope(Qh, dim), rope(Kh, dim), Vh)
        return merge(out_heads) @ Wo, weights

    name = f"_mha_rope_{style}_{fraction:g}_{base:g}{'_even' if even else ''}"
    mutant.__name__ = mutant.__qualname__ = name
    return mutant


def multi_query(block: str = "first") -> Callable:
    """Multi-query attention (Falcon's, PaLM's): every query head attends with one key head and
    one value head, the ``block`` (first or last) d_head columns of Wk and Wv, shared by all."""

    def mutant(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
        d_head = X.shape[-1] // num_heads
        cols = slice(0, d_head) if block == "first" else slice(X.shape[-1] - d_head, None)
        Qh = split(X @ Wq, num_heads, d_head)
        Kh, Vh = (np.broadcast_to(X @ W[:, cols], (num_heads, *Qh.shape[1:])) for W in (Wk, Wv))
        out_heads, weights = attention(Qh, np.ascontiguousarray(Kh), np.ascontiguousarray(Vh))
        return merge(out_heads) @ Wo, weights

    mutant.__name__ = mutant.__qualname__ = f"_mha_multi_query_{block}"
    return mutant


def alibi_slopes(num_heads: int, interpolated: bool = True) -> np.ndarray:
    """ALiBi's head slopes: 2^(-8 (h + 1) / H); for a head count that is no power of two,
    BLOOM's and the paper's (``interpolated``: the closest power's slopes, then every other
    slope of twice as many heads), or the plain geometric sequence."""
    if not interpolated:
        return 2.0 ** (-8.0 * np.arange(1, num_heads + 1) / num_heads)
    closest = 2 ** math.floor(math.log2(num_heads))
    slopes = 2.0 ** (-8.0 * np.arange(1, closest + 1) / closest)
    if closest != num_heads:
        extra = 2.0 ** (-8.0 * np.arange(1, 2 * closest + 1) / (2 * closest))
        slopes = np.concatenate([slopes, extra[0::2][: num_heads - closest]])
    return slopes


def alibi(kind: str = "key", interpolated: bool = True, scaled: bool = False) -> Callable:
    """A bias added to each head's scores before the softmax that depends on the key's
    position relative to the query (ALiBi): ``kind`` "key", BLOOM's slope_h * j (the same
    weights as the paper's -slope_h * (i - j), unmasked); "distance", -slope_h * |i - j|
    (a symmetric, non-causal ALiBi). ``scaled``: the bias added before the 1 / sqrt(d_head)
    scale, so that it is scaled with the scores. The head's attention is computed inline."""

    def mutant(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
        n, d_model = X.shape
        d_head = d_model // num_heads
        Qh, Kh, Vh = (split(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        where = np.broadcast_to(j, (n, n)) if kind == "key" else -np.abs(i - j)
        bias = alibi_slopes(num_heads, interpolated)[:, None, None] * where
        raw = Qh @ np.swapaxes(Kh, -1, -2)
        scores = (raw + bias) / math.sqrt(d_head) if scaled else raw / math.sqrt(d_head) + bias
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)
        return merge(weights @ Vh) @ Wo, weights

    name = f"_mha_alibi_{kind}{'' if interpolated else '_geometric'}{'_scaled' if scaled else ''}"
    mutant.__name__ = mutant.__qualname__ = name
    return mutant


def _mha_assert(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    assert X.shape[-1] % num_heads == 0, "d_model must be divisible by num_heads"
    return mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge)


MHA: dict[str, list[Callable]] = {
    "mha-no-output-projection": [checked(_mha_no_wo)],
    "mha-heads-not-split": [
        checked(f) for f in (_mha_not_split, _mha_not_split_tiled, _mha_not_split_one)
    ],
    "scale-d-model": [checked(_mha_scale_d_model)],
    "mha-causal-mask": [checked(_mha_causal)],
    "mha-qk-swapped": [checked(_mha_qk_swapped)],
    "mha-averaged-weights": [checked(_mha_averaged)],
    "mha-last-head-weights": [checked(_mha_last_head)],
    "mha-first-head-weights": [checked(_mha_first_head)],
    "mha-qkv-interleaved": [checked(_mha_qkv_interleaved)],
    "mha-residual-norm": [
        checked(_residual_norm(how, eps))
        for how, eps in (("add", 1e-5), ("post", 1e-5), ("post", 1e-6), ("pre", 1e-5))
    ],
    "mha-prescaled-query": [checked(_mha_prescaled)],
    "mha-scaled-input": [checked(_mha_scaled_input)],
    # Gemma 2's cap and Grok's; other caps are fitted (diagnose.fitted)
    "mha-logit-softcap": [checked(mha_capped(50.0)), checked(mha_capped(30.0))],
    # GPT-NeoX's halves and GPT-J's neighbours, on every feature; other fractions and bases
    # are searched (diagnose.fitted)
    "mha-rotary-embedding": [checked(rotary("half")), checked(rotary("pairs"))],
    # Falcon's multi-query attention: one key and value head, the first d_head columns
    "mha-multi-query": [checked(multi_query())],
    # BLOOM's ALiBi (slope_h times the key's position); other kinds and slopes are searched
    # (diagnose.fitted)
    "mha-alibi-bias": [checked(alibi())],
    "mha-no-valueerror": [_mha_assert],
}

# attention's mistakes that go by another name when made inside multi_head_attention: in
# self-attention a causal mask or keys times queries there look exactly like its own mistakes,
# and an axis fixed for one rank is, on the stacked heads, right or a softmax over the queries.
INLINE_AS_MHA: dict[str, str] = {
    "attention-causal-mask": "mha-causal-mask",
    "attention-scores-kq": "mha-qk-swapped",
    "attention-fixed-rank": "softmax-wrong-axis",
    "attention-logit-softcap": "mha-logit-softcap",
    "attention-masks-positions": "mha-masks-positions",
}
