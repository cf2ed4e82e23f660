# Modelled on pyg-team/pytorch_geometric's habits: node features as one flat `[num_nodes,
# num_features]` matrix with no batch axis (`x = data.x`), `torch.no_grad()`, `.detach()`,
# `torch.allclose(out, expected, atol=1e-6)` in its tests: written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("lin_key / lin_value with other in_channels are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias=True is not supported")
    lin_query, lin_key, lin_value = mha.in_proj_weight.detach().double().chunk(3, dim=0)
    lin = mha.out_proj.weight.detach().double()
    return tuple(w.t().contiguous().numpy() for w in (lin_query, lin_key, lin_value, lin))


def cross_check(mha, X):
    x = torch.from_numpy(np.asarray(X)).to(mha.in_proj_weight.dtype)  # [num_nodes, channels]
    with torch.no_grad():
        # an unbatched (L, E) input: batch_first does not matter
        expected, expected_alpha = mha(x, x, x, need_weights=True, average_attn_weights=False)
    expected = expected.double().numpy()
    expected_alpha = expected_alpha.double().numpy()                     # [H, L, S]
    out, alpha = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                      mha.num_heads)
    out_diff = float(np.abs(out - expected).max())
    alpha_diff = float(np.abs(alpha - expected_alpha).max())
    atol = 1e-6 if mha.in_proj_weight.dtype == torch.float64 else 1e-4
    size = max(1.0, float(np.abs(expected).max()))
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": alpha_diff,
            "match": out_diff <= atol * size and alpha_diff <= atol}
