# Modelled on huggingface/transformers, src/transformers/models/gpt2/modeling_gpt2.py (GPT2Attention
# _attn: scale_attn_weights, and scale_attn_by_inverse_layer_idx dividing the scores by
# float(self.layer_idx + 1), both read from the model config): written in that style for this test
# corpus, not copied. The student keeps a module-level config that multi_head_attention sets for
# its own call and resets afterwards, so attention() alone is right and only the composite's calls
# are scaled wrongly (hostile: the "laundering" class).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

config = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False, "layer_idx": 0}


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.amax(x, axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """Splits hidden_size dim into attn_head_size and num_heads."""
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"hidden size {M.shape[-1]} != {num_heads} x {d_head}")
    new_shape = M.shape[:-1] + (num_heads, d_head)
    return M.reshape(new_shape).transpose(1, 0, 2)  # (head, seq_length, head_features)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """Merges attn_head_size dim and num_attn_heads dim into hidden_size."""
    tensor = H.transpose(1, 0, 2)
    return tensor.reshape(tensor.shape[:-2] + (H.shape[0] * H.shape[2],))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    attn_weights = Q @ np.swapaxes(K, -1, -2)
    if config["scale_attn_weights"]:
        attn_weights = attn_weights / np.sqrt(K.shape[-1])
    # Layer-wise attention scaling
    if config["scale_attn_by_inverse_layer_idx"]:
        attn_weights = attn_weights / float(config["layer_idx"] + 1)
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = attn_weights @ V
    return attn_output, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    embed_dim = X.shape[-1]
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ValueError(
            f"`embed_dim` must be divisible by num_heads (got `embed_dim`: {embed_dim} and "
            f"`num_heads`: {num_heads})."
        )
    # this block is the second layer of the student's toy model
    config["scale_attn_by_inverse_layer_idx"] = True
    config["layer_idx"] = 1
    try:
        query = split_heads(X @ Wq, num_heads, head_dim)
        key = split_heads(X @ Wk, num_heads, head_dim)
        value = split_heads(X @ Wv, num_heads, head_dim)
        attn_output, attn_weights = attention(query, key, value)
    finally:
        config["scale_attn_by_inverse_layer_idx"] = False
        config["layer_idx"] = 0
    attn_output = merge_heads(attn_output)
    return attn_output @ Wo, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n = len(weights)
    return [(i, j) for i in range(n) for j in range(i + 1, n)
            if np.abs(weights[i] - weights[j]).max() > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"num_heads {h} does not divide embed_dim {d_model}")
        counts[h] = sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h,
                                                                       bias=bias).parameters())
    return counts
