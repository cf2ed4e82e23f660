"""Probe inputs of the diagnosis: the grader's own, unrelated to any hidden test.

Chosen so that every catalogued mistake gives a different result (tests/test_diagnose_probes.py
checks every pair): n >= 2, num_heads >= 2, d_head >= 2, n != d_head, num_heads != d_head
(so sqrt(d_model) differs from d_head), non-symmetric weights at a moderate scale, plus a
large-score probe for softmax stability, a few square shapes on which shape-dependent
mistakes run instead of raising, and inputs of every rank attention must take (2-D, 3-D, 4-D).

The ``*_refusal_probes`` are inputs the contract says must raise ValueError: a function that
returns something there, or raises another exception, misses the check (``*-no-valueerror``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Probe:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    large: bool = False  # a large-score probe: only numerically stable code passes it

    def describe(self) -> str:
        """Shapes of the inputs, for messages (probes are not hidden, so this may be shown)."""
        parts = [_shape_of(a) for a in self.args]
        parts += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def _shape_of(a: Any) -> str:
    if isinstance(a, np.ndarray):
        return f"array of shape {a.shape}"
    if type(a).__name__ == "MultiheadAttention":
        dtype = str(a.in_proj_weight.dtype).removeprefix("torch.")
        return (
            f"MultiheadAttention({a.embed_dim}, {a.num_heads}, {dtype}, "
            f"batch_first={a.batch_first})"
        )
    return repr(a)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(20260 + seed)


@cache
def softmax_probes() -> tuple[Probe, ...]:
    r = _rng(1)
    large = r.standard_normal((3, 4)) * 3000
    large[1] -= 8000  # a row far below zero: exp underflows to 0 without the shift
    return (
        Probe((r.standard_normal((3, 5)),), {"axis": -1}),
        Probe((r.standard_normal((2, 3, 4)),), {"axis": -1}),
        Probe((r.standard_normal((4, 3)),), {"axis": 0}),
        Probe((r.standard_normal((3, 3)),), {"axis": -1}),  # square: keepdims slips run here
        Probe((r.standard_normal((2, 3, 4)),), {"axis": 1}),
        Probe((r.standard_normal((2, 5)),)),  # the default axis
        Probe((large,), {"axis": -1}, large=True),
        # the default axis on a 1-D and a 3-D array: a default other than -1 (Chainer's axis=1)
        # shows here, as an AxisError or the middle axis
        Probe((_rng(21).standard_normal(6),)),
        Probe((_rng(22).standard_normal((2, 4, 3)),)),
    )


@cache
def split_probes() -> tuple[Probe, ...]:
    r = _rng(2)
    return (
        Probe((r.standard_normal((4, 6)), 2, 3)),
        Probe((r.standard_normal((6, 12)), 3, 4)),
        Probe((r.standard_normal((4, 8)), 4, 2)),
    )


@cache
def split_refusal_probes() -> tuple[Probe, ...]:
    """Widths other than num_heads * d_head that a reshape with -1, an even split or
    d_model // num_heads would still cut into heads."""
    r = _rng(12)
    return (Probe((r.standard_normal((4, 6)), 2, 2)), Probe((r.standard_normal((3, 8)), 2, 3)))


@cache
def merge_probes() -> tuple[Probe, ...]:
    r = _rng(3)
    return (
        Probe((r.standard_normal((2, 4, 3)),)),
        Probe((r.standard_normal((3, 5, 2)),)),
        Probe((r.standard_normal((4, 3, 2)),)),
    )


@cache
def attention_probes() -> tuple[Probe, ...]:
    r = _rng(4)

    def qkv(*shape_q: int, m: int, d_v: int, scale: float = 1.0) -> tuple:
        *lead, n, d_k = shape_q
        return (
            r.standard_normal((*lead, n, d_k)) * scale,
            r.standard_normal((*lead, m, d_k)) * scale,
            r.standard_normal((*lead, m, d_v)),
        )

    return (
        Probe(qkv(4, 3, m=5, d_v=2)),  # one head, n != m, d_k != d_v
        Probe(qkv(2, 4, 3, m=5, d_v=4)),  # stacked heads
        Probe(qkv(2, 3, 4, 2, m=4, d_v=3)),  # batch and head axes
        Probe(qkv(3, 3, m=3, d_v=3)),  # square: a transposed V runs here
        Probe(qkv(3, 3, 3, m=3, d_v=3)),  # all sizes equal: K.T on stacked heads runs here
        Probe(qkv(2, 3, 4, m=5, d_v=2, scale=40.0), large=True),
    )


def _weights(r: np.random.Generator, d_model: int, scale: float = 1.0) -> list[np.ndarray]:
    return [r.standard_normal((d_model, d_model)) * scale / np.sqrt(d_model) for _ in range(4)]


