"""The floating dtypes a contract function's arrays may have (docs/contract.md): float64 and
float32, NumPy's own, in this machine's byte order; float16, ``longdouble`` (float128) and
either in the other byte order (``>f8``) are refused.

One rule, two users: grading checks every array a function returns by it
(``mha_grader/grading/checks.py``), and mha-check every float array a NumPy question's
function hands back to a public check (``runner.py``). Standard library only: it reads the
dtype's own attributes (``kind``, ``char``, ``isnative``).
"""

from __future__ import annotations

from typing import Any

ALLOWED = "float32 or float64"
_CHARS = {"f": "float32", "d": "float64"}  # NumPy's type characters, the same on every platform


def float_dtype_problem(dtype: Any) -> str | None:
    """Why a floating array of ``dtype`` is not one the contract allows, as words that follow
    "<what> is" (None: float32 or float64, or not a floating dtype at all: other rules)."""
    if getattr(dtype, "kind", None) != "f":
        return None
    char = getattr(dtype, "char", "")
    if char == "e":
        return f"a float16 array: too coarse to check. Compute in {ALLOWED}."
    if char not in _CHARS:
        return (
            f"a {dtype} array (NumPy's longdouble): the contract allows {ALLOWED} only. "
            "Compute in float64."
        )
    if not getattr(dtype, "isnative", True):
        name = _CHARS[char]
        return (
            f"a {name} array in the other byte order ({dtype.str}): return it in this "
            f"machine's order (.astype(np.{name})); the contract allows {ALLOWED} only."
        )
    return None
