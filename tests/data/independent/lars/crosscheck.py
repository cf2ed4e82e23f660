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
    if not getattr(mha, "_qkv_same_embed_dim", True):
        raise ValueError("q_proj_weight/k_proj_weight/v_proj_weight are separate")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module built with bias=True")
    E = mha.embed_dim
    ipw = mha.in_proj_weight.detach().numpy().astype("float64")
    opw = mha.out_proj.weight.detach().numpy().astype("float64")
    return ipw[:E].T.copy(), ipw[E:2 * E].T.copy(), ipw[2 * E:3 * E].T.copy(), opw.T.copy()


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
    Xt = torch.tensor(np.asarray(X), dtype=mha.in_proj_weight.dtype)
    batch = Xt.unsqueeze(0) if mha.batch_first else Xt.unsqueeze(1)
    with torch.no_grad():
        o_t, w_t = mha(batch, batch, batch, average_attn_weights=False)
    if mha.batch_first:
        o_t = o_t[0]
    else:
        o_t = o_t[:, 0]
    o_t = o_t.numpy().astype(np.float64)
    w_t = w_t[0].numpy().astype(np.float64)
    o_n, w_n = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(abs(o_n - o_t).max())
    w_diff = float(abs(w_n - w_t).max())
    rel = {torch.float32: 2e-5, torch.float64: 1e-10}.get(mha.in_proj_weight.dtype, 1e-4)
    mag = max(1.0, float(abs(o_n).max()))
    return dict(output_max_abs_diff=out_diff, weights_max_abs_diff=w_diff, match=bool(out_diff < rel * mag * 5 and w_diff < rel * 5))
