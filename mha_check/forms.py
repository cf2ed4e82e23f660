"""The form (type and shape) each contract function's result must have, from its arguments.

docs/contract.md gives every result's shape in terms of its inputs' shapes, so the form of a
result can be judged without any reference implementation: ``right_form`` answers True or False
where the contract fixes the form for these arguments, and None where it cannot tell (an input
the contract does not allow, a module it cannot read). mha-check uses it to tell a composite's
own mistake from one it was handed: a composite that returns the wrong form while every callee
call returned the right one made that mistake itself, whatever the callees' values.
"""

from __future__ import annotations

from typing import Any


def _shape(a: Any) -> tuple | None:
    shape = getattr(a, "shape", None)
    return tuple(shape) if shape is not None and hasattr(a, "dtype") else None


def _array_of(a: Any, shape: tuple) -> bool:
    return _shape(a) == shape and getattr(getattr(a, "dtype", None), "kind", "") == "f"


def _pair(result: Any, out: tuple, weights: tuple) -> bool:
    return (
        isinstance(result, tuple | list)
        and len(result) == 2
        and _array_of(result[0], out)
        and _array_of(result[1], weights)
    )


def _args(args: tuple, kwargs: dict, names: tuple[str, ...]) -> list | None:
    found = list(args[: len(names)])
    for name in names[len(found) :]:
        if name not in kwargs:
            return None
        found.append(kwargs[name])
    return found


def right_form(name: str, args: tuple, kwargs: dict, result: Any) -> bool | None:
    """Whether ``result`` of the contract function ``name`` on these arguments has the form the
    contract gives it (None: the contract fixes no form here)."""
    try:
        return _FORMS[name](args, kwargs, result) if name in _FORMS else None
    except Exception:  # an argument of another kind than the contract's: no form to say
        return None


def _softmax(args, kwargs, result):
    (x,) = _args(args, kwargs, ("x",)) or (None,)
    shape = _shape(x)
    return None if shape is None else _array_of(result, shape)


def _split(args, kwargs, result):
    found = _args(args, kwargs, ("M", "num_heads", "d_head"))
    if found is None:
        return None
    M, h, d = found
    shape = _shape(M)
    if shape is None or len(shape) != 2 or shape[1] != h * d:
        return None
    return _array_of(result, (h, shape[0], d))


def _merge(args, kwargs, result):
    found = _args(args, kwargs, ("H",))
    shape = _shape(found[0]) if found else None
    if shape is None or len(shape) != 3:
        return None
    h, n, d = shape
    return _array_of(result, (n, h * d))


def _attention(args, kwargs, result):
    found = _args(args, kwargs, ("Q", "K", "V"))
    if found is None:
        return None
    q, k, v = (_shape(a) for a in found)
    if q is None or k is None or v is None or min(len(q), len(k), len(v)) < 2:
        return None
    if not (q[:-2] == k[:-2] == v[:-2] and q[-1] == k[-1] and k[-2] == v[-2]):
        return None
    return _pair(result, q[:-1] + (v[-1],), q[:-1] + (k[-2],))


def _mha(args, kwargs, result):
    found = _args(args, kwargs, ("X", "Wq", "Wk", "Wv", "Wo", "num_heads"))
    if found is None:
        return None
    X, *Ws, h = found
    shape = _shape(X)
    if shape is None or len(shape) != 2 or type(h) is not int or h <= 0 or shape[1] % h:
        return None
    n, d = shape
    if any(_shape(W) != (d, d) for W in Ws):
        return None
    return _pair(result, (n, d), (h, n, n))


_FORMS = {
    "softmax": _softmax,
    "split_heads": _split,
    "merge_heads": _merge,
    "attention": _attention,
    "multi_head_attention": _mha,
}

FORMED = frozenset(_FORMS)  # the functions whose result's form the contract fixes
