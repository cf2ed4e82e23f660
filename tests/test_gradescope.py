"""The Gradescope autograder, laid out and run as Gradescope's specification says: the zip's
contents extracted into ROOT/source, run_autograder copied to ROOT/run_autograder, setup.sh run
there (as root, once), the submission in ROOT/submission, run_autograder run from ROOT, the
results read from ROOT/results/results.json. MHA_AUTOGRADER_ROOT moves /autograder to a
temporary ROOT; setup.sh runs for real with this interpreter (MHA_PYTHON) and without apt-get
or network (MHA_SKIP_APT=1, pip with no index: everything is already installed)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from gradescope_support import (
    build_zip,
    clean_env,
    grading_distributions,
    lay_out,
    run_setup,
    submit,
    validate,
)

from mha_check.questions import CODE_QUESTIONS, QUESTION_IDS
from mha_grader.handouts.gradescope import packages
from mha_grader.handouts.gradescope import run as gradescope_run
from mha_grader.points import MAX_TOTAL, POINTS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "submissions"
HOSTILE = ROOT / "tests" / "data" / "gradescope_hostile"
IS_ROOT = os.geteuid() == 0
OTHER_UID = 54321  # "the student's uid" for permission checks: any uid but root's

try:  # a kernel that refuses namespaces, as Gradescope's Docker containers do
    import refusing_kernel

    NO_REFUSING_KERNEL = refusing_kernel.available()
except ImportError:
    refusing_kernel = None
    NO_REFUSING_KERNEL = "needs tests/refusing_kernel.py (the containment half of issue 10)"
KERNELS = [
    pytest.param(False, id="this-kernel"),
    pytest.param(
        True,
        id="refusing-kernel",
        marks=pytest.mark.skipif(bool(NO_REFUSING_KERNEL), reason=str(NO_REFUSING_KERNEL)),
    ),
]


def expect_layer(results: dict, refusing: bool) -> None:
    """In the refusing kernel, as root, the grader must have fallen back to per-worker uids."""
    if refusing and IS_ROOT:
        assert results["extra_data"]["sandbox"] == "uid", results["extra_data"]


def run_autograder(
    root: Path, refusing: bool = False, **env: str
) -> tuple[subprocess.CompletedProcess, dict]:
    argv = [str(root / "run_autograder")]
    done = subprocess.run(
        refusing_kernel.wrap(argv) if refusing else argv,
        cwd=root,
        env=clean_env(MHA_AUTOGRADER_ROOT=str(root), **env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    return done, results


def running_named(name: str) -> list[int]:
    """The processes on this machine whose name (``/proc/PID/comm``) is ``name``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == name:
                found.append(int(entry.name))
        except OSError:  # gone meanwhile
            pass
    return found


def code_points(results: dict) -> float:
    return sum(t["score"] for t in results["tests"] if t["name"].split(":")[0] in CODE_QUESTIONS)


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def gradescope_root(tmp_path_factory):
    """The zip built, laid out and set up once for the module (setup.sh runs once per image)."""
    tmp = tmp_path_factory.mktemp("gradescope")
    root = lay_out(build_zip(tmp))
    # Gradescope builds its image in the same kind of container: setup.sh must work there too.
    wrap = None if NO_REFUSING_KERNEL else refusing_kernel.wrap
    done = run_setup(root, wrap=wrap, MHA_PYTHON=sys.executable)
    assert done.returncode == 0, done.stdout + done.stderr
    yield root
    shutil.rmtree(root, ignore_errors=True)


# -- the zip -----------------------------------------------------------------------------------


