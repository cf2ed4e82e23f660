"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention.

Fill in both functions (``YOUR CODE HERE``). Your own pipeline is available below.

How PyTorch stores the weights of ``nn.MultiheadAttention(d_model, num_heads, bias=False)``:
- ``mha.in_proj_weight``: shape (3*d_model, d_model), the q, k and v projections stacked row-wise;
- ``mha.out_proj.weight``: shape (d_model, d_model);
- every Linear layer stores its weight as (out_features, in_features) and computes ``x @ W.T``.
"""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention  # noqa: F401  (your own pipeline)


def weights_from_torch(
    mha: torch.nn.MultiheadAttention,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Read PyTorch's weights into the layout ``multi_head_attention`` expects.

    Inputs:
    - mha: a ``torch.nn.MultiheadAttention`` built with ``bias=False`` (float32 or float64).

    Returns a tuple ``(Wq, Wk, Wv, Wo)``:
    - four float64 NumPy arrays of shape (d_model, d_model), such that
      ``multi_head_attention(X, Wq, Wk, Wv, Wo, mha.num_heads)`` computes what ``mha`` computes
      (used as ``X @ W``).

    Raises:
    - ValueError for a module with biases (``mha.in_proj_bias`` or ``mha.out_proj.bias`` is not
      None, or ``add_bias_kv``), or with separate q/k/v projections (``kdim``/``vdim`` differing
      from ``embed_dim``: then ``mha.in_proj_weight`` is None).

    Hint: detach the tensors before ``.numpy()``; mind which block of ``in_proj_weight`` is
    which, and torch's (out, in) layout.
    """
    if not mha._qkv_same_embed_dim:
        raise ValueError("separate q/k/v projection weights")
    for b in (mha.in_proj_bias, mha.out_proj.bias, mha.bias_k, mha.bias_v):
        if b is not None:
            raise ValueError("biases are not allowed")
    chunks = torch.chunk(mha.in_proj_weight.detach().double(), 3, dim=0)
    Wq, Wk, Wv = (c.t().contiguous().numpy() for c in chunks)
    Wo = mha.out_proj.weight.detach().double().t().contiguous().numpy()
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    """Run the same input through ``mha`` and through your implementation, and compare.

    Inputs:
    - mha: a ``torch.nn.MultiheadAttention`` with ``bias=False``; float32 or float64;
      ``batch_first`` True (expects (batch, n, d_model)) or False (expects (n, batch, d_model)).
    - X: NumPy array of shape (n, d_model), one sequence.

    Returns a dict with:
    - ``"output_max_abs_diff"``: float, the largest |difference| between the two (n, d_model)
      outputs;
    - ``"weights_max_abs_diff"``: float, the largest |difference| between the two sets of
      per-head weights, shape (num_heads, n, n) (call ``mha`` with ``need_weights=True,
      average_attn_weights=False``; torch returns them as (batch, num_heads, n, n));
    - ``"match"``: bool, True when both differences are within a tolerance fit for the module's
      dtype (float32 keeps about 7 significant digits, float64 about 16).
    """
    xs = torch.tensor(np.asarray(X), dtype=mha.in_proj_weight.dtype)
    xs = xs.unsqueeze(0 if mha.batch_first else 1)
    with torch.inference_mode():
        y, att = mha(xs, xs, xs, need_weights=True, average_attn_weights=False)
    y = y.select(0 if mha.batch_first else 1, 0).double().numpy()
    att = att[0].double().numpy()
    y2, att2 = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    result = {"output_max_abs_diff": float(np.abs(y - y2).max()), "weights_max_abs_diff": float(np.abs(att - att2).max())}
    lim = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-9
    result["match"] = bool(result["output_max_abs_diff"] <= lim * max(1.0, float(np.abs(y).max())) and result["weights_max_abs_diff"] <= lim)
    return result
