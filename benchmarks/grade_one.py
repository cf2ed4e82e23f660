"""Time to grade one submission, cold and warm, as ratios to `python -c "import numpy, torch"`.

- cold: `mha-grade one SUBMISSION -o OUT` in a new process (interpreter, imports, sandbox start,
  hidden-test references, grading, reports);
- warm: `Engine.grade` on an engine that is already running and has graded once (what each
  further submission costs in a batch);
- the bare import is measured in the same run, interleaved with the cold runs.
Submissions: a copy of the reference solutions, and the untouched stubs.
Usage: .venv/bin/python benchmarks/grade_one.py [-n 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mha_check.questions import STUDENT_FILES  # noqa: E402
from mha_grader.grading.engine import Engine  # noqa: E402
from mha_grader.grading.submission import load_submission  # noqa: E402


def wall_time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def make_submissions(tmp: Path) -> dict[str, Path]:
    subs = {}
    for name, source in (("correct", ROOT / "solutions"), ("stubs", ROOT / "exercises")):
        folder = tmp / name
        folder.mkdir()
        for file in STUDENT_FILES:
            shutil.copy(source / file, folder / file)
        subs[name] = folder
    return subs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeats", type=int, default=3)
    args = parser.parse_args()
    bare = [sys.executable, "-c", "import numpy, torch"]
    with tempfile.TemporaryDirectory() as tmp:
        subs = make_submissions(Path(tmp))
        cold_cmd = [
            sys.executable,
            "-m",
            "mha_grader.cli",
            "one",
            str(subs["correct"]),
            "-o",
            str(Path(tmp, "out")),
        ]
        wall_time(bare)  # warm-up: load files into the OS cache
        wall_time(cold_cmd)
        bare_times, cold_times = [], []
        for _ in range(args.repeats):
            bare_times.append(wall_time(bare))
            cold_times.append(wall_time(cold_cmd))
        warm_times: dict[str, list[float]] = {name: [] for name in subs}
        with Engine() as engine:
            for folder in subs.values():  # first grade: hidden-test references computed once
                engine.grade(load_submission(folder))
            for _ in range(max(args.repeats, 5)):
                for name, folder in subs.items():
                    start = time.perf_counter()
                    engine.grade(load_submission(folder))
                    warm_times[name].append(time.perf_counter() - start)
    base = statistics.median(bare_times)
    print(f"import numpy, torch          median {base:.2f} s")
    cold = statistics.median(cold_times)
    print(f"cold: mha-grade one correct  median {cold:.2f} s  ratio {cold / base:.2f}")
    for name, times in warm_times.items():
        warm = statistics.median(times)
        print(f"warm: grade {name:<16} median {warm:.3f} s  ratio {warm / base:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
