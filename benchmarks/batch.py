"""Batch grading throughput: N synthetic submissions (correct, buggy and hostile mixed) graded
with `mha-grade batch -j JOBS`.

Three mixes: `--mix correct` (the default: 60% correct, 30% buggy, 10% hostile), `--mix buggy`
(60% one-bug submissions from the mutation suite, tests/mutants/, every bug of it in turn, so
that diagnosis and carried-forward errors are at work; 30% correct, 10% hostile) and
`--mix unimportable` (no code file can be imported: a SyntaxError, an exception raised while
importing, or a package grading lacks, in both files; the answers are the reference's): what such
a submission costs the batch, target <= 10 ms.

Prints submissions per second, peak memory of the whole process tree, and the cost per
submission as a ratio to `python -c "import numpy, torch"` timed in the same run (machines are
noisy; ratios measured together are comparable). Target: ratio <= 0.04 with -j 2.

    .venv/bin/python benchmarks/batch.py            # N=200
    .venv/bin/python benchmarks/batch.py --n 1000   # the acceptance figure
    .venv/bin/python benchmarks/batch.py --n 1000 --mix buggy
    .venv/bin/python benchmarks/batch.py --n 1000 --mix unimportable
    .venv/bin/python benchmarks/batch.py --refusing-kernel   # as in a Docker container

With --refusing-kernel the grader runs in a kernel that refuses namespaces (tests/
refusing_kernel.py): as root that is the uid layer, as in Gradescope's containers; the bare
import is timed there too.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
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
sys.path.insert(0, str(ROOT))
SOLUTIONS = ROOT / "solutions"
INDEPENDENT = ROOT / "tests" / "data" / "independent"
sys.path.insert(0, str(ROOT / "tests"))

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
# (name, text put before each code file's own): each leaves no code file that imports.
UNIMPORTABLE = [
    ("syntax-error", {"multihead.py": "def split_heads(X:\n", "crosscheck.py": "import = 1\n"}),
    (
        "raises-at-import",
        {
            "multihead.py": "raise RuntimeError('not finished')\n",
            "crosscheck.py": "raise RuntimeError('not finished')\n",
        },
    ),
    (
        "package-missing",
        {"multihead.py": "import tensorflow as tf\n", "crosscheck.py": "import jax\n"},
    ),
]
WEAK_ANSWER = "## Q1\n\nheads, projections, split\n\n## Q2\n\nThey are the same.\n"


def _functions(path: Path) -> dict[str, str]:
    """Each top-level function's source in a student's file."""
    text = path.read_text()
    tree = ast.parse(text)
    return {
        f.name: ast.get_source_segment(text, f) for f in tree.body if isinstance(f, ast.FunctionDef)
    }


HEADERS = {
    "multihead.py": "import itertools\nimport math\nfrom collections.abc import Iterable\n"
    "from math import sqrt\n\nimport numpy as np\n",
    "crosscheck.py": "import numpy as np\nimport torch\n\n"
    "from multihead import multi_head_attention\n",
}


def mixed_solution(folder: Path, rng: random.Random, pool: dict[str, list[dict[str, str]]]) -> None:
    """A correct submission whose every function comes from a different independently written
    student (tests/data/independent/), in shuffled order: a class whose code varies as a real
    one's does, for the similarity report."""
    folder.mkdir()
    for name, header in HEADERS.items():
        funcs = list(rng.choice(pool[name]).keys())
        rng.shuffle(funcs)
        body = "\n\n".join(rng.choice(pool[name])[f] for f in funcs)
        (folder / name).write_text(header + "\n\n" + body + "\n")
    shutil.copy(SOLUTIONS / "answers.md", folder / "answers.md")


def _one_bug_submissions() -> list:
    """The mutation suite's submissions that hold exactly one bug (tests/mutants/)."""
    from tests.mutants.build import SUBMISSIONS

    return [s for s in SUBMISSIONS if s.blame is not None]


def make_submissions(folder: Path, n: int, mix: str = "correct") -> dict[str, int]:
    """Write n submissions. Mix "correct": 60% correct (mixed from independent solutions; one in
    25 a copy of the previous one), 30% buggy, 10% hostile. Mix "buggy": 60% one-bug (the
    mutation suite's, in turn), 30% correct, 10% hostile. Returns counts per kind."""
    if mix == "unimportable":
        return make_unimportable(folder, n)
    counts = {"correct": 0, "copied": 0, "buggy": 0, "hostile": 0}
    rng = random.Random(0)
    students = sorted(INDEPENDENT.iterdir())
    pool = {name: [_functions(s / name) for s in students] for name in HEADERS}
    one_bug = _one_bug_submissions() if mix == "buggy" else []
    previous = None
    for i in range(n):
        sub = folder / f"student{i:04d}"
        if mix == "buggy":
            kind = "buggy" if i % 10 < 6 else "correct" if i % 10 < 9 else "hostile"
        else:
            kind = "correct" if i % 10 < 6 else "buggy" if i % 10 < 9 else "hostile"
        if kind == "buggy" and one_bug:
            one_bug[counts["buggy"] % len(one_bug)].write(sub)
            counts["buggy"] += 1
            if i % 3 == 0:
                (sub / "answers.md").write_text(WEAK_ANSWER)
            with open(sub / "answers.md", "a") as f:
                f.write(f"\n<!-- student {i} -->\n")
            continue
        if kind == "correct":
            if previous is not None and i % 25 == 0:
                shutil.copytree(previous, sub)
                counts["copied"] += 1
            else:
                mixed_solution(sub, rng, pool)
                counts["correct"] += 1
            previous = sub
            continue
        shutil.copytree(SOLUTIONS, sub, ignore=shutil.ignore_patterns("__*"))
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


