"""What a grading run leaves beside its grade sheet, for ``mha-grade merge`` to check and join.

``OUT/batch.json`` says which grader graded the folder (its fingerprint: hidden tests, rubrics,
points, reference solutions), which part of the class (``--shard``), who was in it, whether the
run finished, and the containment layer it ran under. ``OUT/sources.json`` keeps each student's
code files as text, so that the similarity report can compare the whole class after shards
graded on different machines are merged.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from .report import atomic_write, student_dir

RUN_FILE = "batch.json"
SOURCES_FILE = "sources.json"
CODE_FILES = ("multihead.py", "crosscheck.py")  # what the similarity report compares
UNKNOWN_LAYER = "unknown"
NOT_RUN = "not run"  # refused (or failed) before any of its code ran: no layer to record


def layer_counts(out: str | os.PathLike, students: list[str]) -> Counter:
    """How many of the students were graded under each containment layer, as their
    results.json record it (``extra_data.sandbox``); ``not run`` when it records none (its
    code never ran), ``unknown`` when there is no such record."""
    seen: Counter = Counter()
    for student in students:
        try:
            data = json.loads((student_dir(out, student) / "results.json").read_text())
            layer = data["extra_data"]["sandbox"]
        except (OSError, ValueError, KeyError, TypeError):
            layer = None
        if layer == "":
            layer = NOT_RUN
        seen[layer if isinstance(layer, str) and layer else UNKNOWN_LAYER] += 1
    return seen


def containment_layer(out: str | os.PathLike, students: list[str]) -> str:
    """The containment layer the students were graded under; ``unknown`` when they do not
    say, ``mixed (...)`` when they differ."""
    seen = layer_counts(out, students)
    if len(seen) > 1:
        seen.pop(UNKNOWN_LAYER, None)
    if len(seen) > 1:
        seen.pop(NOT_RUN, None)
    if not seen:
        return UNKNOWN_LAYER
    if len(seen) == 1:
        return next(iter(seen))
    return "mixed (" + ", ".join(f"{k}: {n}" for k, n in sorted(seen.items())) + ")"


def write_run(out: str | os.PathLike, info: dict) -> None:
    atomic_write(Path(out) / RUN_FILE, json.dumps(info, indent=2, sort_keys=True) + "\n")


def read_run(out: str | os.PathLike) -> dict | None:
    """The run's record, or None when the folder holds none (not a batch output)."""
    try:
        info = json.loads((Path(out) / RUN_FILE).read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def write_sources(out: str | os.PathLike, sources: dict[str, dict[str, str]]) -> None:
    """Student id -> {code file name: text}."""
    atomic_write(Path(out) / SOURCES_FILE, json.dumps(sources, sort_keys=True))


def read_sources(out: str | os.PathLike) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((Path(out) / SOURCES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(sid): {n: t for n, t in files.items() if n in CODE_FILES and isinstance(t, str)}
        for sid, files in data.items()
        if isinstance(files, dict)
    }