def test_zip_puts_setup_run_autograder_and_the_grader_at_its_top_not_in_a_source_folder(
    tmp_path,
):
    with zipfile.ZipFile(build_zip(tmp_path)) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    tops = {name.split("/")[0] for name in infos}
    assert "source" not in tops
    assert {"setup.sh", "run_autograder", "requirements.lock", "mha_grader", "solutions"} <= tops
    assert {"autograder/points.toml", "autograder/tests/softmax.py"} <= set(infos)
    for script in ("setup.sh", "run_autograder"):
        assert (infos[script].external_attr >> 16) & 0o111, f"{script} is not executable"
    assert not tops & {"exercises", "examples", "tests", ".venv", "benchmarks"}
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in infos)


def test_grading_requirements_are_the_locks_pins_without_notebook_or_plot_packages():
    grading = packages.requirements_text(packages.GRADING_PACKAGES).split()
    pins = packages.lock_pins()
    assert grading and all(line in pins.values() for line in grading)
    assert "torch==2.13.0" in grading
    names = {line.split("==")[0].lower() for line in grading}
    assert not names & {"matplotlib", "ipykernel", "jupyter", "jupyterlab", "notebook", "rich"}


def test_a_torch_index_set_when_building_becomes_setup_sh_default_and_names_no_host(tmp_path):
    index = "file:///srv/wheels/cpu"  # any URL: the code itself names none
    with zipfile.ZipFile(build_zip(tmp_path, MHA_TORCH_INDEX_URL=index)) as zf:
        setup = zf.read("setup.sh").decode()
    assert f': "${{MHA_TORCH_INDEX_URL:={index}}}"' in setup.splitlines()[1]
    with zipfile.ZipFile(build_zip(tmp_path)) as zf:
        plain = zf.read("setup.sh").decode()
    assert index not in plain and "://" not in plain


# -- setup.sh ----------------------------------------------------------------------------------


def test_setup_records_the_interpreter_it_checked_for_run_autograder(gradescope_root):
    assert (gradescope_root / "source" / "python-path").read_text().strip() == sys.executable


