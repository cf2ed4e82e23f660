"""The lab notebook, executed in a real Jupyter kernel as a student runs it: on the reference
solutions (in the unpacked bundle), on the untouched stubs (in this repository) and on a buggy
submission."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from mha_check.questions import CODE_QUESTIONS, QUESTION_IDS, WRITTEN_QUESTIONS
from mha_grader.handouts.bundle import BUNDLE_DIR, build_bundle
from tests.mutants.build import BY_NAME

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "exercises" / "lab.ipynb"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Cells by id: the experiments (each shows at least one figure when the code is right) and the
# check cells with the questions each one checks.
FIGURES = ["worked-example", "own-seed", "four-heads", "parameter-counts", "cross-check-heatmaps"]
EXPERIMENTS = [*FIGURES, "non-divisor", "cross-check-table"]
EXERCISE_1 = [
    q for q, f in CODE_QUESTIONS.items() if f == "multihead.py" and q != "parameter_counts"
]
EXERCISE_3 = [q for q, f in CODE_QUESTIONS.items() if f == "crosscheck.py"]
CHECKS = {
    "check-1": EXERCISE_1,
    "check-2": ["parameter_counts"],
    "check-3": EXERCISE_3,
    "check-written": list(WRITTEN_QUESTIONS),
    "check-all": list(QUESTION_IDS),
}


def execute(folder: Path, until: str | None = None) -> dict[str, str | list]:
    """Run lab.ipynb in `folder` from the top (to the cell `until`, if given); cell id -> its
    text output (colours removed), and cell id + ":images" -> its PNG images."""
    nb = nbformat.read(folder / "lab.ipynb", as_version=4)
    if until is not None:
        ids = [c.id for c in nb.cells]
        nb.cells = nb.cells[: ids.index(until) + 1]
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    cells: dict[str, str | list] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        text, images = [], []
        for out in cell.outputs:
            if out.output_type == "stream":
                text.append(out.text)
            elif out.output_type == "error":
                text.append(f"ERROR {out.ename}: {out.evalue}\n" + "\n".join(out.traceback))
            elif "image/png" in out.get("data", {}):
                images.append(base64.b64decode(out["data"]["image/png"]))
        cells[cell.id] = ANSI.sub("", "".join(text))
        cells[cell.id + ":images"] = images
    return cells


def assert_no_error(cells: dict) -> None:
    for cell_id, text in cells.items():
        if isinstance(text, str):
            assert "ERROR" not in text and "Traceback" not in text, (cell_id, text)


def mha_check(folder: Path, *qids: str) -> str:
    """What `python -m mha_check FOLDER -q ...` prints, run from the folder holding mha_check."""
    args = [a for q in qids for a in ("--question", q)]
    run = subprocess.run(
        [sys.executable, "-m", "mha_check", str(folder), *args],
        cwd=folder.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run.stdout + run.stderr


def status_lines(text: str) -> dict[str, str]:
    """Question id -> the rest of its line in a report."""
    return {
        m.group(1): m.group(2)
        for m in re.finditer(r"^  (\w+)\s+(\S.*)$", text, re.MULTILINE)
        if m.group(1) in QUESTION_IDS
    }


@pytest.fixture(scope="module")
def bundle_with_reference(tmp_path_factory) -> Path:
    """The unpacked student bundle with the reference solutions filled in."""
    tmp = tmp_path_factory.mktemp("lab")
    with zipfile.ZipFile(build_bundle(tmp / "student.zip")) as zf:
        zf.extractall(tmp)
    folder = tmp / BUNDLE_DIR / "exercises"
    for name in ("multihead.py", "crosscheck.py", "answers.md"):
        shutil.copy(ROOT / "solutions" / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def reference_run(bundle_with_reference) -> dict:
    return execute(bundle_with_reference)


@pytest.fixture(scope="module")
def stubs_run() -> dict:
    return execute(ROOT / "exercises")  # the repository's own layout and untouched stubs


def test_stored_notebook_has_no_outputs():
    nb = json.loads(NOTEBOOK.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)
    ids = {c["id"] for c in code}
    assert set(EXPERIMENTS) | set(CHECKS) <= ids


def test_reference_run_shows_the_modules_numbers_and_a_figure_per_experiment(reference_run):
    cells = reference_run
    assert_no_error(cells)
    worked = cells["worked-example"]
    assert "[0.    0.    0.424 0.576 0.   ]" in worked
    assert "[0. 0. 0. 0. 1.]" in worked
    assert worked.count("same as the module") == 2
    assert "distinct_head_pairs says: [(0, 1)]" in worked
    assert "heads 0 and 1: attend differently" in worked
    assert cells["four-heads"].count("attend differently") == 6  # every pair of the 4 heads
    counts = cells["parameter-counts"]
    assert re.search(r"^\s+8\s+256\s+256\s+288\s+288$", counts, re.MULTILINE), counts
    assert "Yours match torch's everywhere." in counts
    assert "raised ValueError" in cells["non-divisor"]
    table = cells["cross-check-table"]
    assert len(re.findall(r"(True|False)\s+float(32|64)\s+\S+\s+\S+\s+True$", table, re.M)) == 4
    for cell_id in FIGURES:
        images = cells[cell_id + ":images"]
        assert images and all(i.startswith(b"\x89PNG") for i in images), cell_id
    for cell_id in EXPERIMENTS:
        assert "not attempted" not in cells[cell_id] and "Skipped" not in cells[cell_id]


def test_reference_run_check_cells_print_what_mha_check_prints(
    reference_run, bundle_with_reference
):
    for cell_id, qids in CHECKS.items():
        lines = status_lines(reference_run[cell_id])
        assert list(lines) == qids, cell_id
        assert all(s.startswith(("passed", "answered")) for s in lines.values()), lines
    # The bundle's own mha_check ran, on the notebook's folder: the same report, line for line.
    assert reference_run["check-all"] == mha_check(bundle_with_reference)


def test_stubs_run_says_what_is_not_attempted_and_skips_every_figure(stubs_run):
    cells = stubs_run
    assert_no_error(cells)
    for cell_id in EXPERIMENTS:
        text = cells[cell_id]
        assert re.search(r"\w+ in \w+\.py is not attempted yet", text), (cell_id, text)
        assert "Skipped" in text and not cells[cell_id + ":images"], cell_id
    assert "multi_head_attention in multihead.py is not attempted yet" in cells["worked-example"]
    assert "weights_from_torch in crosscheck.py" in cells["cross-check-heatmaps"]
    for cell_id, qids in CHECKS.items():
        lines = status_lines(cells[cell_id])
        assert lines == {q: "not attempted yet" for q in qids}, cell_id


def test_buggy_split_heads_is_named_in_the_check_cell_as_mha_check_names_it(tmp_path):
    folder = tmp_path / "exercises"
    BY_NAME["split_heads__np_reshape"].write(folder)  # reshape to (h, n, d) without transposing
    shutil.copytree(ROOT / "mha_check", tmp_path / "mha_check")
    shutil.copytree(ROOT / "exercises" / "tests", folder / "tests")
    for name in ("lab.ipynb", "lab_helpers.py"):
        shutil.copy(ROOT / "exercises" / name, folder / name)
    cells = execute(folder, until="check-1")  # exercise 1 and its check: where the bug shows
    assert_no_error(cells)
    report = cells["check-1"]
    assert report == mha_check(folder, *EXERCISE_1)
    split = status_lines(report)["split_heads"]
    assert split.startswith("failed")
    assert "Reshape to (n, num_heads, d_head) first, then move the head axis" in report
    # The experiment still draws what the buggy code gives, and says it is not the module's.
    assert "differs from the module" in cells["worked-example"]
    assert cells["worked-example:images"]


def test_bundle_requirements_pin_the_notebooks_packages_as_locked(bundle_with_reference):
    wanted = (bundle_with_reference.parent / "requirements.txt").read_text().splitlines()
    locked = (ROOT / "requirements.lock").read_text().splitlines()
    for package in ("ipykernel", "matplotlib"):
        pins = [line for line in wanted if line.startswith(f"{package}==")]
        assert len(pins) == 1 and pins[0] in locked, (package, wanted)


def test_check_stops_a_hanging_function_at_its_time_limit(tmp_path, capsys, monkeypatch):
    from mha_check.notebook import check

    folder = tmp_path / "exercises"
    folder.mkdir()
    for name in ("multihead.py", "crosscheck.py", "answers.md"):
        shutil.copy(ROOT / "solutions" / name, folder / name)
    with (folder / "multihead.py").open("a") as f:
        f.write("\n\ndef split_heads(M, num_heads, d_head):\n    while True:\n        pass\n")
    monkeypatch.chdir(tmp_path)  # as from a notebook in the folder above: ./exercises by default
    check("split_heads", time_limit=1)
    out = ANSI.sub("", capsys.readouterr().out)
    assert f"your files in {folder.resolve()}" in out
    assert "split_heads did not finish within 1 s" in out, out


def test_the_cross_check_modules_hold_the_same_weights_in_every_layout_and_dtype():
    """The cross-check compares four settings of one module: the notebook's torch_module must
    give the same weights in each (float32 rounded from float64), as its comment says."""
    import ast

    import numpy as np
    import torch

    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = next(c.source for c in nb.cells if c.get("id") == "cross-check-heatmaps")
    tree = ast.parse(source)
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "torch_module"]
    assert keep, "the cell defines torch_module"
    scope = {"torch": torch, "np": np}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "lab.ipynb", "exec"), scope)
    modules = [
        scope["torch_module"](batch_first, dtype)
        for batch_first in (True, False)
        for dtype in (torch.float64, torch.float32)
    ]
    first = {k: v.double() for k, v in modules[0].state_dict().items()}
    for mha in modules[1:]:
        for k, v in mha.state_dict().items():
            assert torch.allclose(v.double(), first[k], rtol=1e-6, atol=1e-7), k
    assert {m.in_proj_weight.dtype for m in modules} == {torch.float64, torch.float32}
    assert {m.batch_first for m in modules} == {True, False}
