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
    # YOUR CODE HERE
    raise NotImplementedError("weights_from_torch")


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
      dtype (float32 keeps about 7 significant digits, float64 about 16): on a float64 module a
      difference above 1e-3 of the output's size is never a match.
    """
    # YOUR CODE HERE
    raise NotImplementedError("cross_check")