@cache
def mha_probes() -> tuple[Probe, ...]:
    r = _rng(5)
    out = []
    for n, d_model, h, scale in [(5, 6, 2, 1.0), (4, 8, 4, 1.0), (6, 12, 3, 1.0), (5, 6, 2, 25.0)]:
        X = r.standard_normal((n, d_model))
        out.append(Probe((X, *_weights(r, d_model, scale), h), large=scale > 1))
    return tuple(out)


@cache
def mha_refusal_probes() -> tuple[Probe, ...]:
    """num_heads that do not divide d_model."""
    r = _rng(13)
    out = []
    for n, d_model, h in [(4, 6, 4), (3, 8, 3)]:
        out.append(Probe((r.standard_normal((n, d_model)), *_weights(r, d_model), h)))
    return tuple(out)


def make_module(
    d_model: int, num_heads: int, dtype: str, batch_first: bool, seed: int, **options: Any
) -> Any:
    """A torch MultiheadAttention with seeded, non-symmetric weights; bias-free unless
    ``options`` (the module's own keyword arguments) say otherwise."""
    import torch

    r = _rng(seed)
    options = {"bias": False, **options}
    mha = torch.nn.MultiheadAttention(
        d_model, num_heads, batch_first=batch_first, dtype=getattr(torch, dtype), **options
    )
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.from_numpy(r.standard_normal(tuple(p.shape))) * 0.4)
    return mha.eval()


@cache
def adapter_probes() -> tuple[Probe, ...]:
    return (
        Probe((make_module(6, 2, "float64", False, 6),)),
        Probe((make_module(8, 4, "float32", True, 7),)),
    )


@cache
def adapter_refusal_probes() -> tuple[Probe, ...]:
    """Modules weights_from_torch must refuse: biases, bias_k/bias_v, separate projections."""
    return (
        Probe((make_module(6, 2, "float64", False, 11, bias=True),)),
        Probe((make_module(6, 2, "float64", True, 12, add_bias_kv=True),)),
        Probe((make_module(6, 2, "float64", False, 13, kdim=4, vdim=4),)),
    )


@cache
def crosscheck_probes() -> tuple[Probe, ...]:
    r = _rng(8)
    out = []
    for i, (dtype, batch_first) in enumerate(
        [("float64", False), ("float64", True), ("float32", False), ("float32", True)]
    ):
        d_model, h = (6, 2) if i % 2 == 0 else (8, 4)
        X = r.standard_normal((5, d_model))
        out.append(Probe((make_module(d_model, h, dtype, batch_first, 9 + i), X)))
    # float32 with many output entries, some near zero: float32 rounding there is far above
    # allclose's default atol (1e-8), so a tolerance too strict for float32 shows
    X = _rng(23).standard_normal((16, 12))
    out.append(Probe((make_module(12, 3, "float32", False, 24), X)))
    # float64 whose token 1 has features all 0: a token like any other (the module is called
    # without a mask), which a padding mask read from X's values drops as a key
    X = _rng(25).standard_normal((4, 6))
    X[1] = 0.0
    out.append(Probe((make_module(6, 2, "float64", True, 26), X)))
    return tuple(out)


@cache
def distinct_probes() -> tuple[Probe, ...]:
    r = _rng(10)
    w = r.random((4, 3, 3))
    w[2] = w[0]  # heads 0 and 2 identical
    w[3] = w[1] + 1e-9  # heads 1 and 3 within atol
    w2 = r.random((3, 2, 2))
    # Weights near 1 that differ by a few times the default atol: a relative tolerance of 1e-5
    # (allclose's) calls heads 0 and 1 the same, atol alone does not.
    near_one = np.full((3, 2, 2), 0.97)
    near_one[1, 0, 0] += 4e-6
    near_one[2, 1, 1] -= 0.2
    return (Probe((w,)), Probe((w2,), {"atol": 0.5}), Probe((w2,)), Probe((near_one,)))


@cache
def count_probes() -> tuple[Probe, ...]:
    return (Probe((8, [1, 2, 4, 8])), Probe((12, [1, 3]), {"bias": True}))


@cache
def count_generator_probes() -> tuple[Probe, ...]:
    """Head counts that reach the student's function as a generator (read only once)."""
    from ..sandbox.worker.wire import Once

    return (Probe((12, Once((1, 2, 3, 4))), {"bias": False}),)


@cache
def count_refusal_probes() -> tuple[Probe, ...]:
    """Head counts that do not divide d_model, beside ones that do."""
    return (Probe((12, [2, 5, 3])), Probe((8, [3]), {"bias": True}))


def first_probe(qid: str) -> Probe:
    """A question's first probe: the grader's own public input on which the engine calls each
    function once before any hidden test (see shown.Door)."""
    makers = {
        "softmax": softmax_probes,
        "split_heads": split_probes,
        "merge_heads": merge_probes,
        "attention": attention_probes,
        "multi_head_attention": mha_probes,
        "distinct_head_pairs": distinct_probes,
        "parameter_counts": count_probes,
        "weights_from_torch": adapter_probes,
        "cross_check": crosscheck_probes,
    }
    return makers[qid]()[0]
