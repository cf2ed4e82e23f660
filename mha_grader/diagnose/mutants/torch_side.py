"""weights_from_torch's and cross_check's catalogued mistakes, and the torch forward pass they
are compared with."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def torch_blocks(mha) -> dict[str, np.ndarray]:
    """The module's q, k, v and out weights as stored by torch: (out, in), float64."""
    import torch

    d = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    blocks = {name: w[i * d : (i + 1) * d] for i, name in enumerate("qkv")}
    blocks["o"] = mha.out_proj.weight.detach().to(torch.float64).numpy()
    return blocks


# --- weights_from_torch --------------------------------------------------------------------


def _refuse(mha) -> None:
    """The contract's ValueErrors, so that a mutant stands for its one mistake only."""
    if mha.in_proj_weight is None or mha.in_proj_bias is not None or mha.bias_k is not None:
        raise ValueError("a module with biases or separate projections")
    if mha.out_proj.bias is not None:
        raise ValueError("a module with biases")


def _wft_no_transpose(mha):
    _refuse(mha)
    b = torch_blocks(mha)
    return tuple(b[k].copy() for k in "qkvo")


def _wft_kqv(mha):
    _refuse(mha)
    b = torch_blocks(mha)
    return tuple(b[k].T.copy() for k in "kqvo")


def _wft_module_dtype(mha):
    from solutions import crosscheck as ref_cc  # torch: imported when first needed

    found = ref_cc.weights_from_torch(mha)
    dtype = mha.in_proj_weight.detach().numpy().dtype
    return tuple(w.astype(dtype) for w in found)


def _wft_no_checks(mha):  # biases ignored; separate projections fail on in_proj_weight None
    b = torch_blocks(mha)
    return tuple(b[k].T.copy() for k in "qkvo")


def _wft_per_head(mha):  # Megatron's fused query_key_value: [heads, 3, d_head, d_model]
    _refuse(mha)
    import torch

    d, h = mha.embed_dim, mha.num_heads
    w = mha.in_proj_weight.detach().to(torch.float64).numpy().reshape(h, 3, d // h, d)
    Wq, Wk, Wv = (w[:, i].reshape(d, d).T.copy() for i in range(3))
    return Wq, Wk, Wv, mha.out_proj.weight.detach().to(torch.float64).numpy().T.copy()


ADAPTER: dict[str, list[Callable]] = {
    "adapter-no-transpose": [_wft_no_transpose],
    "adapter-qkv-order": [_wft_kqv],
    "adapter-float32-weights": [_wft_module_dtype],
    "adapter-no-valueerror": [_wft_no_checks],
    "adapter-qkv-interleaved": [_wft_per_head],
}


# --- cross_check (takes weights_from_torch and multi_head_attention) ------------------------


_FORWARDS: dict[tuple, tuple] = {}


def torch_forward(
    mha,
    X,
    layout: str = "right",
    average: bool = False,
    grad: bool = False,
    dtype: str = "",
    mask: str = "",
):
    """Torch's output (n, d) and weights for one sequence X (cached: probes are reused).

    layout: "right" follows mha.batch_first; "batch" always feeds (1, n, d); "seq" (n, 1, d);
    "swapped" does the opposite of what batch_first asks. ``grad``: run the module outside
    no_grad and take the arrays out without detaching, which torch refuses (RuntimeError).
    ``dtype``: X converted to this torch dtype ("float32": ``.float()``) whatever the module's,
    which torch refuses for a module of the other dtype (RuntimeError); "": the module's own.
    ``mask``: the module called with a mask of the caller's own, "zero-rows" (a
    ``key_padding_mask`` marking the tokens whose features are all 0 as padding, AllenNLP's
    ``get_text_field_mask``) or "causal" (``is_causal`` with its ``attn_mask``); "": no mask.
    """
    import torch

    key = (id(mha), id(X), layout, average, dtype, mask)
    if key in _FORWARDS and not grad:
        return _FORWARDS[key][2]
    batch_axis_first = {
        "right": mha.batch_first,
        "batch": True,
        "seq": False,
        "swapped": not mha.batch_first,
    }[layout]
    x = torch.as_tensor(np.asarray(X), dtype=getattr(torch, dtype or "float64"))
    if not dtype:
        x = x.to(mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if batch_axis_first else x.unsqueeze(1)
    masks: dict = {}
    if mask == "zero-rows":
        rows = torch.as_tensor(np.asarray(X) != 0).any(dim=-1)
        masks = {"key_padding_mask": ~rows.unsqueeze(0)}
    elif mask == "causal":
        n = len(X)
        masks = {"attn_mask": torch.ones(n, n, dtype=torch.bool).triu(1), "is_causal": True}
    if grad:
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=average, **masks)
        return out.numpy(), w.numpy()  # RuntimeError: the outputs require grad
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=average, **masks)
    out = out[0] if batch_axis_first else out[:, 0]
    result = out.to(torch.float64).numpy(), w[0].to(torch.float64).numpy()
    if len(_FORWARDS) < 256:  # keep mha and X alive so their ids stay theirs
        _FORWARDS[key] = (mha, X, result)
    return result


