"""multi_head_attention: right given right callees where it called wrong ones (blame those it
called), a catalogued mistake of its own or a callee's made inline, read from its results given
right callees (with the wrong callees it called named too, or charged where they cancel), else
what is off; and the ValueError for num_heads that do not divide d_model. What it does with its
callees is what the worker recorded (``calls_made``), head by head or on the stacked heads."""

from __future__ import annotations

import itertools
import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from solutions import multihead as ref

from ... import errors
from .. import fitted, properties
from .. import mutants as mut
from .. import probes as pr
from ..catalogue import CATALOGUE
from ..compare import Outcome, matches, run, same
from ..explain import array_diff, first_difference
from ..result import Diagnosis, named
from ..trusted import trusted
from ._refusal import add_missing_refusal
from .attention import fit_ids, with_fit

if TYPE_CHECKING:
    from ..session import DiagnosisSession


CALLEES = ("split_heads", "attention", "merge_heads")
REFERENCE = {
    "split_heads": ref.split_heads,
    "attention": mut.attention_ref,
    "merge_heads": ref.merge_heads,
}
# What answers its calls of its callees (calls_made): the reference functions themselves.
ANSWERS = {
    "split_heads": ref.split_heads,
    "attention": ref.attention,
    "merge_heads": ref.merge_heads,
}


def pipeline(impl=mut.mha_ref, **over):
    """``impl`` (the reference composition or a mutant of it) with some callees replaced."""
    callees = {**REFERENCE, **over}
    return partial(
        impl,
        split=callees["split_heads"],
        attention=callees["attention"],
        merge=callees["merge_heads"],
    )


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "multi_head_attention"
    probes = pr.mha_probes()
    found = _values(s, qid, probes)
    refusals = pr.mha_refusal_probes()
    return add_missing_refusal(s, qid, probes, refusals, found, "mha-no-valueerror")


def _values(s: DiagnosisSession, qid: str, probes) -> Diagnosis | None:
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), pipeline(), probes)
    if s.not_attempted(student):
        return None
    right = matches(student, expected)
    if right and not any(s.wrong(n) for n in CALLEES):
        return None
    # What it did with its callees: a blame rests on calls that happened (a function that types
    # attention inline is judged alone), its own mistakes are read from its results given
    # right callees (which also shows mistakes that a wrong callee cancels).
    made = s.calls_made(qid, probes, ANSWERS)
    given, wrong = made.given, list(made.wrong)
    if matches(given, expected):
        if right:
            return None
        if wrong:
            return s.blame_callees(qid, tuple(wrong))
    else:
        if s.unsteady(qid, probes):  # random with right callees: its own dropout
            if wrong:
                return s.with_callees(qid, ("mha-dropout",), wrong)
            return s.in_function(qid, ("mha-dropout",), inline=False)
        found = _own(given, probes)
        swap = None if found is not None else _grouped(given, probes)
        if swap is not None:  # key/value heads shared by groups of query heads: how many
            found = (swap[0],), None
        fit = None if found is not None else _scores_fit(given, probes)
        if fit is not None:  # any other scale, any mask: the classes beyond their examples
            found = fit_ids(fit, "mha-masks-positions"), ("attention" if fit.scaled else None)
        elif found is None:  # the same, with X added to the output: two mistakes at once
            fit = _scores_fit(given, probes, residual=True)
            if fit is not None and (fit.scaled or fit.masked):
                ids = {*fit_ids(fit, "mha-masks-positions"), "mha-residual-norm"}
                found = tuple(i for i in CATALOGUE if i in ids), None
            else:
                fit = None
        for mid, seen in CLASSES if found is None else ():
            words = seen(given, probes)  # the classes read from behaviour, after every other
            if isinstance(words, tuple):  # a class of several ids: which ones were seen
                ids, words = words
                found, swap = (ids, None), (ids[0], words)
                break
            if words is not None:  # what was seen, said after the id's words
                found, swap = ((mid,), None), (mid, words)
                break
        unstable = [c for c in made.called if _overflows(s, c)]
        if found is None and unstable:
            # two mistakes at once: one of its own (a causal mask it passes on), read from its
            # moderate probes, and a callee's softmax that overflows on the large ones (both
            # named, the callee's as the callee's)
            mine = _own_on_moderate(given, probes)
            if mine is not None:
                ids, _ = by_calls(*mine, made.called)
                return s.with_callees(qid, ids, unstable)
        if found is None:  # no class, nothing read on the moderate probes: is it at least
            # equivariant in the tokens' order?
            words = _positional(s, given, probes)
            if words is not None:
                found = ("mha-depends-on-positions",), None
                swap = ("mha-depends-on-positions", words)
        if found is not None:
            ids, callee = by_calls(*found, made.called)
            if right and wrong:
                found = s.compensated(qid, ids, wrong)
                return _swap_said(with_fit(found, fit, probes, "d_head"), swap)
            if wrong:
                found = s.with_callees(qid, ids, wrong)
                return _swap_said(with_fit(found, fit, probes, "d_head"), swap)
            found = s.in_function(
                qid, ids, inline=callee is not None, called=made.called, callee=callee
            )
            found = _residual_beside(found)
            return _swap_said(with_fit(found, fit, probes, "d_head"), swap)
    if all(not o.ok for o in student):
        return s.raised(qid, student, probes, made.called)

    def describe(got, want, probe):
        if not isinstance(got, tuple | list) or len(got) != 2:
            return "did not return a pair (out, weights)"
        parts = []
        if not same(got[1], want[1]):
            parts.append(f"weights: {array_diff(got[1], want[1], ('head', 'query', 'key'))}")
        if not same(got[0], want[0]):
            parts.append(f"out: {array_diff(got[0], want[0], ('token', 'feature'))}")
        return "; ".join(parts + _properties(s, got, want, probe))

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your multi_head_attention differs from the reference: {text}.")


