"""What student code may never read besides the checkout, for one run of grading: the output
folder and the submissions it grades (a light module: ``mha-grade one`` names them to start
the sandbox before it imports the grader)."""

from __future__ import annotations

from pathlib import Path

from ..outputs.folder import OutputFolder


def protect_paths(out: OutputFolder, submissions: Path) -> tuple[Path, ...]:
    return (out.root, submissions)
