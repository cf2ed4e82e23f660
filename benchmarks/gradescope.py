"""One Gradescope grading, cold, as Gradescope runs it: time and peak memory (all processes).

The autograder zip is built, laid out as Gradescope's specification says and set up with this
interpreter (tests/gradescope_support.py), then ``ROOT/run_autograder`` runs in a new process
for each submission: the interpreter starts, imports, starts the sandbox, grades, writes
results.json. The OS file cache is warm (Gradescope's first submission on a fresh container
reads the packages from disk too). Peak memory is the largest sum, over run_autograder and
every process under it, of the proportional set size (PSS: shared pages split among the
processes sharing them), sampled every 20 ms; Gradescope's default container has 768 MB.
CPU time is user + system of every process run_autograder started (Gradescope's default
container has half a CPU, so it is what the wall time there is bound by).
``--refusing-kernel`` runs it in the refusing kernel of tests/refusing_kernel.py (what
Gradescope's Docker containers allow: no namespaces), the figure benchmarks/README.md quotes.
A bare ``python -c "import numpy, torch"`` is timed in the same run, interleaved.
Usage: .venv/bin/python benchmarks/gradescope.py [--refusing-kernel] [-n 3]
"""

from __future__ import annotations

import argparse
import json
import resource
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from gradescope_support import build_zip, clean_env, lay_out, run_setup, submit  # noqa: E402

SUBMISSIONS = {
    "correct": (ROOT / "examples" / "submissions" / "alice", {}),
    "buggy": (ROOT / "examples" / "submissions" / "bob", {}),
    "hostile": (
        ROOT / "tests" / "data" / "gradescope_hostile",
        {"ROOT": "/autograder", "MARK": "mha-left-behind"},
    ),
}


def tree_pss(proc: psutil.Process) -> int:
    total = 0
    try:
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:  # the tree changed while being listed: the next sample will do
        return 0
    for p in tree:
        try:
            total += p.memory_full_info().pss
        except psutil.Error:
            pass
    return total


def cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(root: Path, argv: list[str]) -> tuple[float, int, dict, float]:
    """Wall time, peak PSS of the process tree, the results written, and the CPU time."""
    cpu = cpu_children()
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=root,
        env=clean_env(MHA_AUTOGRADER_ROOT=str(root)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    peak, ps, done = 0, psutil.Process(proc.pid), threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_pss(ps))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    proc.wait()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    results = json.loads((root / "results" / "results.json").read_text())
    return wall, peak, results, cpu_children() - cpu


def bare_import() -> tuple[float, float]:
    """Wall and CPU time of ``python -c "import numpy, torch"``."""
    cpu, start = cpu_children(), time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy, torch"], check=True)
    return time.perf_counter() - start, cpu_children() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeats", type=int, default=3)
    parser.add_argument("--refusing-kernel", action="store_true")
    args = parser.parse_args()
    wrap = list
    if args.refusing_kernel:
        import refusing_kernel

        why = refusing_kernel.available()
        if why:
            print(f"no refusing kernel here: {why}", file=sys.stderr)
            return 2
        wrap = refusing_kernel.wrap
    with tempfile.TemporaryDirectory(prefix="mha-bench-gradescope-") as tmp:
        root = lay_out(build_zip(Path(tmp)))
        try:
            setup = run_setup(root, wrap=wrap, MHA_PYTHON=sys.executable)
            if setup.returncode != 0:
                print(setup.stdout, setup.stderr, file=sys.stderr)
                return 1
            argv = wrap([str(root / "run_autograder")])
            bare_import()  # warm the file cache
            submit(root, SUBMISSIONS["correct"][0])
            run_once(root, argv)
            bare: list[tuple[float, float]] = []
            runs: dict[str, list[tuple[float, int, dict, float]]] = {n: [] for n in SUBMISSIONS}
            for _ in range(args.repeats):
                bare.append(bare_import())
                for name, (folder, placeholders) in SUBMISSIONS.items():
                    submit(root, folder, **placeholders)
                    runs[name].append(run_once(root, argv))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    base = statistics.median(b[0] for b in bare)
    base_cpu = statistics.median(b[1] for b in bare)
    kernel = "refusing kernel (no namespaces)" if args.refusing_kernel else "this kernel"
    print(f"{kernel}; import numpy, torch: median {base:.2f} s, CPU {base_cpu:.2f} s")
    for name, results in runs.items():
        wall = statistics.median(r[0] for r in results)
        peak = max(r[1] for r in results)
        cpu = statistics.median(r[3] for r in results)
        last = results[-1][2]
        extra = last["extra_data"]
        print(
            f"{name:8s} cold {wall:5.2f} s (ratio {wall / base:.2f}), "
            f"CPU {cpu:4.2f} s (ratio {cpu / base_cpu:.2f}), "
            f"peak PSS {peak / 2**20:4.0f}"
            f" MiB, score {last['score']:g}, status {extra.get('status')}, "
            f"sandbox {extra.get('sandbox', '?')}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
