"""Each catalogued mistake implemented as a mutant of the reference (trusted side only).

Functions that call other contract functions take those callees as arguments, so a mutant can be
combined with the student's own callees (to tell where a bug lives) or with the reference ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from solutions import multihead as ref


def swap(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


# --- softmax --------------------------------------------------------------------------------


def _sm_no_shift(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _sm_max_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)


def _sm_sum_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


def _sm_both_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis)


def _sm_sum_no_keepdims_no_shift(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis)


def _sm_last_axis_appended(x, axis=-1):  # [..., None] always restores the *last* axis
    e = np.exp(x - x.max(axis=axis)[..., None])
    return e / e.sum(axis=axis)[..., None]


def _sm_global(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()


def _sm_row_shift_global_sum(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()


def _sm_axis0(x, axis=-1):
    return ref.softmax(x, axis=0)


def _sm_queries(x, axis=-1):  # in attention: normalised over the queries instead of the keys
    return ref.softmax(x, axis=-2)


SOFTMAX: dict[str, list[Callable]] = {
    "softmax-wrong-axis": [_sm_queries, _sm_axis0],
    "softmax-unstable": [_sm_no_shift],
    "softmax-no-keepdims": [
        _sm_max_no_keepdims,
        _sm_sum_no_keepdims,
        _sm_both_no_keepdims,
        _sm_last_axis_appended,
    ],
    "softmax-global": [_sm_global, _sm_row_shift_global_sum],
}


# Two mistakes at once that a single mutant cannot stand for (the shift changes the numbers).
SOFTMAX_COMBINED: dict[tuple[str, ...], list[Callable]] = {
    ("softmax-no-keepdims", "softmax-unstable"): [_sm_sum_no_keepdims_no_shift],
}


# --- split_heads / merge_heads --------------------------------------------------------------


def _split_no_transpose(M, num_heads, d_head):
    return M.reshape(num_heads, M.shape[0], d_head)


def _split_interleaved(M, num_heads, d_head):
    return M.reshape(M.shape[0], d_head, num_heads).transpose(2, 0, 1)


def _split_tokens(M, num_heads, d_head):
    return np.stack(np.split(M, num_heads, axis=0))


SPLIT: dict[str, list[Callable]] = {
    "split-no-transpose": [_split_no_transpose],
    "split-interleaved": [_split_interleaved],
    "split-token-axis": [_split_tokens],
}


def _merge_no_transpose(H):
    h, n, d = H.shape
    return H.reshape(n, h * d)


def _merge_reversed(H):
    return ref.merge_heads(H[::-1])


MERGE: dict[str, list[Callable]] = {
    "merge-no-transpose": [_merge_no_transpose],
    "merge-reversed-heads": [_merge_reversed],
}


# --- attention (takes the softmax it uses) --------------------------------------------------


def attention_ref(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ swap(K) / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, weights


def _att_unscaled(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ swap(K), axis=-1)
    return weights @ V, weights


def _att_by_dk(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ swap(K) / Q.shape[-1], axis=-1)
    return weights @ V, weights


def _att_transpose_v(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ K / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ swap(V), weights


def _att_transpose_v_dot_t(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ K / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V.T, weights


def _att_k_dot_t(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ K.T / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, weights


ATTENTION: dict[str, list[Callable]] = {
    "scale-missing": [_att_unscaled],
    "scale-not-sqrt": [_att_by_dk],
    "attention-transpose-v": [_att_transpose_v, _att_transpose_v_dot_t],
    "attention-3d-transpose": [_att_k_dot_t],
}


# --- multi_head_attention (takes split, attention, merge) -----------------------------------


def mha_ref(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    d_head = X.shape[-1] // num_heads
    Qh, Kh, Vh = (split(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out_heads, weights = attention(Qh, Kh, Vh)
    return merge(out_heads) @ Wo, weights


def _mha_no_wo(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = mha_ref(X, Wq, Wk, Wv, np.eye(X.shape[-1]), num_heads, split, attention, merge)
    return out, weights


def _mha_not_split(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = attention(X @ Wq, X @ Wk, X @ Wv)
    return out @ Wo, weights


def _mha_not_split_tiled(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = attention(X @ Wq, X @ Wk, X @ Wv)
    return out @ Wo, np.stack([weights] * num_heads)


def _mha_scale_d_model(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    d_model = X.shape[-1]
    d_head = d_model // num_heads
    Qh, Kh, Vh = (split(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    # queries rescaled so that the per-head attention divides by sqrt(d_model) in effect
    out_heads, weights = attention(Qh * math.sqrt(d_head / d_model), Kh, Vh)
    return merge(out_heads) @ Wo, weights


def _mha_not_split_one(X, Wq, Wk, Wv, Wo, num_heads, split, attention, merge):
    out, weights = attention(X @ Wq, X @ Wk, X @ Wv)
    return out @ Wo, weights[None]


MHA: dict[str, list[Callable]] = {
    "mha-no-output-projection": [_mha_no_wo],
    "mha-heads-not-split": [_mha_not_split, _mha_not_split_tiled, _mha_not_split_one],
    "scale-d-model": [_mha_scale_d_model],
}


# --- distinct_head_pairs ---------------------------------------------------------------------


def _pairs_allclose(weights, atol=1e-6):
    h = len(weights)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if not np.allclose(weights[i], weights[j], atol=atol)
    ]


DISTINCT: dict[str, list[Callable]] = {"pairs-relative-tolerance": [_pairs_allclose]}


# --- weights_from_torch --------------------------------------------------------------------


def torch_blocks(mha) -> dict[str, np.ndarray]:
    """The module's q, k, v and out weights as stored by torch: (out, in), float64."""
    import torch

    d = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    blocks = {name: w[i * d : (i + 1) * d] for i, name in enumerate("qkv")}
    blocks["o"] = mha.out_proj.weight.detach().to(torch.float64).numpy()
    return blocks


