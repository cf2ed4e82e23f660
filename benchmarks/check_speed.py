"""Wall time of `mha-check solutions` as a ratio to `python -c "import numpy, torch"`.

Both are measured in the same run, interleaved, after one warm-up each; the figure is the ratio of
the medians. Target: at most 2.5. Usage: .venv/bin/python benchmarks/check_speed.py [-n 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2.5
COMMANDS = {
    "mha-check solutions": [sys.executable, "-m", "mha_check", "solutions"],
    "import numpy, torch": [sys.executable, "-c", "import numpy, torch"],
}


def wall_time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeats", type=int, default=5)
    args = parser.parse_args()
    for cmd in COMMANDS.values():  # warm-up: load files into the OS cache
        wall_time(cmd)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, cmd in COMMANDS.items():
            times[name].append(wall_time(cmd))
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, t in times.items():
        runs = ", ".join(f"{x:.2f}" for x in t)
        print(f"{name:<22} median {medians[name]:.2f} s  (runs: {runs})")
    ratio = medians["mha-check solutions"] / medians["import numpy, torch"]
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"ratio {ratio:.2f} ({verdict} the target of {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