def make_unimportable(folder: Path, n: int) -> dict[str, int]:
    """n submissions of the reference whose code files cannot be imported, the kinds in turn."""
    counts = {name: 0 for name, _ in UNIMPORTABLE}
    for i in range(n):
        sub = folder / f"student{i:04d}"
        shutil.copytree(SOLUTIONS, sub, ignore=shutil.ignore_patterns("__*"))
        name, heads = UNIMPORTABLE[i % len(UNIMPORTABLE)]
        for file, head in heads.items():
            text = (sub / file).read_text()
            future = "from __future__ import annotations\n"  # must stay the first statement
            at = text.index(future) + len(future) if future in text else 0
            (sub / file).write_text(text[:at] + head + text[at:])
        with open(sub / "answers.md", "a") as f:
            f.write(f"\n<!-- student {i} -->\n")
        counts[name] += 1
    return counts


def time_import(wrap, repeats: int = 5) -> float:
    """Median wall time of a bare `import numpy, torch` in a new interpreter."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(wrap([sys.executable, "-c", "import numpy, torch"]), check=True)
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
    parser.add_argument(
        "--refusing-kernel",
        action="store_true",
        help="grade in a kernel that refuses namespaces (the uid layer as root)",
    )
    parser.add_argument("--mix", choices=("correct", "buggy", "unimportable"), default="correct")
    args = parser.parse_args()
    if args.refusing_kernel:
        from refusing_kernel import wrap
    else:

        def wrap(argv: list[str]) -> list[str]:
            return argv

    with tempfile.TemporaryDirectory(prefix="mha-bench-") as tmp:
        subs, out = Path(tmp) / "subs", Path(tmp) / "out"
        subs.mkdir()
        counts = make_submissions(subs, args.n, args.mix)
        t_import = time_import(wrap)

        cmd = [sys.executable, "-m", "mha_grader.cli", "batch", str(subs), "-o", str(out)]
        cmd += ["-j", str(args.jobs)]
        start = time.perf_counter()
        proc = subprocess.Popen(wrap(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        peak, ps = 0, psutil.Process(proc.pid)
        first = float("nan")  # seconds before the first student's grade is sealed
        done = threading.Event()

        def sample() -> None:
            nonlocal peak, first
            while not done.is_set():
                peak = max(peak, tree_rss(ps))
                if first != first and any((out / "students").glob("*/grade.json")):
                    first = time.perf_counter() - start
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        stdout, stderr = proc.communicate()
        wall = time.perf_counter() - start
        done.set()
        if proc.returncode != 0:
            print(stdout.decode(), stderr.decode(), file=sys.stderr)
            return 1
        rows = (out / "grades.csv").read_text().count("\n") - 1
        report = json.loads((out / "similarity.json").read_text())
        pairs = len(report["pairs"])
        groups = [(g["kind"], len(g["students"])) for g in report["groups"]]
        built = len({f["student"] for f in report["runtime_code"]})
        t_import_after = time_import(wrap)

    t_ref = statistics.median([t_import, t_import_after])
    per_sub = wall / args.n
    text = stdout.decode()
    m = re.search(r"similarity: \d+ submissions compared in ([\d.]+) s", text)
    parent = float(m.group(1)) if m else float("nan")
    m = re.search(r"similarity: fingerprints made while grading in ([\d.]+) s", text)
    in_graders = float(m.group(1)) if m else float("nan")
    # What the report adds to the batch: the parent's step after grading, plus the grading
    # processes' fingerprinting, which runs on `jobs` processes side by side.
    similarity = parent + in_graders / args.jobs
    print(text.splitlines()[0])  # the sandbox layer in force
    print(
        f"mix: {args.mix}; submissions: {args.n} ({counts}), graded rows: {rows}, jobs: {args.jobs}"
    )
    print(f"wall time: {wall:.1f} s (includes start-up), {args.n / wall:.1f} submissions/s")
    print(f"peak memory (all processes): {peak / 2**20:.0f} MiB")
    print(f"python -c 'import numpy, torch': {t_ref:.2f} s")
    ratio = per_sub / t_ref
    target = "10 ms" if args.mix == "unimportable" else "0.04 x import"
    print(
        f"cost per submission: {per_sub * 1000:.0f} ms = {ratio:.3f} x import (target <= {target})"
    )
    after_first = (wall - first) / max(1, args.n - 1)
    print(
        f"time before the first grade: {first:.2f} s = {first / t_ref:.2f} x import (target <= "
        f"1.5); after it, {after_first * 1000:.0f} ms = {after_first / t_ref:.3f} x import per "
        "submission"
    )
    print(
        f"similarity report: {similarity:.2f} s = {100 * similarity / wall:.1f}% of the batch's "
        f"time (target <= 10%): {parent:.2f} s in the parent after grading + "
        f"{in_graders:.2f} s of fingerprints in the grading processes / {args.jobs} jobs; "
        f"{pairs} pairs worth a look ({counts.get('copied', 0)} copies planted)"
    )
    same = sorted((n for kind, n in groups if kind == "same"), reverse=True)
    shared = sorted((n for kind, n in groups if kind == "shared"), reverse=True)
    print(
        f"groups: {len(same)} with the same code (the largest: {same[:6]}), "
        f"{len(shared)} sharing code many hold (sizes {shared}); {built} submissions whose code "
        "is not all in their text"
    )
    return 0 if rows == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
