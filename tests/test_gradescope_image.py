"""setup.sh's choice of Python on each kind of image. Only this machine's Python 3.11 can run
for real here, so Gradescope's images are described (an os-release and the interpreters'
versions) rather than run; the lower bound is checked against the lock's own packages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gradescope_support import grading_distributions

from mha_grader.handouts.gradescope import interpreter
from mha_grader.handouts.gradescope.interpreter import (
    EXCLUDED,
    MAX_MINOR,
    MIN_PYTHON,
    Python,
    Unsupported,
    choose,
    parse_os_release,
)

SCRIPT = Path(interpreter.__file__)


def ubuntu(version: str, point: str) -> str:
    return (
        f'NAME="Ubuntu"\nVERSION_ID="{version}"\nID=ubuntu\nID_LIKE=debian\n'
        f'PRETTY_NAME="Ubuntu {version}.{point} LTS"\n'
    )


UBUNTU_22, UBUNTU_24, UBUNTU_20 = ubuntu("22.04", "5"), ubuntu("24.04", "2"), ubuntu("20.04", "6")
ALPINE = 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.19.1\nPRETTY_NAME="Alpine Linux v3.19"\n'


def image(text: str) -> dict:
    return parse_os_release(text)


def test_ubuntu_22_04_installs_ubuntus_python3_11_beside_its_3_10():
    plan = choose(image(UBUNTU_22), [Python("python3", (3, 10, 12))])
    assert plan.python == "python3.11"
    assert plan.apt == ["python3.11", "python3.11-venv", "bubblewrap", "libseccomp2"]


def test_ubuntu_24_04_grades_with_its_own_python_3_12():
    plan = choose(image(UBUNTU_24), [Python("python3", (3, 12, 3))])
    assert plan.python == "python3" and plan.apt == ["bubblewrap", "libseccomp2"]


def test_a_python_without_venv_support_gets_its_venv_package():
    plan = choose(image(UBUNTU_24), [Python("python3", (3, 12, 3), has_venv=False)])
    assert plan.python == "python3" and plan.apt == ["python3.12-venv", "bubblewrap", "libseccomp2"]


def test_a_supported_python_already_in_the_image_is_preferred_to_installing_one():
    pythons = [Python("python3", (3, 10, 12)), Python("python3.11", (3, 11, 0))]
    plan = choose(image(UBUNTU_22), pythons)
    assert plan.python == "python3.11" and plan.apt == ["bubblewrap", "libseccomp2"]


@pytest.mark.parametrize(
    "os_release, version",
    [(UBUNTU_20, (3, 8, 10)), (ALPINE, (3, 11, 8)), (ALPINE, (3, 10, 14))],
)
def test_an_image_without_a_way_to_a_supported_python_is_refused_with_the_reason(
    os_release, version
):
    if version >= MIN_PYTHON:  # Alpine's own 3.11 would do, but it has no venv (no apt to fix it)
        pythons = [Python("python3", version, has_venv=False)]
    else:
        pythons = [Python("python3", version)]
    with pytest.raises(Unsupported) as e:
        choose(image(os_release), pythons)
    message = str(e.value)
    assert image(os_release)["PRETTY_NAME"] in message
    assert ".".join(map(str, version)) in message
    assert "Python 3.11 to 3.14" in message and "numpy 2.4.6" in message
    assert "22.04 or 24.04" in message  # what to do instead


@pytest.mark.parametrize(
    "version, ok",
    [((3, 10, 12), False), ((3, 11, 0), True), ((3, 14, 0), True), ((3, 14, 1), False)]
    + [((3, 14, 2), True), ((3, 15, 0), False)],
)
def test_an_interpreter_the_instructor_names_is_checked_not_trusted(version, ok):
    pythons = [Python("/opt/py/bin/python", version)]
    if ok:
        assert (
            choose(image(UBUNTU_22), pythons, "/opt/py/bin/python").python == "/opt/py/bin/python"
        )
    else:
        with pytest.raises(Unsupported, match="MHA_PYTHON=/opt/py/bin/python is Python"):
            choose(image(UBUNTU_22), pythons, "/opt/py/bin/python")


def test_the_script_prints_the_plan_for_a_described_image(tmp_path):
    release = tmp_path / "os-release"
    release.write_text(UBUNTU_22)
    argv = [sys.executable, str(SCRIPT), "--os-release", str(release)]
    done = subprocess.run(
        [*argv, "--image-python", "python3=3.10.12"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "python=python3.11",
        "apt=python3.11 python3.11-venv bubblewrap libseccomp2",
    ]
    release.write_text(UBUNTU_20)
    done = subprocess.run(
        [*argv, "--image-python", "python3=3.8.10"], capture_output=True, text=True
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("setup.sh: cannot grade on this image: Ubuntu 20.04.6 LTS has")


def test_the_script_runs_this_machines_python_for_real():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--python", sys.executable], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert f"python={sys.executable}" in done.stdout.splitlines()


def test_the_supported_range_is_what_the_pinned_grading_packages_require():
    specs = grading_distributions()
    assert {"numpy", "torch", "otter-grader"} <= set(specs)

    def admitted(version: tuple) -> bool:
        return all(spec.contains(".".join(map(str, version))) for spec in specs.values())

    assert admitted(MIN_PYTHON)  # the lowest supported version is enough for every package...
    assert not admitted((3, 10, 99))  # ...and is the lowest: something needs 3.11
    assert admitted((3, 12, 3))  # Ubuntu 24.04's python3
    for version in EXCLUDED:
        assert not admitted(version)
    assert admitted((*MAX_MINOR, 0))