RIGHT_WEIGHTS = " the weights are right, but the output is not the attention's."


def _residual_beside(found: Diagnosis) -> Diagnosis:
    """mha-residual-norm named beside another mistake that changes the weights: its words that
    the weights are right are not said."""
    if "mha-residual-norm" not in found.misconceptions or len(found.misconceptions) == 1:
        return found
    text = found.message.replace(RIGHT_WEIGHTS, " the output is not the attention's.", 1)
    roots = tuple((fn, text if t == found.message else t) for fn, t in found.roots)
    return named(found.misconceptions, found.blame, text, found.question, roots)


def by_calls(
    ids: tuple[str, ...], callee: str | tuple[str, ...] | None, called: tuple[str, ...]
) -> tuple[tuple[str, ...], str | tuple[str, ...] | None]:
    """The name the calls that happened give a mistake whose values two names share: queries
    scaled before a call of attention (``mha-prescaled-query``) give the values of an inline
    attention that divides by d_head (``scale-not-sqrt``); which one it is, the record of its
    calls says (a composite that never called attention cannot have handed it anything)."""
    if ids == ("mha-prescaled-query",) and "attention" not in called:
        return ("scale-not-sqrt",), "attention"
    return ids, callee


def candidates() -> list[tuple[tuple[str, ...], str | tuple[str, ...] | None, tuple, object]]:
    """Every catalogued way a whole multi-head attention goes wrong, in the order they are
    tried: (the ids, the callee whose mistake it is when made inline (None: its own), a key
    for ``trusted``, the pipeline). Two at once come last: one of its own table with a callee's
    made inline (a scale by d_model in a causally masked head)."""
    found: list[tuple[tuple[str, ...], str | tuple[str, ...] | None, tuple, object]] = []
    for mid, fs in mut.MHA.items():
        found += [((mid,), None, (f,), pipeline(f)) for f in fs]
    for mid, callee, f in _inline():
        found.append(((mid,), callee, _key(mid, callee, f), pipeline(**{callee: f})))
    # the heads split and merged inline, both the way a bare reshape does (its twins)
    splits = [(i, f) for i, c, f in _inline() if c == "split_heads"]
    merges = [(i, f) for i, c, f in _inline() if c == "merge_heads"]
    for (sid, sf), (mid, mf) in itertools.product(splits, merges):
        key = (*_key(sid, "split_heads", sf), *_key(mid, "merge_heads", mf))
        both = pipeline(split_heads=sf, merge_heads=mf)
        found.append(((sid, mid), ("split_heads", "merge_heads"), key, both))
    for mid, fs in mut.MHA.items():
        if mid == "mha-no-valueerror":
            continue  # the same values as the reference's
        for f, (iid, callee, g) in itertools.product(fs, _inline(renamed=True)):
            if iid == mid:
                continue
            key = (f, *_key(iid, callee, g))
            found.append(((mid, iid), None, key, pipeline(f, **{callee: g})))
    return found


def _own(given, probes) -> tuple[tuple[str, ...], str | tuple[str, ...] | None] | None:
    """Its own catalogued mistakes, read from its results ``given`` right callees: (the ids,
    the callee or callees whose mistakes it made inline, or None)."""
    for ids, callee, key, f in candidates():
        if matches(given, trusted(key, f, probes)):
            return ids, callee
    # the classes beyond their catalogued examples: a cap of another size, rotary embeddings
    # on a part of each head or with another base
    if fitted.capped(given, probes, lambda c, how: pipeline(mut.checked(mut.mha_capped(c, how)))):
        return ("mha-logit-softcap",), None
    if fitted.rotary(given, probes, lambda f: pipeline(mut.checked(f))):
        return ("mha-rotary-embedding",), None
    # a bias by position on the scores of another kind or slopes; a shared head from elsewhere
    if fitted.position_bias(given, probes):
        return ("mha-alibi-bias",), None
    return None


def _grouped(given, probes) -> tuple[str, str] | None:
    """(the id, the words) for key and value heads shared by groups of query heads: one for
    all of them (mha-multi-query), or groups of any size (mha-grouped-query); None."""
    found = fitted.grouped_query(given, probes)
    if found is None:
        return None
    one = all(g.kv == 1 for g in found if g.kv < g.heads)
    return ("mha-multi-query" if one else "mha-grouped-query"), fitted.grouped_words(found)


def _scores_fit(given, probes, residual: bool = False) -> fitted.ScoreFit | None:
    """``given`` as every head's softmax of its right scores by another factor, or with some
    keys masked (its own code, or what it hands attention); ``residual``: with X added to the
    output too (a second mistake at once, mha-residual-norm's residual)."""
    scores, finish = [], []
    for X, Wq, Wk, Wv, Wo, h in (p.args for p in probes):
        d_head = X.shape[-1] // h
        Qh, Kh, Vh = (ref.split_heads(X @ W, h, d_head) for W in (Wq, Wk, Wv))
        scores.append(Qh @ np.swapaxes(Kh, -1, -2) / math.sqrt(d_head))
        add = X if residual else 0.0
        finish.append(lambda w, Vh=Vh, Wo=Wo, add=add: (ref.merge_heads(w @ Vh) @ Wo + add, w))
    return fitted.scores_fit(given, scores, lambda i, w: finish[i](w))


