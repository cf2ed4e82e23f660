# Modelled on huggingface/transformers, models/opt/modeling_opt.py (OPTAttention: query_states =
# q_proj(hidden_states) * self.scaling; _shape and proj_shape = (bsz * num_heads, -1, head_dim);
# torch.bmm(query_states, key_states.transpose(1, 2)); the fp16 upcast of the softmax;
# attn_weights_reshaped kept for output_attentions before attn_probs =
# nn.functional.dropout(attn_weights, p=self.dropout, training=self.training); the output
# transpose(1, 2).reshape(bsz, tgt_len, embed_dim)): written in that style for this test corpus,
# not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

DROPOUT = 0.1  # OPTConfig.dropout
TRAINING = True  # an nn.Module is in training mode until .eval()


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # upcast to fp32 if the weights are in fp16
    if x.dtype == np.float16:
        return softmax(x.astype(np.float32), axis=axis).astype(np.float16)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # _shape: view(bsz, seq_len, num_heads, head_dim).transpose(1, 2), without the batch
    seq_len, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError(
            f"embed_dim must be num_heads * head_dim (got `embed_dim`: {embed_dim} and"
            f" `num_heads`: {num_heads}, `head_dim`: {d_head})."
        )
    return M.reshape(seq_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, tgt_len, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(tgt_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scaling = Q.shape[-1] ** -0.5
    query_states = Q * scaling
    attn_weights = np.matmul(query_states, np.swapaxes(K, -1, -2))
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = np.matmul(attn_weights, V)
    return attn_output, attn_weights


def dropout(x: np.ndarray, p: float, training: bool) -> np.ndarray:
    if not training or p == 0.0:
        return x
    mask = np.random.rand(*x.shape) >= p
    return x * mask / (1.0 - p)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    tgt_len, embed_dim = X.shape
    head_dim = embed_dim // num_heads
    if (head_dim * num_heads) != embed_dim:
        raise ValueError(
            f"embed_dim must be divisible by num_heads (got `embed_dim`: {embed_dim}"
            f" and `num_heads`: {num_heads})."
        )
    scaling = head_dim ** -0.5

    # get query proj
    query_states = (X @ Wq) * scaling
    key_states = split_heads(X @ Wk, num_heads, head_dim)
    value_states = split_heads(X @ Wv, num_heads, head_dim)
    query_states = split_heads(query_states, num_heads, head_dim)

    src_len = key_states.shape[1]
    attn_weights = np.matmul(query_states, key_states.transpose(0, 2, 1))
    attn_weights = softmax(attn_weights, axis=-1)

    # kept for output_attentions
    attn_weights_reshaped = attn_weights.reshape(num_heads, tgt_len, src_len)

    attn_probs = dropout(attn_weights, p=DROPOUT, training=TRAINING)
    attn_output = np.matmul(attn_probs, value_states)

    attn_output = attn_output.transpose(1, 0, 2).reshape(tgt_len, embed_dim)
    attn_output = attn_output @ Wo
    return attn_output, attn_weights_reshaped


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if (np.abs(weights[i] - weights[j]) > atol).any():
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        head_dim = d_model // num_heads
        if head_dim * num_heads != d_model:
            raise ValueError(
                f"embed_dim must be divisible by num_heads (got `embed_dim`: {d_model}"
                f" and `num_heads`: {num_heads})."
            )
        # k_proj, v_proj, q_proj, out_proj: nn.Linear(embed_dim, embed_dim, bias=enable_bias)
        counts[num_heads] = 4 * (d_model * d_model + (d_model if bias else 0))
    return counts
