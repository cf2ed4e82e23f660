"""Batch grading throughput: N synthetic submissions (correct, buggy and hostile mixed) graded
with `mha-grade batch -j JOBS`.

Prints submissions per second, peak memory of the whole process tree, and the cost per
submission as a ratio to `python -c "import numpy, torch"` timed in the same run (machines are
noisy; ratios measured together are comparable). Target: ratio <= 0.04 with -j 2.

    .venv/bin/python benchmarks/batch.py            # N=200
    .venv/bin/python benchmarks/batch.py --n 1000   # the acceptance figure
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"

# (name, file, old text, new text): bugs a student might make, applied to the reference.
BUGS = [
    (
        "split-no-transpose",
        "multihead.py",
        ".reshape(n, num_heads, d_head).transpose(1, 0, 2)",
        ".reshape(num_heads, n, d_head)",
    ),
    (
        "softmax-wrong-axis",
        "multihead.py",
        "np.max(x, axis=axis, keepdims=True)",
        "np.max(x, axis=0, keepdims=True)",
    ),
    ("scale-missing", "multihead.py", " / math.sqrt(d_k)", ""),
    (
        "no-output-projection",
        "multihead.py",
        "merge_heads(out_heads) @ Wo",
        "merge_heads(out_heads)",
    ),
    (
        "adapter-no-transpose",
        "crosscheck.py",
        "in_proj[i * d : (i + 1) * d].T.copy()",
        "in_proj[i * d : (i + 1) * d].copy()",
    ),
]
HOSTILE = [
    ("exit-at-import", "multihead.py", "\nimport os\nos._exit(3)\n"),
    (
        "patch-numpy",
        "multihead.py",
        "\nnp.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = print\n",
    ),
    ("raise-at-import", "crosscheck.py", "\nraise RuntimeError('oops')\n"),
    (
        "forge-results",
        "multihead.py",
        "\nopen('/tmp/results.json', 'w').write('{\"score\": 80}')\n",
    ),
]
WEAK_ANSWER = "## Q1\n\nheads, projections, split\n\n## Q2\n\nThey are the same.\n"


def make_submissions(folder: Path, n: int) -> dict[str, int]:
    """Write n submissions: 60% correct, 30% buggy, 10% hostile. Returns counts per kind."""
    counts = {"correct": 0, "buggy": 0, "hostile": 0}
    for i in range(n):
        sub = folder / f"student{i:04d}"
        shutil.copytree(SOLUTIONS, sub, ignore=shutil.ignore_patterns("__*"))
        kind = "correct" if i % 10 < 6 else "buggy" if i % 10 < 9 else "hostile"
        counts[kind] += 1
        if kind == "buggy":
            _, name, old, new = BUGS[i % len(BUGS)]
            path = sub / name
            path.write_text(path.read_text().replace(old, new))
            if i % 3 == 0:
                (sub / "answers.md").write_text(WEAK_ANSWER)
        elif kind == "hostile":
            _, name, tail = HOSTILE[i % len(HOSTILE)]
            with open(sub / name, "a") as f:
                f.write(tail)
        # Every answer sheet differs a little, as a real class's would.
        with open(sub / "answers.md", "a") as f:
            f.write(f"\n<!-- student {i} -->\n")
    return counts


def time_import(repeats: int = 5) -> float:
    """Median wall time of a bare `import numpy, torch` in a new interpreter."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import numpy, torch"], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def tree_rss(proc: psutil.Process) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="number of submissions")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="mha-bench-") as tmp:
        subs, out = Path(tmp) / "subs", Path(tmp) / "out"
        subs.mkdir()
        counts = make_submissions(subs, args.n)
        t_import = time_import()

        cmd = [sys.executable, "-m", "mha_grader.cli", "batch", str(subs), "-o", str(out)]
        cmd += ["-j", str(args.jobs)]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        peak, ps = 0, psutil.Process(proc.pid)
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, tree_rss(ps))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        stdout, stderr = proc.communicate()
        wall = time.perf_counter() - start
        done.set()
        if proc.returncode != 0:
            print(stdout.decode(), stderr.decode(), file=sys.stderr)
            return 1
        rows = (out / "grades.csv").read_text().count("\n") - 1
        t_import_after = time_import()

    t_ref = statistics.median([t_import, t_import_after])
    per_sub = wall / args.n
    print(f"submissions: {args.n} ({counts}), graded rows: {rows}, jobs: {args.jobs}")
    print(f"wall time: {wall:.1f} s (includes start-up), {args.n / wall:.1f} submissions/s")
    print(f"peak memory (all processes): {peak / 2**20:.0f} MiB")
    print(f"python -c 'import numpy, torch': {t_ref:.2f} s")
    ratio = per_sub / t_ref
    print(f"cost per submission: {per_sub * 1000:.0f} ms = {ratio:.3f} x import (target <= 0.04)")
    return 0 if rows == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
