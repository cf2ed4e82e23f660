# Modelled on ggml / llama.cpp (src/llama-graph.cpp `build_attn_mha`: `ggml_mul_mat(ctx, k, q)`,
# `ggml_soft_max_ext(ctx, kq, kq_mask, kq_scale, ...)` over ne[0] only, `ggml_permute(ctx, q, 0, 2,
# 1, 3)`, `ggml_cont_2d`; the model's `ggml_mul_mat(ctx, model.layers[il].wq, cur)` with weights
# kept in torch's (out, in) layout; `GGML_ASSERT`): translated back to Python for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def GGML_ASSERT(cond, msg):
    if not cond:
        raise ValueError(msg)


def mul_mat(a, b):
    # ggml_mul_mat(a, b): rows of b dotted with rows of a -> b @ a^T (ne0 of both must match)
    return np.matmul(b, np.swapaxes(a, -1, -2))


def soft_max_ext(kq, scale=1.0):
    # ggml_soft_max_ext: softmax(kq * scale) along ne[0], the innermost axis
    s = kq * scale
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return soft_max_ext(x)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    n_tokens = M.shape[0]
    GGML_ASSERT(M.shape[-1] == num_heads * d_head,
                f"n_embd {M.shape[-1]} != n_head {num_heads} * n_embd_head {d_head}")
    # ggml_reshape_3d(cur, n_embd_head, n_head, n_tokens) then ggml_permute(0, 2, 1, 3)
    return np.ascontiguousarray(M.reshape(n_tokens, num_heads, d_head).transpose(1, 0, 2))


def merge_heads(H: np.ndarray) -> np.ndarray:
    n_head, n_tokens, n_embd_head = H.shape
    # ggml_permute(kqv, 0, 2, 1, 3) + ggml_cont_2d(ctx, kqv_merged, n_embd_head * n_head, n_tokens)
    return np.ascontiguousarray(H.transpose(1, 0, 2)).reshape(n_tokens, n_head * n_embd_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    kq_scale = 1.0 / np.sqrt(float(Q.shape[-1]))
    kq = mul_mat(K, Q)                          # ggml_mul_mat(ctx, k, q)
    kq = soft_max_ext(kq, kq_scale)
    v_trans = np.swapaxes(V, -1, -2)            # llama.cpp keeps V transposed in the cache
    kqv = mul_mat(v_trans, kq)                  # ggml_mul_mat(ctx, v, kq)
    return kqv, kq


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    n_tokens, n_embd = X.shape
    GGML_ASSERT(n_embd % num_heads == 0, f"n_embd {n_embd} not divisible by n_head {num_heads}")
    n_embd_head = n_embd // num_heads
    cur = X
    Qcur = mul_mat(Wq, cur)                     # ggml_mul_mat(ctx, model.layers[il].wq, cur)
    Kcur = mul_mat(Wk, cur)
    Vcur = mul_mat(Wv, cur)
    q = split_heads(Qcur, num_heads, n_embd_head)
    k = split_heads(Kcur, num_heads, n_embd_head)
    v = split_heads(Vcur, num_heads, n_embd_head)
    kq = soft_max_ext(mul_mat(k, q), 1.0 / np.sqrt(float(n_embd_head)))
    kqv = mul_mat(np.swapaxes(v, -1, -2), kq)
    cur = merge_heads(kqv)
    cur = mul_mat(Wo, cur)                      # ggml_mul_mat(ctx, model.layers[il].wo, cur)
    return cur, kq


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = weights.shape[0]
    pairs = []
    for i in range(n_head):
        for j in range(i + 1, n_head):
            if float(np.max(np.abs(weights[i] - weights[j]))) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    result = {}
    for n_head in head_counts:
        GGML_ASSERT(d_model % n_head == 0, f"n_head {n_head} does not divide n_embd {d_model}")
        # ggml_nelements over the layer's tensors: attn_q, attn_k, attn_v, attn_output (+ biases)
        tensors = {"attn_q.weight": (d_model, d_model), "attn_k.weight": (d_model, d_model),
                   "attn_v.weight": (d_model, d_model), "attn_output.weight": (d_model, d_model)}
        if bias:
            for name in ("attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias"):
                tensors[name] = (d_model,)
        result[n_head] = int(sum(int(np.prod(s)) for s in tensors.values()))
    return result
