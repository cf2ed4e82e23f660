"""Helpers for lab.ipynb: load your files, run an experiment without a traceback, draw heatmaps.

Nothing here implements an exercise: every number the notebook shows comes from your
multihead.py and crosscheck.py, or from torch. Standard library, NumPy and matplotlib only.
"""

from __future__ import annotations

import hashlib
import numbers
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

HERE = Path(__file__).resolve().parent  # the notebook's folder, holding your files
FILES = ("multihead.py", "crosscheck.py")  # crosscheck.py imports multihead.py: load it first


def _root() -> Path:
    """The folder holding mha_check/: the unpacked bundle, or the repository."""
    for folder in (HERE, *HERE.parents):
        if (folder / "mha_check" / "__main__.py").is_file():
            return folder
    raise ImportError(
        "lab_helpers: mha_check/ was not found next to this folder. Keep lab.ipynb, "
        "lab_helpers.py and your files in exercises/ of the unpacked bundle (mha_check/ beside it)."
    )


ROOT = _root()
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the mha_check imported below is this copy

from mha_check.cli import DEFAULT_TIME_LIMIT  # noqa: E402
from mha_check.loading import load_student_files as _load  # noqa: E402
from mha_check.notebook import check, check_all  # noqa: E402, F401  (the notebook's check cells)
from mha_check.tracing import describe, exception_text  # noqa: E402


class Skip(Exception):
    """Raised by the helpers when an experiment cannot go on: carries the sentence to print."""


# --- your files, reloaded when they change -------------------------------------------------

# One module object per file, kept for the whole session: the notebook's `multihead` name stays
# valid, and each reload replaces what is inside it.
_modules = {name: ModuleType(Path(name).stem) for name in FILES}
_digest: str | None = None
_shown = 0  # figures and tables shown so far: did an experiment show anything before it stopped?


def _unavailable(problem: str) -> Callable[[str], Any]:
    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):  # introspection (IPython, pickle): a plain missing attribute
            raise AttributeError(attr)

        def stand_in(*args: Any, **kwargs: Any) -> Any:
            raise Skip(problem)

        return stand_in

    return __getattr__


def _refresh() -> bool:
    """(Re)load both files if either changed since the last load; True when they were loaded."""
    global _digest
    h = hashlib.sha256()
    for name in FILES:
        path = HERE / name
        h.update(path.read_bytes() if path.is_file() else b"\0missing")
    if h.hexdigest() == _digest:
        return False
    _digest = h.hexdigest()
    # mha-check's own loader: fresh modules, one sentence per problem, a time limit on import.
    loaded = _load(HERE, list(FILES), DEFAULT_TIME_LIMIT)
    for name, lf in loaded.items():
        module = _modules[name]
        keep = {"__name__": module.__name__}
        module.__dict__.clear()
        if lf.output.strip():
            print(f"{name} printed while loading:\n{lf.output.rstrip()}")
        if lf.module is not None:
            module.__dict__.update(vars(lf.module))
        else:
            print(lf.problem)
            module.__dict__.update(keep, __getattr__=_unavailable(f"{lf.problem}"))
        sys.modules[module.__name__] = module
    return True


def load_student_files() -> tuple[ModuleType, ModuleType]:
    """Your multihead and crosscheck modules, reloaded by every `experiment` whose files changed."""
    _refresh()
    return _modules["multihead.py"], _modules["crosscheck.py"]