def _own_on_moderate(given, probes) -> tuple[tuple[str, ...], str | tuple[str, ...] | None] | None:
    """Its own catalogued mistake read from the moderate probes alone, where its results on the
    large-score ones are no softmax's (a callee that overflows there)."""
    from .attention import large_only_overflow

    for ids, callee, key, f in candidates():
        if large_only_overflow(given, probes, f, key):
            return ids, callee
    return None


def _overflows(s: DiagnosisSession, callee: str) -> bool:
    """The student's ``callee`` is diagnosed with a softmax that fails on large scores only."""
    found = s.values(callee)
    return found is not None and bool(set(found.misconceptions) & set(mut.LARGE_ONLY))


def _key(mid: str, callee: str, f) -> tuple:
    return (mid, callee, getattr(f, "func", f), getattr(f, "keywords", {}).get("softmax"))


def _inline(renamed: bool = False) -> list[tuple[str, str, object]]:
    """A callee's catalogued mistake made inside multi_head_attention: (id, callee, mutant).
    Those that are one of its own there (``INLINE_AS_MHA``) are left to its own table, or
    (``renamed``) go by its name."""
    found: list[tuple[str, str, object]] = []
    found += [(i, "split_heads", f) for i, fs in mut.SPLIT.items() for f in fs]
    found += [(i, "merge_heads", f) for i, fs in mut.MERGE.items() for f in fs]
    found += [(i, "attention", f) for i, fs in mut.ATTENTION.items() for f in fs]
    found += [
        (i, "attention", partial(mut.attention_ref, softmax=f))
        for i, fs in mut.SOFTMAX.items()
        for f in fs
    ]
    if renamed:
        return [(mut.INLINE_AS_MHA.get(i, i), c, f) for i, c, f in found]
    return [(i, c, f) for i, c, f in found if i not in mut.INLINE_AS_MHA]


def _properties(s: DiagnosisSession, got, want, probe) -> list[str]:
    """What a right multi-head attention always has, said of the student's result."""
    out, weights = got
    found = [f"its weights: {t}" for t in properties.rows(weights)]
    alike = properties.alike_heads(weights, want[1])
    if alike:
        found.append(alike)
    moved = properties.transposed(out, want[0])
    if moved:
        found.append(f"its out: {moved}")
    X, Wq, Wk, Wv, Wo, h = probe.args
    for label, args in (
        ("Wv", (X, Wq, Wk, Wv * 2.0 + 0.5, Wo, h)),
        ("Wo", (X, Wq, Wk, Wv, Wo[::-1].copy(), h)),
    ):
        try:  # an output that ignores Wv or Wo (only to explain an unknown mistake)
            again = s.fn("multi_head_attention")(*args)
        except errors.StudentCodeError:
            continue
        if isinstance(again, tuple | list) and len(again) == 2:
            ignored = properties.ignores(again[0], out, label)
            if ignored:
                found.append(f"its out: {ignored}")
    return found


# -- weights misassigned: the output is the reference's with some of Wq, Wk, Wv, Wo replaced by
# another of them or transposed (searched on the diagnosis' own input) ----------------------

_ROLES = ("Wq", "Wk", "Wv", "Wo")


def _sources() -> list[tuple[str, int, bool]]:
    return [(f"{n}ᵀ" if t else n, i, t) for i, n in enumerate(_ROLES) for t in (False, True)]


def _assignments():
    """Every assignment of the four weights, one or two of them another (or transposed)."""
    right = [(n, i, False) for i, n in enumerate(_ROLES)]
    for k in (1, 2):
        for slots in itertools.combinations(range(4), k):
            choices = [[c for c in _sources() if c != right[j]] for j in slots]
            for picked in itertools.product(*choices):
                a = list(right)
                for j, c in zip(slots, picked, strict=True):
                    a[j] = c
                yield tuple(a)


def _weights(args, a):
    Ws = args[1:5]
    return [Ws[i].T if t else Ws[i] for _, i, t in a]


def _with_weights(a):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        Wq2, Wk2, Wv2, Wo2 = _weights((X, Wq, Wk, Wv, Wo), a)
        return ref.multi_head_attention(X, Wq2, Wk2, Wv2, Wo2, num_heads)

    return mha


