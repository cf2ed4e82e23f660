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
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias must be False")
    d_model = mha.embed_dim
    W_in = mha.in_proj_weight.detach().numpy().astype(np.float64)
    Wq = W_in[:d_model].T
    Wk = W_in[d_model:2 * d_model].T
    Wv = W_in[2 * d_model:].T
    Wo = mha.out_proj.weight.detach().numpy().astype(np.float64).T
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
    dtype = mha.in_proj_weight.dtype
    X_t = torch.tensor(X, dtype=dtype)
    if mha.batch_first:
        X_t = X_t.unsqueeze(0)
    else:
        X_t = X_t.unsqueeze(1)
    with torch.no_grad():
        out_t, w_t = mha(X_t, X_t, X_t, need_weights=True, average_attn_weights=False)
    if mha.batch_first:
        out_t = out_t[0]
    else:
        out_t = out_t[:, 0]
    out_t = out_t.double().numpy()
    w_t = w_t[0].double().numpy()
    Wq, Wk, Wv, Wo = weights_from_torch(mha)
    out, weights = multi_head_attention(X.astype(np.float64), Wq, Wk, Wv, Wo, mha.num_heads)
    output_diff = float(np.max(np.abs(out - out_t)))
    weights_diff = float(np.max(np.abs(weights - w_t)))
    if dtype == torch.float32:
        tol = 1e-4
    else:
        tol = 1e-9
    scale = max(1.0, float(np.max(np.abs(out))))
    match = output_diff <= tol * scale and weights_diff <= tol
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff, "match": bool(match)}