class experiment:  # lower case: it reads as a statement, `with experiment(...):`
    """`with experiment("the heatmaps"):` runs its block on your current files.

    When your code is not written yet, raises, or returns something the block cannot use, the
    rest of the block is skipped and one sentence says why, instead of a traceback.
    """

    def __init__(self, what: str):
        self.what = what

    def __enter__(self) -> experiment:
        if _digest is not None and _refresh():
            print("(your files changed since the last cell: reloaded them)")
        self.shown = _shown
        return self

    def __exit__(self, kind: type | None, e: BaseException | None, tb: Any) -> bool:
        if e is None or isinstance(e, KeyboardInterrupt):
            return False
        skipped = f"Skipped {'the rest of ' if _shown != self.shown else ''}{self.what}"
        if isinstance(e, Skip):
            print(f"{e} {skipped}.")
            return True
        frame = _student_frame(e)
        if frame is None:  # the notebook's own code failed: show it as Python does
            return False
        if isinstance(e, NotImplementedError):
            file = Path(frame.filename).name
            print(
                f"{frame.name} in {file} is not attempted yet (it still raises "
                f"NotImplementedError). {skipped}."
            )
        else:
            print(
                f"Your code raised {exception_text(e)} at {describe(frame)}. {skipped}; the "
                "check below says what was expected."
            )
        return True


