import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the trusted side imports `solutions` from the checkout

# The files that take longest (measured with --durations, 2026-12-02 04:40 UTC), started first:
# with `--dist loadfile` a file runs whole in one process, and a long one started last leaves the
# other processes idle at the end. The rest keep their order.
LONGEST_FIRST = (
    "test_layers.py",
    "test_batch.py",
    "test_gradescope.py",
    "test_degenerate.py",
    "test_slurm.py",
    "test_shards.py",
    "test_diagnose_engine.py",
    "test_mha_check.py",
    "test_review_batch.py",
    "test_hostile.py",
    "test_lab_notebook.py",
    "test_redteam_inputs.py",
    "test_redteam_protocol.py",
    "test_engine.py",
    # Reads the grades test_diagnose_engine.py makes (tests/suite_grades.py): later, not beside it.
    "test_check_agrees_with_grade.py",
)


def pytest_collection_modifyitems(items: list) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