def cross_check_with(
    mha,
    X,
    weights_from_torch,
    multi_head_attention,
    layout="right",
    avg=False,
    grad=False,
    dtype="",
    out32=False,
    relative="",
    mask="",
):
    out_t, w_t = torch_forward(mha, X, layout, avg, grad, dtype, mask)
    if out32:  # llama's output.float(): torch's results rounded to float32 before comparing
        out_t, w_t = (a.astype(np.float32).astype(np.float64) for a in (out_t, w_t))
    Ws = weights_from_torch(mha)
    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64), *Ws, mha.num_heads)
    if relative:  # a relative error reported where the largest absolute difference belongs
        measure = RELATIVE[relative][1]
        with np.errstate(all="ignore"):
            out_diff = float(measure(np.asarray(out, dtype=np.float64), out_t))
            w_diff = float(measure(np.asarray(weights, dtype=np.float64), w_t))
        return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff}
    out_diff = float(np.max(np.abs(np.asarray(out) - out_t)))
    w_diff = float(np.max(np.abs(np.asarray(weights) - w_t)))
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff}


def _top(x, y):
    return np.max(np.abs(x - y))


# Relative errors a cross_check may report in place of the largest absolute difference, x
# ours, y torch's: (how it is said, the measure).
RELATIVE: dict[str, tuple[str, object]] = {
    "over-sum": (
        "the largest difference divided by the largest |x| + |y| (a course notebook's rel_error)",
        lambda x, y: _top(x, y) / np.max(np.maximum(np.abs(x) + np.abs(y), 1e-10)),
    ),
    "entrywise-sum": (
        "the largest of |x - y| / (|x| + |y|) entry by entry (CS231n's rel_error)",
        lambda x, y: np.max(np.abs(x - y) / np.maximum(1e-8, np.abs(x) + np.abs(y))),
    ),
    "over-torch": (
        "the largest difference divided by the largest entry of torch's result",
        lambda x, y: _top(x, y) / np.max(np.abs(y)),
    ),
    "over-ours": (
        "the largest difference divided by the largest entry of your pipeline's result",
        lambda x, y: _top(x, y) / np.max(np.abs(x)),
    ),
    "norm-torch": (
        "the norm of the difference divided by the norm of torch's result",
        lambda x, y: np.linalg.norm(x - y) / np.linalg.norm(y),
    ),
    "norm-sum": (
        "the norm of the difference divided by the sum of the two norms",
        lambda x, y: np.linalg.norm(x - y) / (np.linalg.norm(x) + np.linalg.norm(y)),
    ),
}


CROSS_CHECK: dict[str, list[dict]] = {  # keyword arguments of cross_check_with
    "adapter-averaged-weights": [{"avg": True}],
    "adapter-batch-first": [{"layout": "batch"}, {"layout": "seq"}, {"layout": "swapped"}],
    "adapter-no-detach": [{"grad": True}],
    "adapter-fixed-dtype": [{"dtype": "float32"}, {"dtype": "float64"}],
    "adapter-float32-output": [{"out32": True}],
    "adapter-masked-module-call": [{"mask": "zero-rows"}, {"mask": "causal"}],
}