def _wft_no_transpose(mha):
    b = torch_blocks(mha)
    return tuple(b[k].copy() for k in "qkvo")


def _wft_kqv(mha):
    b = torch_blocks(mha)
    return tuple(b[k].T.copy() for k in "kqvo")


ADAPTER: dict[str, list[Callable]] = {
    "adapter-no-transpose": [_wft_no_transpose],
    "adapter-qkv-order": [_wft_kqv],
}


# --- cross_check (takes weights_from_torch and multi_head_attention) ------------------------


_FORWARDS: dict[tuple, tuple] = {}


def torch_forward(mha, X, layout: str = "right", average: bool = False):
    """Torch's output (n, d) and weights for one sequence X (cached: probes are reused).

    layout: "right" follows mha.batch_first; "batch" always feeds (1, n, d); "seq" (n, 1, d);
    "swapped" does the opposite of what batch_first asks.
    """
    import torch

    key = (id(mha), id(X), layout, average)
    if key in _FORWARDS:
        return _FORWARDS[key][2]
    batch_axis_first = {
        "right": mha.batch_first,
        "batch": True,
        "seq": False,
        "swapped": not mha.batch_first,
    }[layout]
    x = torch.as_tensor(np.asarray(X), dtype=mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if batch_axis_first else x.unsqueeze(1)
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=average)
    out = out[0] if batch_axis_first else out[:, 0]
    result = out.to(torch.float64).numpy(), w[0].to(torch.float64).numpy()
    if len(_FORWARDS) < 256:  # keep mha and X alive so their ids stay theirs
        _FORWARDS[key] = (mha, X, result)
    return result


def cross_check_with(mha, X, weights_from_torch, multi_head_attention, layout="right", avg=False):
    out_t, w_t = torch_forward(mha, X, layout, avg)
    Ws = weights_from_torch(mha)
    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64), *Ws, mha.num_heads)
    out_diff = float(np.max(np.abs(np.asarray(out) - out_t)))
    w_diff = float(np.max(np.abs(np.asarray(weights) - w_t)))
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff}


CROSS_CHECK: dict[str, list[dict]] = {  # keyword arguments of cross_check_with
    "adapter-averaged-weights": [{"avg": True}],
    "adapter-batch-first": [{"layout": "batch"}, {"layout": "seq"}, {"layout": "swapped"}],
}
