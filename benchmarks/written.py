"""CPU time of grading one written answer sheet, as a ratio to `python -c "import numpy, torch"`
(CPU time of both).

The sheets are the labelled answers of tests/data/written_*.toml, one answer per question in each
sheet (every kind: terse, long, LaTeX, other languages...). The rubrics are loaded once, as in a
grading engine. Each repeat grades every sheet and times a bare import, interleaved; the figure is
the median time per sheet over the median import. Target: at most 0.015 (about 20 ms on this
machine), a small part of the per-submission budget of 0.04.
Usage: .venv/bin/python benchmarks/written.py [-n 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mha_check.questions import WRITTEN_QUESTIONS  # noqa: E402
from mha_grader.written import grade_written  # noqa: E402
from mha_grader.written.agreement import labelled_sets, load_labelled  # noqa: E402
from mha_grader.written.rubric import load_rubrics  # noqa: E402
from mha_grader.written.text import rewrite  # noqa: E402

TARGET = 0.015
IMPORT = [sys.executable, "-c", "import numpy, torch"]


def sheets() -> list[str]:
    """answers.md texts, one labelled answer per question in each."""
    by_question: dict[str, list[str]] = {q: [] for q in WRITTEN_QUESTIONS}
    for path in labelled_sets():
        for entry in load_labelled(path):
            by_question[entry["question"]].append(entry["text"])
    count = min(len(texts) for texts in by_question.values())
    return [
        "\n".join(
            f"## {'Challenge' if q == 'challenge' else q.upper()}\n\n> The question.\n\n"
            f"{by_question[q][i]}\n"
            for q in WRITTEN_QUESTIONS
        )
        for i in range(count)
    ]


def per_sheet(texts: list[str]) -> list[float]:
    rewrite.cache_clear()  # each answer is new to a grader; only word-level caches stay warm
    times = []
    for text in texts:
        start = time.process_time()
        grade_written(text)
        times.append(time.process_time() - start)
    return times


def cpu_time(cmd: list[str]) -> float:
    """CPU time (user + system) of a child process: steadier than wall time on a busy machine,
    and the same measure as the sheets' process time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeats", type=int, default=5)
    args = parser.parse_args()
    texts = sheets()
    load_rubrics()
    per_sheet(texts)  # warm-up: caches of stems and typos fill as in a long batch
    cpu_time(IMPORT)
    sheet_medians, imports, worst = [], [], 0.0
    for _ in range(args.repeats):
        times = per_sheet(texts)
        sheet_medians.append(statistics.median(times))
        worst = max(worst, max(times))
        imports.append(cpu_time(IMPORT))
    sheet, bare = statistics.median(sheet_medians), statistics.median(imports)
    print(f"{len(texts)} answer sheets of {len(WRITTEN_QUESTIONS)} answers")
    print(f"grading one sheet: median {sheet * 1000:.1f} ms, slowest {worst * 1000:.1f} ms")
    print(f"import numpy, torch: median {bare:.2f} s of CPU")
    ratio = sheet / bare
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"ratio {ratio:.4f} ({verdict} the target of {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