def test_setup_stops_with_the_reason_on_an_image_whose_python_is_too_old(tmp_path):
    """Ubuntu 20.04 ships Python 3.8: setup.sh must say so and stop before installing."""
    root = lay_out(build_zip(tmp_path))
    fake = tmp_path / "os-release"
    fake.write_text('ID=ubuntu\nVERSION_ID="20.04"\nPRETTY_NAME="Ubuntu 20.04.6 LTS"\n')
    image = tmp_path / "bin"  # the image's commands: python3 and what setup.sh uses
    image.mkdir()
    for tool in ("dirname", "sed"):
        (image / tool).symlink_to(shutil.which(tool))
    (image / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (image / "python3").chmod(0o755)
    (image / "sitecustomize.py").write_text(  # ... posing as Python 3.8.10
        "import sys\nsys.version_info = (3, 8, 10, 'final', 0)\n"
    )
    try:
        done = run_setup(root, MHA_OS_RELEASE=str(fake), PATH=str(image), PYTHONPATH=str(image))
    finally:
        shutil.rmtree(root)
    assert done.returncode == 1
    assert "Ubuntu 20.04.6 LTS" in done.stderr and "3.8.10" in done.stderr
    assert "Python 3.11 to 3.14" in done.stderr and "Traceback" not in done.stderr
    assert "apt-get install" not in done.stdout


# -- run_autograder ----------------------------------------------------------------------------


@pytest.mark.parametrize("refusing", KERNELS)
def test_correct_submission_gets_full_marks_in_valid_results(gradescope_root, refusing):
    submit(gradescope_root, EXAMPLES / "alice")
    done, results = run_autograder(gradescope_root, refusing)
    validate(results)
    expect_layer(results, refusing)
    assert results["score"] == MAX_TOTAL
    assert results["extra_data"]["status"] == "ok"
    # run_autograder's own output is the instructor's (on a failure, a traceback naming the
    # autograder's files): students see the results' outputs, never that.
    assert results["stdout_visibility"] == "hidden"
    layer_lines = [line for line in done.stdout.splitlines() if line.startswith("sandbox: ")]
    assert len(layer_lines) == 1, done.stdout
    assert layer_lines[0].startswith(f"sandbox: {results['extra_data']['sandbox']}: ")
    assert "Traceback" not in done.stdout + done.stderr


def test_buggy_submission_loses_points_with_its_misconception_named(gradescope_root):
    submit(gradescope_root, EXAMPLES / "bob")
    _, results = run_autograder(gradescope_root)
    validate(results)
    assert 0 < results["score"] < MAX_TOTAL
    tags = {tag for t in results["tests"] for tag in t["tags"]}
    assert "misconception:split-no-transpose" in tags


@pytest.mark.parametrize("refusing", KERNELS)
def test_hostile_submission_steals_and_forges_nothing(gradescope_root, refusing):
    source_before = tree_digest(gradescope_root / "source")
    mark = f"mha-{os.getpid() % 10**6}-{int(refusing)}"  # the left-behind process's name
    control = subprocess.Popen(  # the search below finds a process so named
        [sys.executable, "-c", f"open('/proc/self/comm', 'w').write({mark!r}); input()"],
        stdin=subprocess.PIPE,
    )
    try:
        for _ in range(100):
            if running_named(mark):
                break
            time.sleep(0.05)
        assert running_named(mark) == [control.pid]
    finally:
        control.communicate(b"\n", timeout=10)
    submit(gradescope_root, HOSTILE, ROOT=str(gradescope_root), MARK=mark)
    _, results = run_autograder(gradescope_root, refusing)
    time.sleep(3.0)  # a process left behind would forge results.json in the meantime
    assert running_named(mark) == []
    results = json.loads((gradescope_root / "results" / "results.json").read_text())
    validate(results)
    expect_layer(results, refusing)
    assert results["extra_data"]["status"] != "grader-error", results["extra_data"]
    assert code_points(results) == 0
    assert tree_digest(gradescope_root / "source") == source_before


@pytest.mark.skipif(not IS_ROOT, reason="closing files to another uid needs root")
def test_trusted_files_are_closed_to_the_students_uid_and_the_interpreter_stays_readable(
    gradescope_root,
):
    submit(gradescope_root, EXAMPLES / "alice")
    run_autograder(gradescope_root)
    source = gradescope_root / "source"
    probe = (
        "import os, sys\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        os.listdir(p) if os.path.isdir(p) else open(p).read(1)\n"
        "        print('open', p)\n"
        "    except OSError as e:\n"
        "        print('closed', p, type(e).__name__)\n"
    )
    closed = [
        source / "solutions" / "multihead.py",
        source / "autograder" / "points.toml",
        source / "autograder" / "tests" / "softmax.py",
        source / "mha_grader" / "grading" / "hidden.py",
        source / "mha_grader" / "handouts" / "gradescope" / "build.py",
        source / "mha_grader" / "sandbox" / "worker" / "zygote.py",
        source / "mha_check" / "answers.py",
        source / "python-path",
        gradescope_root / "submission" / "multihead.py",
        gradescope_root / "results" / "results.json",
        gradescope_root / "submission_metadata.json",
        gradescope_root,
        source,
    ]
    readable = [Path(sys.prefix) / "pyvenv.cfg"]
    done = subprocess.run(
        ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups"]
        + [sys.executable, "-I", "-c", probe, *map(str, closed + readable)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == len(closed + readable), done.stderr
    for line, path in zip(lines, closed + readable, strict=True):
        expected = "open" if path in readable else "closed"
        assert line.split()[0] == expected, line


def test_a_failing_grader_still_writes_valid_results_saying_it_is_not_the_grade(gradescope_root):
    """The hidden tests of one question are broken: some questions cannot be graded."""
    broken = gradescope_root / "source" / "autograder" / "tests" / "softmax.py"
    original = broken.read_bytes()
    broken.write_text("this is not Python\n")
    try:
        submit(gradescope_root, EXAMPLES / "alice")
        _, results = run_autograder(gradescope_root)
    finally:
        broken.write_bytes(original)
    validate(results)
    assert results["score"] == 0
    assert "not your grade" in results["output"] and "not in your submission" in results["output"]
    extra = results["extra_data"]
    assert extra["status"] == "grader-error"
    assert 0 < extra["partial_score"] < MAX_TOTAL  # what could be graded, for the instructor
    assert "softmax" in extra["detail"]


LAYER_REFUSALS = [
    pytest.param(False, "nonesuch", "names no sandbox layer", id="unknown-layer"),
    pytest.param(  # Gradescope's container refuses namespaces; the instructor required them
        True,
        "namespaces",
        "Creating new namespace failed",
        id="refusing-kernel",
        marks=pytest.mark.skipif(bool(NO_REFUSING_KERNEL), reason=str(NO_REFUSING_KERNEL)),
    ),
]


@pytest.mark.parametrize(("refusing", "required", "why"), LAYER_REFUSALS)
def test_a_sandbox_layer_that_cannot_start_is_a_grader_error_with_a_one_line_reason(
    gradescope_root, refusing, required, why
):
    submit(gradescope_root, EXAMPLES / "alice")
    done, results = run_autograder(gradescope_root, refusing, MHA_REQUIRE_SANDBOX=required)
    validate(results)
    assert results["score"] == 0 and "not your grade" in results["output"]
    reason = results["extra_data"]["reason"]
    assert results["extra_data"]["status"] == "grader-error"
    assert why in reason and "\n" not in reason
    assert "Traceback" not in done.stdout + done.stderr + json.dumps(results)
    assert f"run_autograder: {reason}" in done.stderr.splitlines()


def test_a_grader_that_cannot_start_leaves_the_fallback_results(gradescope_root):
    submit(gradescope_root, EXAMPLES / "alice")
    done, results = run_autograder(gradescope_root, MHA_PYTHON="/nonexistent/python")
    validate(results)
    assert results["score"] == 0 and results["extra_data"]["status"] == "grader-error"
    assert "not your grade" in results["output"]
    assert "exit status 127" in done.stderr


def test_without_its_prepared_fallback_run_autograder_still_writes_valid_results(gradescope_root):
    prepared = gradescope_root / "source" / "grader-error.json"
    kept = prepared.read_bytes()
    prepared.unlink()
    try:
        submit(gradescope_root, EXAMPLES / "alice")
        _, results = run_autograder(gradescope_root, MHA_PYTHON="/nonexistent/python")
    finally:
        prepared.write_bytes(kept)
    validate(results, per_question=False)
    assert results["score"] == 0 and results["extra_data"]["status"] == "grader-error"
    assert "not your grade" in results["output"]


def test_a_grader_stopped_by_its_time_limit_writes_a_grader_error(gradescope_root, tmp_path):
    # A submission whose import takes 8 s (within the 10 s import limit) outlasts a 5 s limit
    # on any machine; 5 s leaves the grader time to install its SIGTERM handler first.
    slow = tmp_path / "slow"
    shutil.copytree(EXAMPLES / "alice", slow)
    code = (slow / "multihead.py").read_text()
    busy = "\nimport time\n\n_t = time.monotonic()\nwhile time.monotonic() < _t + 8:\n    pass\n"
    (slow / "multihead.py").write_text(code + busy)
    submit(gradescope_root, slow)
    _, results = run_autograder(gradescope_root, MHA_GRADER_TIMEOUT="5")
    validate(results)
    assert results["score"] == 0 and results["extra_data"]["status"] == "grader-error"
    assert "Stopped" in results["extra_data"]["reason"]


# Loaded into the grading process by PYTHONPATH: every package setup.sh does not install
# behaves as absent. (The sandboxed worker runs with -I -S and imports only numpy and torch.)
ONLY_INSTALLED = """
import importlib.abc, importlib.metadata, re, sys

ALLOWED = {allowed!r}
OWNERS = importlib.metadata.packages_distributions()


class NotOnGradescope(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        dists = OWNERS.get(name.partition(".")[0], [])
        if dists and not any(re.sub(r"[-_.]+", "-", d).lower() in ALLOWED for d in dists):
            raise ModuleNotFoundError(f"No module named {{name!r}} (setup.sh does not install it)")
        return None


sys.meta_path.insert(0, NotOnGradescope())
"""


def test_grading_needs_no_package_that_setup_sh_leaves_out(gradescope_root, tmp_path):
    allowed = {*grading_distributions(), "pip", "setuptools", "mha-exercises"}
    (tmp_path / "sitecustomize.py").write_text(ONLY_INSTALLED.format(allowed=sorted(allowed)))
    left_out = subprocess.run(  # the stand-in is real: what setup.sh leaves out is missing
        [sys.executable, "-c", "import matplotlib"],
        env=clean_env(PYTHONPATH=str(tmp_path)),
        capture_output=True,
        text=True,
    )
    assert "setup.sh does not install it" in left_out.stderr
    submit(gradescope_root, EXAMPLES / "erin")  # written answers too, and a needs-review flag
    _, results = run_autograder(gradescope_root, PYTHONPATH=str(tmp_path))
    validate(results)
    assert results["extra_data"]["status"] == "ok", results["extra_data"]
    assert code_points(results) == pytest.approx(sum(POINTS[q] for q in CODE_QUESTIONS))


def test_closing_leaves_a_virtualenv_in_the_root_as_setup_made_it(tmp_path):
    (tmp_path / "source").symlink_to(ROOT)  # the grader runs from ROOT/source; never chmod'ed
    venv, submission = tmp_path / "venv", tmp_path / "submission"
    for folder in (venv / "bin", submission):
        folder.mkdir(parents=True)
        (folder / "file").write_text("")
        (folder / "file").chmod(0o644)
    checkout = ROOT.stat().st_mode  # as found: a uid-layer run as root leaves it o=x (closure.py)
    gradescope_run.close_trusted(tmp_path, str(venv))
    assert (venv / "bin" / "file").stat().st_mode & 0o777 == 0o644
    assert (venv / "bin").stat().st_mode & 0o005 == 0o005
    assert submission.stat().st_mode & 0o077 == 0
    assert (submission / "file").stat().st_mode & 0o077 == 0
    assert tmp_path.stat().st_mode & 0o777 == 0o711
    assert ROOT.stat().st_mode == checkout  # the checkout behind the link is untouched


def test_closing_refuses_a_root_the_grader_does_not_run_from(tmp_path):
    (tmp_path / "source").mkdir()
    secret = tmp_path / "notes.txt"
    secret.write_text("an instructor's file")
    secret.chmod(0o644)
    with pytest.raises(RuntimeError, match="is not this autograder's root"):
        gradescope_run.close_trusted(tmp_path)
    assert secret.stat().st_mode & 0o777 == 0o644


def test_a_zip_uploaded_alone_is_graded_as_the_submission(tmp_path):
    (tmp_path / "submission" / "__MACOSX").mkdir(parents=True)
    (tmp_path / "submission" / ".DS_Store").write_text("")
    shutil.copy(EXAMPLES / "frank.zip", tmp_path / "submission")
    assert gradescope_run.submission_path(tmp_path) == tmp_path / "submission" / "frank.zip"
    shutil.copy(EXAMPLES / "alice" / "answers.md", tmp_path / "submission")
    assert gradescope_run.submission_path(tmp_path) == tmp_path / "submission"


def test_grader_error_results_list_every_question_at_zero():
    results = gradescope_run.grader_error_results("why")
    validate(results)
    assert [t["name"].split(":")[0] for t in results["tests"]] == list(QUESTION_IDS)
    assert sum(t["max_score"] for t in results["tests"]) == sum(POINTS.values())
