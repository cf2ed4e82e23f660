"""weights_from_torch: which torch block each returned matrix is (transposed or not), the
dtype, else what is off; and the ValueError for a module it cannot convert."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import mutants as mut
from .. import probes as pr
from ..catalogue import CATALOGUE
from ..compare import as_array, matches, same, same_array
from ..explain import array_diff, first_difference
from ..result import Diagnosis, named
from ..trusted import trusted
from ._refusal import add_missing_refusal
from .cross_check import no_detach

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "weights_from_torch"
    probes = pr.adapter_probes()
    found = _values(s, qid, probes)
    refusals = pr.adapter_refusal_probes()
    return add_missing_refusal(s, qid, probes, refusals, found, "adapter-no-valueerror")


def _values(s: DiagnosisSession, qid: str, probes) -> Diagnosis | None:
    student = s.student(qid, probes)
    from solutions import crosscheck as ref_cc  # torch: imported when first needed

    expected = trusted(("ref", qid), ref_cc.weights_from_torch, probes)
    # torch's weights through a lower precision, then float64 (arrays of another dtype show
    # their precision: adapter-float32-weights)
    rounded = _rounded(student, expected, probes)
    if rounded is not None and not _not_float64(student):
        found = s.in_function(qid, ("adapter-rounded-weights",), inline=False)
        did = CATALOGUE["adapter-rounded-weights"].did
        message = found.message.replace(did, did + rounded, 1)
        return named(found.misconceptions, found.blame, message, found.question)
    if matches(student, expected):
        if _not_float64(student):
            return s.in_function(qid, ("adapter-float32-weights",), inline=False)
        return None
    if s.not_attempted(student):
        return None
    if no_detach(student):  # .numpy() on the module's parameters themselves
        return s.in_function(qid, ("adapter-no-detach",), inline=False)
    some = _no_detach_some(student, expected, probes)
    if some is not None:  # the same, on the modules where a conversion returned the parameter
        found = s.in_function(qid, ("adapter-no-detach",), inline=False)
        here = (
            f"Here it raises only on the {some} modules, and is right on the others: a "
            "conversion to the dtype a tensor already has (.double() or .to(torch.float64) of "
            "a float64 weight, .float() of a float32 one) returns that tensor itself, which "
            "still requires grad; only a conversion that copies loses it."
        )
        head, hint, tail = found.message.partition(" Hint: ")
        text = f"{head} {here}{hint}{tail}"
        return named(found.misconceptions, found.blame, text, found.question)
    if all(not o.ok for o in student):
        return s.raised(qid, student, probes)
    for mid in LAYOUTS:  # a layout of in_proj_weight that is not torch's, in any dtype
        if any(matches(student, trusted((f,), f, probes)) for f in mut.ADAPTER[mid]):
            ids = (mid, "adapter-float32-weights") if _not_float64(student) else (mid,)
            return s.in_function(qid, ids, inline=False)
    found: set[str] = set()
    for probe, got in zip(probes, student, strict=True):
        names = identify_blocks(probe.args[0], got.value) if got.ok else None
        if names is None:
            found = set()
            break
        found |= {"adapter-no-transpose"} if any(t for _, t in names) else set()
        found |= {"adapter-qkv-order"} if [b for b, _ in names[:3]] != list("qkv") else set()
        if names[3][0] != "o":
            found = set()
            break
    if found:
        found |= {"adapter-float32-weights"} if _not_float64(student) else set()
        ids = tuple(i for i in CATALOGUE if i in found)
        return s.in_function(qid, ids, inline=False)

    def describe(got, want, probe):
        if not isinstance(got, tuple | list) or len(got) != 4:
            return "did not return four matrices (Wq, Wk, Wv, Wo)"
        bad = [
            f"{n}: {array_diff(g, w, ('input feature', 'output feature'))}"
            for n, g, w in zip(("Wq", "Wk", "Wv", "Wo"), got, want, strict=True)
            if not same(g, w)
        ]
        return "; ".join(bad)

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your weights_from_torch does not reproduce the module's weights: {text}.")


def _no_detach_some(student, expected, probes) -> str | None:
    """The dtype of the modules on which, and only on which, the student raised torch's
    RuntimeError for a tensor that requires grad (right on every other module), or None."""
    raised = [no_detach([o]) for o in student]
    if not any(raised) or all(raised):
        return None
    if not all(
        r or (o.ok and same(o.value, e.value))
        for r, o, e in zip(raised, student, expected, strict=True)
    ):
        return None
    dtypes = {
        str(p.args[0].in_proj_weight.dtype).removeprefix("torch.")
        for p, r in zip(probes, raised, strict=True)
        if r
    }
    return " and ".join(sorted(dtypes))


def _round(W: np.ndarray, precision: str) -> np.ndarray:
    """``W`` rounded to ``precision`` (float32, float16, bfloat16) and back to float64."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(W, dtype=np.float64))
    return t.to(getattr(torch, precision)).to(torch.float64).numpy()


PRECISIONS = {
    "float32": "about 7 significant digits",
    "float16": "about 3 significant digits",
    "bfloat16": "about 2 to 3 significant digits",
}


def _rounded(student, expected, probes) -> str | None:
    """The words for weights that are, on every probe, torch's rounded to one lower precision
    than float64 (float32, float16, bfloat16) and back, the right matrices otherwise, rounded
    somewhere (a float64 module's, through float32); None otherwise."""
    for precision, digits in PRECISIONS.items():
        lost = []
        for got, want, probe in zip(student, expected, probes, strict=True):
            if not got.ok or not want.ok or not isinstance(got.value, tuple | list):
                break
            if len(got.value) != 4:
                break
            mine = [as_array(W) for W in got.value]
            right = [np.asarray(W, dtype=np.float64) for W in want.value]
            if any(a is None or a.shape != b.shape for a, b in zip(mine, right, strict=True)):
                break
            cut = [_round(W, precision) for W in right]
            if not all(
                np.allclose(a.astype(np.float64), c, rtol=1e-12, atol=0.0)
                for a, c in zip(mine, cut, strict=True)
            ):
                break
            if any(not np.array_equal(c, W) for c, W in zip(cut, right, strict=True)):
                lost.append(str(probe.args[0].in_proj_weight.dtype).removeprefix("torch."))
        else:
            if lost:
                kinds = sorted(set(lost))
                modules = " and ".join(kinds) + (" modules" if len(kinds) > 1 else " module")
                return (
                    f" On our {modules} its weights are torch's rounded to {precision} "
                    f"({digits}) and turned back into float64."
                )
    return None


# Mistakes of the adapter read from its values by their mutants (the others, by which torch
# block each returned matrix is: identify_blocks).
LAYOUTS = ("adapter-qkv-interleaved",)


def _not_float64(student) -> bool:
    """Some returned matrix is an array of another dtype than float64."""
    arrays = [as_array(w) for o in student if o.ok for w in o.value]
    return any(a is not None and a.dtype != np.float64 for a in arrays)


def identify_blocks(mha, Ws) -> list[tuple[str, bool]] | None:
    """For each returned matrix, which torch block it is and whether it was left untransposed."""
    if not isinstance(Ws, tuple | list) or len(Ws) != 4:
        return None
    blocks = mut.torch_blocks(mha)
    names = []
    for W in Ws:
        hit = next(
            (
                (b, untransposed)
                for b in "qkvo"
                for untransposed in (False, True)
                if same_array(W, blocks[b] if untransposed else blocks[b].T)
            ),
            None,
        )
        if hit is None:
            return None
        names.append(hit)
    return names
