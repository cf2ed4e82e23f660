"""What reviews cost: the seal's extra work per submission, the last step of a batch over a
class with decisions, and a reviewer's waits (the queue's start, one --set).

Prints each figure and its ratio to `python -c "import numpy, torch"` timed in the same run
(machines are noisy; ratios measured together are comparable). Targets: the seal's extra work
<= 0.002 per submission (5% of the batch's 0.04 budget); settling the class after grading it
all again <= 0.04 of a bare import per 100 students (1% of the batch's budget); the queue's
start and one --set each under one bare import.

    .venv/bin/python benchmarks/review.py            # 1,000 students, 100 decisions
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mha_check.questions import QUESTION_IDS, WRITTEN_QUESTIONS  # noqa: E402
from mha_grader import cli  # noqa: E402
from mha_grader.grading.submission import Submission, load_submission  # noqa: E402
from mha_grader.outcomes import Grade, TestResult  # noqa: E402
from mha_grader.outputs import reports  # noqa: E402
from mha_grader.outputs.folder import OutputFolder, write_atomic  # noqa: E402
from mha_grader.points import POINTS  # noqa: E402
from mha_grader.review import apply as reviewed  # noqa: E402
from mha_grader.review import decisions as reviews  # noqa: E402
from mha_grader.review import items as review_items  # noqa: E402
from mha_grader.runs.record import record_grade  # noqa: E402

CASES = 5  # per code question: about the hidden tests' 44 cases over 9 questions
FEEDBACK = "Recognised: an idea; another idea.\nStill missing, some hints:\n- a question? " * 3


def bare_import() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy, torch"], check=True)
    return time.perf_counter() - start


def a_grade(student: str, flagged: bool) -> Grade:
    """A grade shaped like a real one: several cases per code question, feedback on each
    written answer, q1 flagged for some students."""
    results = []
    for q in QUESTION_IDS:
        if q in WRITTEN_QUESTIONS:
            tags = ["needs-review"] if flagged and q == "q1" else []
            results.append(
                TestResult(f"{q}: written answer", q, POINTS[q], POINTS[q], FEEDBACK, tags=tags)
            )
        else:
            share = POINTS[q] / CASES
            results += [
                TestResult(f"{q}: case {i}", q, share, share, "passed") for i in range(CASES)
            ]
    return Grade(student, results, digest=student)


def timed(fn, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="students in the class")
    parser.add_argument("--decisions", type=int, default=100)
    args = parser.parse_args()

    base = statistics.median(bare_import() for _ in range(3))
    submission = load_submission(ROOT / "examples" / "submissions" / "alice")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        grade = a_grade("alice", False)

        # The seal before reviews: reports, the row and the key; now also the grade and
        # what a review would judge.
        def old_seal() -> None:
            OutputFolder(out).write_reports(grade)
            row = reports.grade_row(grade)
            seal = {"key": "k", "row": row, "source": submission.source}
            write_atomic(out / "students/alice/grade.json", json.dumps(seal))

        old = timed(old_seal, 200)
        new = timed(lambda: record_grade(OutputFolder(out), grade, "k", submission), 200)
        extra = new - old
        print(f"bare import: {base:.2f} s")
        print(
            f"seal per submission: {1000 * old:.2f} ms before reviews, {1000 * new:.2f} ms now; "
            f"extra {1000 * extra:.2f} ms, ratio {extra / base:.4f} (target <= 0.002)"
        )

        rows = []
        for i in range(args.n):
            sid = f"s{i:04d}"
            g = a_grade(sid, flagged=i % 10 == 0)
            rows.append(
                record_grade(OutputFolder(out), g, "k", Submission(sid, "", submission.files))
            )
        OutputFolder(out).write_grades(rows)
        flagged = [r["student"] for r in rows if r["needs_review"] == "true"]
        for sid in flagged[: args.decisions]:
            reviewed.record(out, sid, "q1", 3.0, "a note", "bench")
        # The whole class graded again (--regrade): each grading process writes the reports
        # with the decisions in them, then the batch's last step settles.
        store = reviews.load(out)
        for i in range(args.n):
            sid = f"s{i:04d}"
            g = a_grade(sid, flagged=i % 10 == 0)
            record_grade(
                OutputFolder(out), g, "k", Submission(sid, "", submission.files), store.of(sid)
            )
        settle = timed(lambda: reviewed.settle(out, rows))
        per_100 = settle / (args.n / 100)
        print(
            f"settling {args.n} students ({min(len(flagged), args.decisions)} decisions): "
            f"{settle:.3f} s, per 100 students ratio {per_100 / base:.4f} (target <= 0.04)"
        )
        start = timed(lambda: review_items.items(out))
        print(f"the queue's items over {args.n} students: {start:.3f} s, ratio {start / base:.3f}")
        one_set = timed(lambda: cli.main(["review", str(out), "--set", flagged[-1], "q1", "2"]), 3)
        print(f"one --set (summary included): {one_set:.3f} s, ratio {one_set / base:.3f}")


if __name__ == "__main__":
    main()