def _scaled_keys(given, probes, a) -> bool:
    """``given`` as the reference with the weights ``a``, each key vector of each head rescaled
    by a positive factor of its own (keys normalised to a length, as Reformer's shared
    query-key attention does), fitted on the moderate probes: every key's factor read from the
    weights' log-ratios, then the output checked."""
    seen = 0
    for probe, got in zip(probes, given, strict=True):
        if probe.large:
            continue
        if not got.ok or not isinstance(got.value, tuple | list) or len(got.value) != 2:
            return False
        X, *_, h = probe.args
        Wq, Wk, Wv, Wo = _weights(probe.args, a)
        d_head = X.shape[-1] // h
        Qh, Kh, Vh = (ref.split_heads(X @ W, h, d_head) for W in (Wq, Wk, Wv))
        w = np.asarray(got.value[1], dtype=np.float64)
        if w.shape != (h, X.shape[0], X.shape[0]) or not (w > 0).all():
            return False
        L = np.log(w) * math.sqrt(d_head)
        scaled = np.empty_like(Kh)
        for head in range(h):
            G = Qh[head] @ Kh[head].T  # (n, m): the scores before each key's factor
            n, m = G.shape
            rows, rhs = [], []
            for j in range(1, m):  # c_j G_ij - c_0 G_i0 = L_ij - L_i0
                for i in range(n):
                    row = np.zeros(m)
                    row[j], row[0] = G[i, j], -G[i, 0]
                    rows.append(row)
                    rhs.append(L[head, i, j] - L[head, i, 0])
            c, *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
            if not (c > 1e-6).all():
                return False
            scaled[head] = Kh[head] * c[:, None]
        weights = ref.softmax(Qh @ np.swapaxes(scaled, -1, -2) / math.sqrt(d_head), axis=-1)
        out = ref.merge_heads(weights @ Vh) @ Wo
        if not (same(got.value[1], weights) and same(got.value[0], out)):
            return False
        seen += 1
    return seen > 0


def _misassigned(given, probes) -> str | None:
    """The words for ``given`` as the reference with some weights in another one's place (or
    transposed): exactly, or with the keys rescaled one by one. None when no assignment of one
    or two of them gives it."""
    right = [(n, i, False) for i, n in enumerate(_ROLES)]
    for a in _assignments():
        key = ("mha-assignment", a)
        if matches(given, trusted(key, _with_weights(a), probes)):
            return _swap_words(a, right, "")
    for a in _assignments():
        if a[1][0] == "Wk" or a[0] != right[0] or a[2:] != tuple(right[2:]):
            continue  # rescaled keys: only another matrix for the keys
        if _scaled_keys(given, probes, a):
            return _swap_words(
                a, right, ", each key vector also rescaled by a factor of its own (normalised)"
            )
    return None


def _swap_words(a, right, extra: str) -> str:
    said = [
        f"{got[0]} where {want[0]} belongs"
        for got, want in zip(a, right, strict=True)
        if got != want
    ]
    return f" Here its results are those of the right layer with {' and '.join(said)}{extra}."


def _swap_said(found: Diagnosis, swap: tuple[str, str] | None) -> Diagnosis:
    """``found`` with what was seen (``swap``: the id, the words) said after the id's words."""
    if swap is None:
        return found
    mid, swap = swap
    did = CATALOGUE[mid].did
    if did in found.message:
        message = found.message.replace(did, did + swap, 1)
    else:
        message = f"{found.message}{swap}"
    roots = tuple((fn, message if t == found.message else t) for fn, t in found.roots)
    return named(found.misconceptions, found.blame, message, found.question, roots)


def _rows(X, eps: float = 0.0):
    mean = X.mean(axis=-1, keepdims=True)
    return (X - mean) / np.sqrt(X.var(axis=-1, keepdims=True) + eps)


# The transforms of X tried before the projections: (words, the transform). A LayerNorm, an
# RMSNorm, features standardised (each with the epsilons libraries use: on large scores the
# epsilon shows), rows or features centred, rows of unit length, a scale by the width.
_EPS = (1e-5, 1e-6, 1e-12, 0.0)


def _rms(X, eps: float = 0.0):
    return X / np.sqrt(np.mean(X * X, axis=-1, keepdims=True) + eps)


def _columns(X, eps: float = 0.0):
    return (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + eps)


TRANSFORMS = (
    *(
        (
            "each token's row layer-normalised (mean 0 and variance 1 over its features, as a "
            "LayerNorm with its weight 1 and bias 0)",
            partial(_rows, eps=e),
        )
        for e in _EPS
    ),
    *(
        ("each token's row divided by its root mean square (an RMSNorm)", partial(_rms, eps=e))
        for e in _EPS
    ),
    *(
        (
            "each feature standardised over the tokens (mean 0, variance 1 down each column, "
            "as a BatchNorm)",
            partial(_columns, eps=e),
        )
        for e in _EPS
    ),
    (
        "each token's row centred (its mean over the features taken away)",
        lambda X: X - X.mean(axis=-1, keepdims=True),
    ),
    (
        "each token's row scaled to unit length",
        lambda X: X / np.linalg.norm(X, axis=-1, keepdims=True),
    ),
    ("each feature centred over the tokens (the column means taken away)", lambda X: X - X.mean(0)),
    ("X divided by sqrt(d_model)", lambda X: X / math.sqrt(X.shape[-1])),
    ("X multiplied by d_model", lambda X: X * X.shape[-1]),
    ("X divided by d_model", lambda X: X / X.shape[-1]),
)


def _transformed_input(given, probes) -> str | None:
    """The words for results that are, on every probe, the right layer's on a transform of X
    (``TRANSFORMS``: a LayerNorm, an RMSNorm, standardised or centred rows or features, a
    scale by the width) instead of on X itself; None where no transform fits."""
    for i, (words, f) in enumerate(TRANSFORMS):

        def layer(X, *rest, f=f):
            return pipeline()(f(np.asarray(X, dtype=np.float64)), *rest)

        if matches(given, trusted(("transformed-input", i), layer, probes)):
            return (
                f" Here its results are the right layer's applied to {words}, not to X as it "
                "was given."
            )
    return None


