"""Which containment layer a class's code ran in, as each student's results.json records it
(``extra_data.sandbox``, docs/contract.md §7): for batch.json and the summary."""

from __future__ import annotations

from collections import Counter

from .folder import OutputFolder

UNKNOWN_LAYER = "unknown"
NOT_RUN = "not run"  # refused (or failed) before any of its code ran: no layer to record


def layer_counts(out: OutputFolder, students: list[str]) -> Counter:
    """How many of the students were graded under each containment layer; ``not run`` when
    a student's results record none (its code never ran), ``unknown`` when there is no such
    record."""
    seen: Counter = Counter()
    for student in students:
        data = out.read_results(student)
        try:
            layer = data["extra_data"]["sandbox"] if data is not None else None
        except (KeyError, TypeError):
            layer = None
        if layer == "":
            layer = NOT_RUN
        seen[layer if isinstance(layer, str) and layer else UNKNOWN_LAYER] += 1
    return seen


def containment_layer(out: OutputFolder, students: list[str]) -> str:
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
