# Modelled on huggingface/transformers, src/transformers/models/gpt_neo/modeling_gpt_neo.py
# (load_tf_weights_in_gpt_neo: the q_proj / k_proj / v_proj / out_proj kernels transposed with
# `array.transpose()`, shapes checked by assert-and-reraise) and GPT-Neo's habit of keeping the
# attention in fp32: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("separate q_proj / k_proj / v_proj (kdim or vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("expected a module built with bias=False")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported")

    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().to(torch.float64).cpu().numpy()
    names = ["q_proj", "k_proj", "v_proj"]
    arrays = {}
    for i, name in enumerate(names):
        # torch keeps (out, in); x @ W wants (in, out)
        arrays[name] = in_proj[i * embed_dim:(i + 1) * embed_dim].transpose().copy()
    arrays["out_proj"] = mha.out_proj.weight.detach().to(torch.float64).cpu().numpy().transpose().copy()
    for name, array in arrays.items():
        assert array.shape == (embed_dim, embed_dim), f"{name} has shape {array.shape}"
    return arrays["q_proj"], arrays["k_proj"], arrays["v_proj"], arrays["out_proj"]


def cross_check(mha, X):
    # Keep the attention computation in fp32 to avoid overflow issues
    hidden_states = torch.tensor(np.asarray(X), dtype=torch.float32)
    if mha.batch_first:
        hidden_states = hidden_states.unsqueeze(0)
    else:
        hidden_states = hidden_states.unsqueeze(1)

    with torch.no_grad():
        attn_output, attn_weights = mha(
            hidden_states, hidden_states, hidden_states,
            need_weights=True, average_attn_weights=False,
        )
    if mha.batch_first:
        attn_output = attn_output[0]
    else:
        attn_output = attn_output[:, 0]
    attn_output = attn_output.double().numpy()
    attn_weights = attn_weights[0].double().numpy()

    out, weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    output_diff = float(np.max(np.abs(out - attn_output)))
    weights_diff = float(np.max(np.abs(weights - attn_weights)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": bool(output_diff <= tol * max(1.0, float(np.max(np.abs(attn_output))))
                      and weights_diff <= tol),
    }