# -- weights whose rows do not sum to 1: every head's right weights times a factor per row (an
# attention sink's extra logit, a softmax plus one, exp never divided by its sum) -------------


def _heads(probe):
    """The reference's projected, split heads and scaled scores of one probe."""
    X, Wq, Wk, Wv, Wo, h = probe.args
    d_head = X.shape[-1] // h
    Qh, Kh, Vh = (ref.split_heads(X @ W, h, d_head) for W in (Wq, Wk, Wv))
    return Qh, Kh, Vh, Qh @ np.swapaxes(Kh, -1, -2) / math.sqrt(d_head)


def _rows_rescaled(given, probes) -> str | None:
    """The words for results that are, on every probe, the right layer's with every head's
    weights scaled row by row (the rows not summing to 1), the output following them."""
    if any(p.args[0].shape[-1] % p.args[-1] for p in probes):
        return None
    heads = [_heads(p) for p in probes]
    right = [ref.softmax(s, axis=-1) for *_, s in heads]

    def finish(i, w):
        return ref.merge_heads(w @ heads[i][2]) @ probes[i].args[4], w

    fit = fitted.rows_rescaled(given, right, [s for *_, s in heads], finish)
    return None if fit is None else fitted.rows_words(fit)


# -- the projected queries, keys or values transformed before attention: an activation on them
# (Kyubyong's relu dense layers), a normalisation of each head's (QK-norm) or of the whole ----


def _unit(x, eps: float = 1e-12):
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), eps)


def _gelu(x):
    from math import erf

    return 0.5 * x * (1.0 + np.vectorize(erf)(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# Elementwise functions tried on the projections: (words, the function).
ACTIVATIONS = (
    ("a ReLU (max(x, 0))", lambda x: np.maximum(x, 0.0)),
    *(
        (f"a leaky ReLU of slope {a:g}", partial(lambda x, a: np.where(x > 0, x, a * x), a=a))
        for a in (0.01, 0.1, 0.2)
    ),
    ("a GELU", _gelu),
    ("a GELU (its tanh approximation)", _gelu_tanh),
    ("a SiLU (x * sigmoid(x))", lambda x: x * _sigmoid(x)),
    ("an ELU", lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))),
    ("a softplus", lambda x: np.logaddexp(0.0, x)),
    ("tanh", np.tanh),
    ("a sigmoid", _sigmoid),
    ("the absolute value", np.abs),
)
# Normalisations tried, of each head's vectors (over d_head) or of the whole projection (over
# d_model, before the split): (words, the normalisation of the last axis).
NORMS = (
    *(("divided by their root mean square (an RMSNorm)", partial(_rms, eps=e)) for e in _EPS),
    ("scaled to unit length (an L2 normalisation)", _unit),
    *(("layer-normalised (mean 0, variance 1, a LayerNorm)", partial(_rows, eps=e)) for e in _EPS),
)
_WHICH = {"Q": 0, "K": 1, "V": 2}


def _subsets(names: str) -> list[str]:
    return ["".join(c) for k in range(1, len(names) + 1) for c in itertools.combinations(names, k)]


def _said_names(which: str) -> str:
    words = {"Q": "queries", "K": "keys", "V": "values"}
    parts = [words[c] for c in which]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _projected(f, which: str, where: str):
    """The reference layer with ``f`` applied to the projections in ``which`` (after the split,
    per head, ``where`` "head"; before it, on all of d_model, "model")."""

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        P = [np.asarray(X, dtype=np.float64) @ W for W in (Wq, Wk, Wv)]
        if where == "model":
            P = [f(p) if c in which else p for c, p in zip("QKV", P, strict=True)]
        H = [ref.split_heads(p, num_heads, d_head) for p in P]
        if where == "head":
            H = [f(x) if c in which else x for c, x in zip("QKV", H, strict=True)]
        out, weights = ref.attention(*H)
        return ref.merge_heads(out) @ Wo, weights

    return mha


def _transformed_projections(given, probes) -> str | None:
    """The words for results that are, on every probe, the right layer's with the projected
    queries, keys and/or values transformed before attention: an activation elementwise
    (``ACTIVATIONS``) or a normalisation (``NORMS``) of each head's vectors or of the whole
    projection; None where none fits."""
    for i, (words, f) in enumerate(ACTIVATIONS):
        for which in _subsets("QKV"):
            key = ("projections-activated", i, which)
            if matches(given, trusted(key, _projected(f, which, "model"), probes)):
                return (
                    f" Here its results are the right layer's with {words} applied to the "
                    f"projected {_said_names(which)} before attention."
                )
    for i, (words, f) in enumerate(NORMS):
        for where, which in itertools.product(("head", "model"), ("QK", "Q", "K", "QKV", "V")):
            key = ("projections-normalised", i, where, which)
            if matches(given, trusted(key, _projected(f, which, where), probes)):
                over = (
                    "each head's vectors (over d_head)"
                    if where == "head"
                    else "each token's whole projection (over d_model, before the split)"
                )
                return (
                    f" Here its results are the right layer's with the projected "
                    f"{_said_names(which)} {words}, {over}, before attention."
                )
    return None


# -- a narrower projection: only the first k columns of Wq, Wk, Wv (and rows of Wo) used, the
# heads k / num_heads wide (SAM's internal_dim = d_model // downsample_rate) -----------------


