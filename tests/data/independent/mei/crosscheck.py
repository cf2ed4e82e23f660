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
        raise ValueError("separate projection weights")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias present")
    d = mha.embed_dim
    w = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64)
    mats = [w[i * d:(i + 1) * d, :].T for i in range(3)]
    mats.append(mha.out_proj.weight.detach().cpu().numpy().astype(np.float64).T)
    return tuple(np.array(m) for m in mats)


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
    x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x.reshape(1, *x.shape) if mha.batch_first else x.reshape(x.shape[0], 1, x.shape[1])
    mha.eval()
    with torch.no_grad():
        ref_out, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref_out = ref_out.reshape(X.shape).double().numpy()
    ref_w = ref_w.reshape(mha.num_heads, X.shape[0], X.shape[0]).double().numpy()
    my_out, my_w = multi_head_attention(np.float64(X), *weights_from_torch(mha), mha.num_heads)
    od = float(np.abs(my_out - ref_out).max())
    wd = float(np.abs(my_w - ref_w).max())
    eps = 1e-5 if mha.in_proj_weight.dtype == torch.float32 else 1e-10
    scale = max(1.0, float(np.abs(ref_out).max()))
    return {"output_max_abs_diff": od, "weights_max_abs_diff": wd, "match": od <= 10 * eps * scale and wd <= 10 * eps}
