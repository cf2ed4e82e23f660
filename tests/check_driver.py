"""Run mha-check's code checks on several student folders in one process; print JSON.

Used by tests/test_check_agrees_with_grade.py: one interpreter (numpy and torch imported once)
for many folders, each loaded as mha-check loads it, sys.path restored between them.
Usage: python tests/check_driver.py FOLDER...
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy  # noqa: E402, F401  (imported before any student code, as mha-check does)
import torch  # noqa: E402, F401

from mha_check.cli import DEFAULT_TIME_LIMIT, _code_results  # noqa: E402
from mha_check.questions import CODE_QUESTIONS  # noqa: E402


def main() -> None:
    args = argparse.Namespace(time_limit=DEFAULT_TIME_LIMIT, show_output=False)
    found = {}
    for folder in map(Path, sys.argv[1:]):
        path = list(sys.path)
        try:
            results, _ = _code_results(list(CODE_QUESTIONS), folder, ROOT / "exercises/tests", args)
        finally:
            sys.path[:] = path
        found[folder.name] = {r.qid: [r.status.name, r.message] for r in results}
    print(json.dumps(found))


if __name__ == "__main__":
    main()