def _narrowed(probe, width: int, which: str, scale: str):
    """The layer of ``probe`` projected to the first ``width`` columns (of Wq and Wk, and of
    Wv with the first ``width`` rows of Wo where ``which`` is "QKV"), the heads ``width /
    num_heads`` wide, the scores divided by the square root of that width (``scale`` "own")
    or of the full d_head ("full")."""
    X, Wq, Wk, Wv, Wo, h = probe.args
    d_head = X.shape[-1] // h
    c = width // h
    Qh, Kh = (ref.split_heads(X @ W[:, :width], h, c) for W in (Wq, Wk))
    if which == "QKV":
        Vh, Wo = ref.split_heads(X @ Wv[:, :width], h, c), Wo[:width]
    else:
        Vh = ref.split_heads(X @ Wv, h, d_head)
    s = Qh @ np.swapaxes(Kh, -1, -2) / math.sqrt(c if scale == "own" else d_head)
    w = ref.softmax(s, axis=-1)
    return ref.merge_heads(w @ Vh) @ Wo, w


def _narrow(given, probes) -> str | None:
    """The words for results that are, on every probe, the right layer's or one projected to
    fewer columns than d_model (a multiple of the heads, read per probe), the same kind on
    every probe that narrows; None where none fits."""
    for which, scale in itertools.product(("QKV", "QK"), ("own", "full")):
        widths = []
        for got, probe in zip(given, probes, strict=True):
            X, *_, h = probe.args
            d_model = X.shape[-1]
            if not got.ok or d_model % h:
                break
            if matches([got], [Outcome(value=ref.multi_head_attention(*probe.args))]):
                widths.append((d_model, d_model, h))
                continue
            for c in range(1, d_model // h):
                if matches([got], [Outcome(value=_narrowed(probe, c * h, which, scale))]):
                    widths.append((c * h, d_model, h))
                    break
            else:
                break
        else:
            if any(k < d for k, d, _ in widths):
                return _narrow_words(widths, which, scale)
    return None


def _narrow_words(widths, which: str, scale: str) -> str:
    seen = sorted(set(widths), key=lambda x: (x[1], x[2]))
    told = ", ".join(f"{k} of {d} with {h} heads" for k, d, h in seen)
    rule = ""
    for r in (2, 3, 4, 8):
        if all(k == max((d // r) // h, 1) * h for k, d, h in seen):
            rule = f" (d_model // {r}, in whole heads)"
            break
    cols = "Wq, Wk and Wv (and the first k rows of Wo)" if which == "QKV" else "Wq and Wk"
    scaled = (
        "each head's scores divided by the square root of its narrower width"
        if scale == "own"
        else "the scores still divided by sqrt(d_head) of the full width"
    )
    return (
        f" Here it uses only the first k columns of {cols}, heads k / num_heads wide: on our "
        f"inputs k = {told}{rule}, {scaled}; the other columns are never used."
    )


# -- the returned weights a transform of the right ones (mixed with the uniform distribution,
# a temperature), the output right or following them -----------------------------------------


def _smoothed(given, probes) -> str | None:
    """The words for weights that are, on every probe, a transform of the right ones (mixed
    with 1 / n, or a power renormalised), the output the right one or the one they give."""
    if any(p.args[0].shape[-1] % p.args[-1] for p in probes):
        return None
    heads = [_heads(p) for p in probes]
    right = [ref.softmax(s, axis=-1) for *_, s in heads]
    outs = [ref.multi_head_attention(*p.args)[0] for p in probes]

    def finish(i, w):
        return ref.merge_heads(w @ heads[i][2]) @ probes[i].args[4], w

    fit = fitted.weights_transformed(given, right, outs, finish)
    return None if fit is None else fitted.weights_words(fit)


# -- projections that use only part of each weight matrix: blocks on the diagonal (grouped 1x1
# convolutions, each group of outputs from its own group of inputs; a head's queries from its
# own slice of X), the other entries never used ------------------------------------------------


def _blocks(d_model: int, groups: int) -> np.ndarray:
    size = d_model // groups
    mask = np.zeros((d_model, d_model))
    for g in range(groups):
        mask[g * size : (g + 1) * size, g * size : (g + 1) * size] = 1.0
    return mask


def _grouped_layer(X, Wq, Wk, Wv, Wo, h, groups: int, which: str):
    mask = _blocks(X.shape[-1], groups)
    Ws = [W * mask if c in which else W for c, W in zip("QKVO", (Wq, Wk, Wv, Wo), strict=True)]
    return ref.multi_head_attention(X, *Ws, h)


_BLOCKED = ("QKV", "QKVO", "QK", "Q", "K", "V", "O", "QKO", "VO")


def _said_blocked(which: str) -> str:
    names = [{"Q": "Wq", "K": "Wk", "V": "Wv", "O": "Wo"}[c] for c in which]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _grouped_projections(given, probes) -> str | None:
    """The words for results that are, on every probe it answers, the right layer's with some
    of Wq, Wk, Wv, Wo cut to g blocks on their diagonal (the other entries zero): g the same on
    every probe, or the head count on every probe (each head from its own slice of X); the
    probes it refuses are those whose d_model g does not divide. None otherwise."""
    for which in _BLOCKED:
        fits: list[set[int | str]] = []
        refused: list[int] = []
        for got, probe in zip(given, probes, strict=True):
            X, *_, h = probe.args
            d_model = X.shape[-1]
            if not got.ok:
                refused.append(d_model)
                continue
            if d_model % h:
                break
            seen: set[int | str] = set()
            for g in range(2, d_model + 1):
                if d_model % g:
                    continue
                made = Outcome(value=_grouped_layer(*probe.args, groups=g, which=which))
                if matches([got], [made]):
                    seen.add(g)
                    if g == h:
                        seen.add("heads")
            if not seen:
                break
            fits.append(seen)
        else:
            if not fits:
                continue
            common = set.intersection(*fits)
            told = None
            if "heads" in common and not refused:
                told = (
                    "one block per head (each head's queries, keys or values from its own "
                    "d_head features of X)"
                )
            else:
                for g in sorted(c for c in common if isinstance(c, int)):
                    if all(d % g for d in refused):
                        told = f"{g} blocks of d_model / {g}"
                        if refused:
                            said = ", ".join(str(d) for d in sorted(set(refused)))
                            told += f" (and it refuses d_model = {said}, which {g} does not divide)"
                        break
            if told is None:
                continue
            return (
                f" Here its results are the right layer's with only the blocks on the diagonal "
                f"of {_said_blocked(which)} used, {told}; every other entry of "
                f"{'that matrix' if len(which) == 1 else 'those matrices'} is ignored."
            )
    return None


# -- the projections clipped or softly capped where they are large (clip_qkv), the same on
# small values: a cap fitted to the student's weights ------------------------------------------


def _capped_projections(given, probes) -> str | None:
    """The words for results that are, on every probe, the right layer's with the projected
    queries, keys and/or values clipped to [-c, c] (or capped as c * tanh(x / c)), one c
    fitted where the weights differ most; None otherwise."""
    if any(not g.ok for g in given) or any(p.args[0].shape[-1] % p.args[-1] for p in probes):
        return None
    expected = [ref.multi_head_attention(*p.args) for p in probes]
    gaps = []
    for got, want in zip(given, expected, strict=True):
        w = fitted._weights(got.value)
        if w is None or w.shape != want[1].shape:
            return None
        gaps.append(float(np.max(np.abs(w - want[1]))))
    worst = int(np.argmax(gaps))
    kinds = (
        ("clipped to [-c, c]", lambda c: lambda x: np.clip(x, -c, c)),
        ("capped as c * tanh(x / c)", lambda c: lambda x: c * np.tanh(x / c)),
    )
    for (words, cap), which in itertools.product(kinds, ("QKV", "QK", "Q", "K", "V")):

        def make(c, cap=cap, which=which):
            return _projected(cap(c), which, "model")

        c, best = fitted.fit_cap(make, probes[worst], fitted._weights(given[worst].value))
        if not best.ok:
            continue
        if matches(given, [Outcome(value=make(c)(*p.args)) for p in probes]):
            return (
                f" Here its results are the right layer's with the projected "
                f"{_said_names(which)} {words} before attention, c = {c:.3g} on our inputs: "
                "the same as the right layer wherever every projected value is smaller."
            )
    return None


def _activated_output(given, probes) -> tuple[tuple[str, ...], str] | None:
    """(the ids, the words) for results that are, on every probe, the right layer's, or the
    right layer's with an activation (``ACTIVATIONS``) on some of the projected queries, keys
    and values, with an elementwise function on the output after ``@ Wo``: the weights are
    that layer's as they are, the output that function of its output. None where none fits."""
    if not all(o.ok and isinstance(o.value, tuple | list) and len(o.value) == 2 for o in given):
        return None  # not an (output, weights) pair on every probe
    layers = [("", None, "")] + [
        (words, f, which) for words, f in ACTIVATIONS for which in _subsets("QKV")
    ]
    for i, (p_words, f, which) in enumerate(layers):
        key = ("projections-activated-for-output", i)
        made = trusted(
            key, _projected(f, which, "model") if f else ref.multi_head_attention, probes
        )
        if not all(m.ok for m in made):
            continue
        if not all(same(g.value[1], m.value[1]) for g, m in zip(given, made, strict=True)):
            continue  # the weights are not this layer's
        for o_words, g_f in ACTIVATIONS:
            with np.errstate(all="ignore"):
                outs = [Outcome((g_f(np.asarray(m.value[0])), m.value[1])) for m in made]
            if not matches(given, outs):
                continue
            said = f"{o_words} applied to its output after @ Wo"
            if f is None:
                return (
                    "mha-activated-output",
                ), f" Here its results are the right layer's with {said}."
            return (
                ("mha-transforms-projections", "mha-activated-output"),
                f" Here its results are the right layer's with {p_words} applied to the "
                f"projected {_said_names(which)} before attention, and {said}.",
            )
    return None


def _transformed_or_capped(given, probes) -> str | None:
    found = _transformed_projections(given, probes)
    return found if found is not None else _capped_projections(given, probes)


# -- each head's scores or output passed through an elementwise function (GAT's LeakyReLU on
# the scores, its ELU on each head's output before the concatenation) ----------------------

_IDENTITY = ("", None)


def _leaky(a: float):
    return partial(lambda x, a: np.where(x > 0, x, a * x), a=a)


def _leaky_slope(given, probes) -> float | None:
    """The slope ``a`` of a leaky ReLU on the scaled scores read from the weights' logs: for
    each row the shift from its positive scores, then the slope from its negative ones."""
    slopes = []
    for got, probe in zip(given, probes, strict=True):
        w = fitted._weights(got.value)
        s = _heads(probe)[3]
        if w is None or w.shape != s.shape or (w < 0).any():
            return None
        with np.errstate(divide="ignore"):
            lw = np.log(w)
        rows = zip(s.reshape(-1, s.shape[-1]), lw.reshape(-1, s.shape[-1]), strict=True)
        for row_s, row_w in rows:
            seen = np.isfinite(row_w) & (row_w > -600)  # weights that did not underflow
            pos, neg = seen & (row_s > 0.05), seen & (row_s < -0.05)
            if pos.any() and neg.any():
                c = np.median(row_w[pos] - row_s[pos])
                slopes.extend((row_w[neg] - c) / row_s[neg])
    return float(np.median(slopes)) if slopes else None


def _activated_layer(f_scores, f_out):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        q, k, v = (
            ref.split_heads(np.asarray(X, float) @ W, num_heads, d_head) for W in (Wq, Wk, Wv)
        )
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head)
        w = ref.softmax(f_scores(s) if f_scores is not None else s, axis=-1)
        out = w @ v
        return ref.merge_heads(f_out(out) if f_out is not None else out) @ Wo, w

    return mha


def _activated(given, probes) -> tuple[tuple[str, ...], str] | None:
    """(the ids, the words) for results that are, on every probe, the right layer's with an
    elementwise function on each head's scaled scores before the softmax (a leaky ReLU of any
    slope, fitted, or one of ``ACTIVATIONS``) and/or on each head's output before the heads
    are merged; None where none fits."""
    if not all(o.ok for o in given):
        return None
    slope = _leaky_slope(given, probes)
    on_scores = [_IDENTITY, *ACTIVATIONS]
    if slope is not None and 1e-3 < abs(slope - 1.0) and abs(slope) < 50:
        on_scores.insert(1, (f"a leaky ReLU of slope {slope:.3g}", _leaky(slope)))
    for (s_words, fs), (o_words, fo) in itertools.product(on_scores, [_IDENTITY, *ACTIVATIONS]):
        if fs is None and fo is None:
            continue
        with np.errstate(all="ignore"):
            made = run(_activated_layer(fs, fo), probes)
        if not matches(given, made):
            continue
        ids, said = [], []
        if fs is not None:
            ids.append("mha-activated-scores")
            said.append(f"{s_words} applied to each head's scaled scores before the softmax")
        if fo is not None:
            ids.append("mha-activated-head-outputs")
            said.append(f"{o_words} applied to each head's output before the heads are merged")
        return tuple(ids), f" Here its results are the right layer's with {' and '.join(said)}."
    return None


# -- results that depend on where each token stands: attention has no notion of order, so
# reordering X's tokens must reorder the output's rows and the weights' rows and columns -----


def _reordered(probe) -> tuple[np.ndarray, object]:
    X = np.asarray(probe.args[0], dtype=np.float64)
    perm = np.roll(np.arange(len(X)), 1)[::-1]  # neither the identity nor a reversal alone
    return perm, pr.Probe((X[perm], *probe.args[1:]), dict(probe.kwargs))


def _positional(s: DiagnosisSession, given, probes) -> str | None:
    """The words for results (given right callees, deterministic) that do not follow a
    reordering of the tokens on some probe while a right layer's would: they depend on the
    tokens' positions. Said too: whether the output is still the returned weights times the
    values of X (so that the positions enter only the weights); None where every reordering
    is followed or the results cannot be read."""
    moved = []
    for probe in probes:
        perm, p = _reordered(probe)
        moved.append((perm, p))
    again = s.calls_made("multi_head_attention", [p for _, p in moved], ANSWERS).given
    broken = False
    for got, back, (perm, _) in zip(given, again, moved, strict=True):
        if not (got.ok and back.ok):
            return None
        w, wb = fitted._weights(got.value), fitted._weights(back.value)
        if w is None or wb is None or w.ndim != 3 or w.shape != wb.shape:
            return None
        out = np.asarray(got.value[0], dtype=np.float64)
        want = (out[perm], w[:, perm][:, :, perm])
        broken |= not same(back.value, want)
    if not broken:
        return None
    words = (
        " On our inputs, reordering the tokens of X does not reorder its output and weights "
        "the same way: its results depend on where each token stands."
    )
    follows = True
    for got, probe in zip(given, probes, strict=True):
        X, Wq, Wk, Wv, Wo, h = probe.args
        w = fitted._weights(got.value)
        Vh = ref.split_heads(np.asarray(X, dtype=np.float64) @ Wv, h, X.shape[-1] // h)
        if w.shape != (h, len(X), len(X)) or not same(got.value[0], ref.merge_heads(w @ Vh) @ Wo):
            follows = False
    if follows:
        words += (
            " Its output is still the weights it returns times the values projected from X: the "
            "positions enter the weights, through the queries or keys or the scores."
        )
    return words


CLASSES = (
    ("mha-weights-misassigned", _misassigned),
    ("mha-transforms-input", _transformed_input),
    ("mha-rows-not-normalised", _rows_rescaled),
    ("mha-transforms-projections", _transformed_or_capped),
    ("mha-activated-output", _activated_output),
    ("mha-narrow-projections", _narrow),
    ("mha-smoothed-weights", _smoothed),
    ("mha-grouped-projections", _grouped_projections),
    ("mha-activated-scores", _activated),
)
