"""What the commands share: their options for grading, and how they say that nothing was graded."""

from __future__ import annotations

import argparse
import sys

from ..sandbox.layers import LAYERS, REQUIRE_ENV, LayerInfo, Limits


def add_sandbox_arguments(p: argparse.ArgumentParser) -> None:
    """--require-sandbox, shared by every command that grades."""
    p.add_argument(
        "--require-sandbox",
        choices=LAYERS,
        metavar="LAYER",
        help="refuse to grade unless student code can be contained at least this well: "
        f"{' > '.join(LAYERS)} (default: ${REQUIRE_ENV}, or the best this machine allows)",
    )


def add_call_timeout_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--call-timeout",
        type=float,
        default=Limits.call_timeout,
        metavar="SECONDS",
        help="wall-clock seconds allowed per call into the student's code (default: %(default)g)",
    )


def report_layer(layer: LayerInfo) -> None:
    """Print the layer in force once, in one plain line (and any permission it had to fix)."""
    print(layer.describe(), flush=True)
    if layer.changes:
        print("sandbox: closed to student code (chmod): " + "; ".join(layer.changes), flush=True)


def cannot_grade(command: str, reason: object) -> int:
    """Nothing was graded (no sandbox, or none as strong as required): one line, exit 2."""
    print(f"mha-grade {command}: cannot grade: {reason}", file=sys.stderr)
    return 2


def fail(command: str, message: object, status: int = 2) -> int:
    """One line on stderr, in words; returns the exit status."""
    print(f"mha-grade {command}: {message}", file=sys.stderr)
    return status


def waiting_for_review(rows: list[dict[str, str]], out: object) -> str | None:
    """'waiting for a person's review: 3 students (mha-grade review OUT)', or None when no row
    of the grade sheet needs review: what batch and merge print after the grade sheet."""
    waiting = sum(r.get("needs_review") == "true" for r in rows)
    if not waiting:
        return None
    who = f"{waiting} student{'s' if waiting != 1 else ''}"
    return f"waiting for a person's review: {who} (mha-grade review {out})"
