"""Draw the READMEs' figure, exercises/docs/heads.png: lab.ipynb's worked example (seed 7, 2 heads)
on the reference solutions, with the notebook's own plotting helper.

    .venv/bin/python scripts/lab_figure.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "exercises"), str(ROOT)]

import numpy as np  # noqa: E402

from solutions.multihead import multi_head_attention  # noqa: E402

import lab_helpers  # noqa: E402

OUT = ROOT / "exercises" / "docs" / "heads.png"


def main() -> None:
    np.random.seed(7)  # the same draw as the notebook's worked example
    X = np.random.randn(5, 8)
    Wq, Wk, Wv, Wo = [np.random.randn(8, 8) for _ in range(4)]
    _, weights = multi_head_attention(X, Wq, Wk, Wv, Wo, 2)
    lab_helpers.plt.show = lambda: None  # keep the figure open to save it
    fig = lab_helpers.plot_heads(weights, "Worked example (seed 7): each head's attention weights")
    fig.savefig(OUT, dpi=110)
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