def _student_frame(e: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of `e` in your multihead.py or crosscheck.py, if any."""
    mine = [
        f
        for f in traceback.extract_tb(e.__traceback__)
        if Path(f.filename).name in FILES and Path(f.filename).resolve().parent == HERE
    ]
    return mine[-1] if mine else None


# --- what your functions return, checked before it is drawn ---------------------------------


def _show(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    if isinstance(x, dict):
        return f"a dict with the keys {list(x)[:6]}"
    if isinstance(x, tuple | list):
        return f"a {type(x).__name__} of {len(x)} items"
    return "None (is a `return` missing?)" if x is None else f"a {type(x).__name__}"


def result_pair(result: Any, source: str = "multi_head_attention") -> tuple[Any, Any]:
    """`(out, weights)` from what `source` returned, or Skip with what it was."""
    if isinstance(result, tuple | list) and len(result) == 2:
        return result[0], result[1]
    raise Skip(f"{source} returned {_show(result)}; expected a tuple (out, weights).")


def head_weights(
    weights: Any, num_heads: int, n: int, source: str = "multi_head_attention"
) -> np.ndarray:
    """`weights` as a float array of shape (num_heads, n, n), or Skip with what it was."""
    try:
        array = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise Skip(f"{source} gave weights as {_show(weights)}, not an array of numbers.") from None
    if array.shape != (num_heads, n, n):
        raise Skip(
            f"{source} gave weights of shape {array.shape}; expected (num_heads, n, n) = "
            f"{(num_heads, n, n)}."
        )
    return array


def pairs(result: Any, source: str = "distinct_head_pairs") -> list[tuple[int, int]]:
    """`result` as a list of (i, j) pairs of ints, or Skip with what it was."""
    try:
        return [(int(i), int(j)) for i, j in result]
    except (TypeError, ValueError):
        raise Skip(f"{source} returned {_show(result)}, not a list of (i, j) pairs.") from None


def _number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def counts(result: Any, heads: Sequence[int], source: str = "parameter_counts") -> dict[int, Any]:
    """`result` as a dict {heads: count} holding a number for every head count, or Skip."""
    if not isinstance(result, dict):
        raise Skip(f"{source} returned {_show(result)}; expected a dict {{heads: count}}.")
    missing = [h for h in heads if h not in result]
    if missing:
        raise Skip(f"{source} returned {_show(result)}: it has no entry for {missing}.")
    odd = {h: result[h] for h in heads if not _number(result[h])}
    if odd:
        raise Skip(f"{source} returned counts that are not numbers: {odd}.")
    return result


def matrices(result: Any, d_model: int, source: str = "weights_from_torch") -> list[np.ndarray]:
    """`result` as four (d_model, d_model) arrays (Wq, Wk, Wv, Wo), or Skip."""
    try:
        arrays = [np.asarray(m, dtype=float) for m in result]
    except (TypeError, ValueError):
        raise Skip(f"{source} returned {_show(result)}; expected (Wq, Wk, Wv, Wo).") from None
    shapes = [a.shape for a in arrays]
    if len(arrays) != 4 or any(s != (d_model, d_model) for s in shapes):
        raise Skip(
            f"{source} returned arrays of shapes {shapes}; expected four of shape "
            f"{(d_model, d_model)} (Wq, Wk, Wv, Wo)."
        )
    return arrays


def report(result: Any, source: str = "cross_check") -> dict[str, Any]:
    """`result` as cross_check's dict (two numbers and `match`), or Skip with what it lacks."""
    keys = ("output_max_abs_diff", "weights_max_abs_diff", "match")
    if not isinstance(result, dict) or any(k not in result for k in keys):
        raise Skip(f"{source} returned {_show(result)}; expected a dict with the keys {keys}.")
    odd = {k: result[k] for k in keys[:2] if not _number(result[k])}
    if odd:
        raise Skip(f"{source} returned differences that are not numbers: {odd}.")
    return result


# --- what the notebook prints ---------------------------------------------------------------


def _row(values: Sequence[float]) -> str:
    return np.array2string(np.round(np.asarray(values, dtype=float), 3), precision=3)


def token_rows(weights: np.ndarray, token: int, module_rows: dict[int, list[float]]) -> None:
    """Each head's weights for one query token, next to the module's printed numbers."""
    _count_shown()
    print(f"token {token}'s weights (rounded to 3 decimals)")
    for head, expected in module_rows.items():
        yours = np.round(weights[head, token], 3)
        same = np.array_equal(yours, np.round(expected, 3))
        verdict = "same as the module" if same else "differs from the module: see the check below"
        print(f"  head {head}  yours {_row(yours):<34} module {_row(expected):<34} {verdict}")


def pair_verdicts(found: list[tuple[int, int]], num_heads: int) -> None:
    """Every pair of heads with what distinct_head_pairs said about it."""
    _count_shown()
    print(f"distinct_head_pairs says: {found}")
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            words = "attend differently" if (i, j) in found else "same pattern (within atol)"
            print(f"  heads {i} and {j}: {words}")


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain text table, columns as wide as their widest cell."""
    _count_shown()
    cells = [[str(c) for c in header], *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[k]) for r in cells) for k in range(len(header))]
    for i, r in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def _count_shown() -> None:
    global _shown
    _shown += 1


# --- heatmaps -------------------------------------------------------------------------------

# Differences are coloured by their size on one fixed logarithmic scale, the same in every
# figure: float64 rounding (about 1e-16) is faint, float32 rounding (about 1e-7) is in the
# middle, a real mistake (0.01 or more) is dark, and exactly 0 is white. (A scale stretched to
# each figure's own largest difference would paint 1e-17 as dark as a wrong answer.)
DIFF_NORM = LogNorm(vmin=1e-18, vmax=1.0, clip=True)
DIFF_TICKS = [1e-16, 1e-12, 1e-8, 1e-4, 1.0]
_DIFF_CMAP = plt.get_cmap("magma_r").with_extremes(bad="white")


def _heatmap(ax: Any, w: np.ndarray, title: str, diff: bool = False) -> Any:
    n_q, n_k = w.shape
    if diff:  # a difference: its size on DIFF_NORM, its sign and size written in each cell
        # Exactly 0, nan or inf (a broken softmax) are masked: white.
        size = np.ma.masked_where(~np.isfinite(w) | (w == 0), np.abs(w))
        image = ax.imshow(size, cmap=_DIFF_CMAP, norm=DIFF_NORM)
        fmt = "{:.0e}"

        def dark(v: float) -> bool:
            return bool(np.isfinite(v) and v != 0 and DIFF_NORM(abs(v)) > 0.55)

    else:  # attention weights are in [0, 1]: one colour scale for every head
        image = ax.imshow(w, cmap="viridis", vmin=0.0, vmax=1.0)
        fmt = "{:.2f}"

        def dark(v: float) -> bool:
            return v < 0.6

    for q in range(n_q):
        for k in range(n_k):
            v = float(w[q, k])
            text = "0" if diff and v == 0 else fmt.format(v)
            ax.text(
                k,
                q,
                text,
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark(v) else "black",
            )
    ax.set_title(title, fontsize=10)
    ax.set_xticks(range(n_k))
    ax.set_yticks(range(n_q))
    ax.set_xlabel("key token")
    ax.set_ylabel("query token")
    return image


def _weights_colorbar(fig: Any, image: Any, axes: Any) -> None:
    fig.colorbar(image, ax=axes, shrink=0.9, label="attention weight")


def _diff_colorbar(fig: Any, image: Any, axes: Any) -> None:
    bar = fig.colorbar(image, ax=axes, shrink=0.9, ticks=DIFF_TICKS, extend="min")
    bar.set_label("|yours - torch| (log scale; white: exactly 0)")


def plot_heads(weights: np.ndarray, title: str, columns: int = 4) -> Any:
    """One heatmap per head, side by side (a grid beyond `columns` heads)."""
    num_heads = len(weights)
    cols = min(num_heads, columns)
    rows = -(-num_heads // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.2 * cols + 1, 3.2 * rows + 0.4), squeeze=False, layout="constrained"
    )
    for h, ax in enumerate(axes.flat):
        if h < num_heads:
            image = _heatmap(ax, weights[h], f"head {h}")
        else:
            ax.axis("off")
    _weights_colorbar(fig, image, axes)
    fig.suptitle(title)
    _count_shown()
    plt.show()
    return fig


def plot_versus(mine: np.ndarray, theirs: np.ndarray, title: str) -> Any:
    """Your per-head weights, torch's, and their difference: one column per head."""
    num_heads = len(mine)
    fig, axes = plt.subplots(
        3, num_heads, figsize=(3.2 * num_heads + 2, 9.6), squeeze=False, layout="constrained"
    )
    for h in range(num_heads):
        weights = _heatmap(axes[0, h], mine[h], f"yours, head {h}")
        _heatmap(axes[1, h], theirs[h], f"torch, head {h}")
        diff = _heatmap(axes[2, h], mine[h] - theirs[h], f"yours - torch, head {h}", diff=True)
    _weights_colorbar(fig, weights, axes[:2])
    _diff_colorbar(fig, diff, axes[2:])
    fig.suptitle(title)
    _count_shown()
    plt.show()
    return fig


def plot_differences(diffs: dict[str, np.ndarray], title: str) -> Any:
    """One row per setting (label -> yours - torch, per head): how far apart each head is, all
    on one colour scale."""
    num_heads = next(iter(diffs.values())).shape[0]
    fig, axes = plt.subplots(
        len(diffs),
        num_heads,
        figsize=(3.2 * num_heads + 2, 3.3 * len(diffs)),
        squeeze=False,
        layout="constrained",
    )
    for r, (label, d) in enumerate(diffs.items()):
        for h in range(num_heads):
            largest = float(np.max(np.abs(d[h])))
            image = _heatmap(
                axes[r, h], d[h], f"{label}, head {h}\nlargest |diff| {largest:.1e}", diff=True
            )
    _diff_colorbar(fig, image, axes)
    fig.suptitle(title)
    _count_shown()
    plt.show()
    return fig


def plot_counts(counts: dict[str, dict[int, Any]], title: str) -> Any:
    """Grouped bars: parameter count per head count, one bar per source (yours, torch, ...)."""
    labels = list(counts)
    heads = sorted({h for c in counts.values() for h in c})
    fig, ax = plt.subplots(figsize=(8, 3.4), layout="constrained")
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        values = [float(counts[label].get(h, np.nan)) for h in heads]
        xs = np.arange(len(heads)) + (i - (len(labels) - 1) / 2) * width
        bars = ax.bar(xs, values, width, label=label)
        ax.bar_label(bars, fmt="%g", fontsize=8)
    ax.set_xticks(range(len(heads)), [str(h) for h in heads])
    ax.set_xlabel("number of heads")
    ax.set_ylabel("parameters")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    _count_shown()
    plt.show()
    return fig
