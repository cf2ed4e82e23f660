"""Red team: submissions built to stall, overload or confuse the trusted side before any code runs.

A FIFO or a device in place of a file, a zip that declares a million entries, a zip with two
entries of one name, answers.md built to make a parser take hours, answers hidden where a
reader does not see them, student ids that a spreadsheet would run as formulas, two submissions
that map to one id. Each ends in a refusal or a grade, within a minute and well under 1 GB in the
grading process (measured in a subprocess), with its outcome asserted.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from mha_check.answers import CODE, HTML, IMAGE, UNRENDERED, read_sections
from mha_check.questions import STUDENT_FILES, WRITTEN_QUESTIONS
from mha_check.results import Status
from mha_check.written import written_results
from mha_grader.grading import submission
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outputs.folder import OutputFolder
from mha_grader.points import POINTS
from mha_grader.runs.batch import run_batch_grading
from mha_grader.sandbox import Limits
from mha_grader.written import grade_written

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=2.0, submission_timeout=20.0)


def correct(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in STUDENT_FILES:
        shutil.copy(ROOT / "solutions" / name, folder / name)
    return folder


def finishes(call, seconds: float = 60.0):
    """Run ``call`` in a thread; fail (instead of hanging the suite) if it does not return."""
    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("value", call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "did not finish: the grader was stalled"
    return box["value"]


def measured(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; its last printed line is JSON, to which the peak
    resident memory of that process is added."""
    script = code + (
        "\nimport resource\n"
        "print(json.dumps({**result, 'peak': resource.getrusage(resource.RUSAGE_SELF)"
        ".ru_maxrss * 1024}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- files that are not files ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["answers.md", "multihead.py"])
def test_a_fifo_in_place_of_a_file_is_refused_without_waiting(tmp_path, name):
    folder = correct(tmp_path / "fifo")
    (folder / name).unlink()
    os.mkfifo(folder / name)
    s = finishes(lambda: load_submission(folder))
    assert (
        s.problems[name].kind == "unreadable" and "not a regular file" in s.problems[name].message
    )
    assert set(s.files) == set(STUDENT_FILES) - {name}


def test_a_fifo_does_not_stop_a_batch_and_costs_only_what_it_replaces(tmp_path):
    subs = tmp_path / "subs"
    correct(subs / "ada")
    folder = correct(subs / "fifo")
    (folder / "answers.md").unlink()
    os.mkfifo(folder / "answers.md")
    result = finishes(
        lambda: run_batch_grading(subs, tmp_path / "out", show_progress=False, limits=LIMITS)
    )
    rows = {r["student"]: r for r in result.rows}
    assert rows["ada"]["status"] == "ok" and rows["fifo"]["status"] == "unreadable-files"
    assert float(rows["fifo"]["total"]) == float(rows["ada"]["total"]) - sum(
        POINTS[q] for q in WRITTEN_QUESTIONS
    )
    assert result.failed == []


def test_a_folder_of_too_many_entries_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(submission, "MAX_ENTRIES", 50)
    folder = correct(tmp_path / "crowd")
    for i in range(60):
        (folder / f"junk{i}.txt").write_text("x")
    s = load_submission(folder)
    assert s.refused and "more than 50" in s.notes[0] and s.files == {}


# --- zips ---------------------------------------------------------------------------------------


def million_entry_zip(path: Path) -> Path:
    """A zip whose central directory really holds a million entries (about 50 MB), declared in
    its ZIP64 end record: zipfile would build a million ZipInfo objects to read it."""
    name = b"multihead.py"
    entry = struct.pack(
        "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0
    )
    directory = (entry + name) * 1_000_000
    eocd64 = struct.pack(
        "<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 1_000_000, 1_000_000, len(directory), 0
    )
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, len(directory), 1)
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    path.write_bytes(directory + eocd64 + locator + eocd)
    return path


def test_a_zip_declaring_a_million_entries_is_refused_before_its_directory_is_read(
    tmp_path, monkeypatch
):
    archive = million_entry_zip(tmp_path / "million.zip")

    def never(*args, **kwargs):
        raise AssertionError("zipfile read the directory")

    monkeypatch.setattr(submission.zipfile, "ZipFile", never)
    s = load_submission(archive)
    assert s.refused and "more than 2000 entries" in s.refused


def test_grading_a_million_entry_zip_costs_little_memory(tmp_path):
    archive = million_entry_zip(tmp_path / "million.zip")
    code = (
        "import json, sys\n"
        "from mha_grader.grading.submission import load_submission\n"
        "s = load_submission(sys.argv[1])\n"
        "result = {'refused': s.refused}\n"
    )
    baseline = measured(
        "import json\nfrom mha_grader.grading.submission import load_submission\nresult = {}"
    )
    attack = measured(code, str(archive))
    assert attack["refused"]
    assert attack["peak"] < baseline["peak"] + (64 << 20)  # zipfile itself would take ~400 MB


def test_a_zip_with_two_entries_of_one_name_is_refused_with_a_clear_status(tmp_path):
    archive = tmp_path / "twice.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in STUDENT_FILES:
            zf.writestr(f"exercises/{name}", (ROOT / "solutions" / name).read_text())
        zf.writestr("exercises/multihead.py", "def softmax(x, axis=-1):\n    return x\n")
    s = load_submission(archive)
    assert s.refused and "two entries named 'exercises/multihead.py'" in s.refused
    g = Engine(limits=LIMITS).grade(s)  # refused submissions never start a sandbox
    assert g.status == "refused" and g.total == 0
    assert all("two entries named" in r.output for r in g.results)


# --- answers.md -------------------------------------------------------------------------------

STALLS = {
    "a 1 MB line of spaces": "## Q1\n" + " " * (1 << 20),
    "a 1 MB line of hashes": "## Q1\n" + "#" * (1 << 20),
    "a 1 MB line of brackets": "## Q1\n" + "![" * (1 << 19),
    "emphasis that never closes": "## Q1\n" + "*a_" * (1 << 18),
    "half a million short lines": "## Q1\n" + "a\n" * (1 << 19),
    "HTML comments that never close": "## Q1\n" + "<!--" * (1 << 18),
    "a heading on every line": "## Q1\n" * (1 << 17),
    "a 1 MB answer of prose": "## Q1\n"
    + "Each head has its own slice of the projection. " * 22_000,
}


def test_answers_built_to_stall_the_parser_are_graded_within_a_minute_and_small(tmp_path):
    files = {}
    for i, text in enumerate(STALLS.values()):
        files[i] = tmp_path / f"answers{i}.md"
        files[i].write_text(text)
    code = (
        "import json, sys, time\n"
        "from mha_grader.written import grade_written\n"
        "times = []\n"
        "for path in sys.argv[1:]:\n"
        "    start = time.perf_counter()\n"
        "    results = grade_written(open(path).read())\n"
        "    flagged = any('needs-review' in r.tags for r in results)\n"
        "    times.append([time.perf_counter() - start, flagged])\n"
        "result = {'times': times}\n"
    )
    out = measured(code, *map(str, files.values()))
    for (seconds, flagged), name in zip(out["times"], STALLS, strict=True):
        assert seconds < 60, name
        assert flagged, name  # longer than the grader reads: a teacher is asked to look
    assert out["peak"] < 1 << 30


HIDDEN_ANSWER = (ROOT / "solutions" / "answers.md").read_text()


def hide(answer: str, how: str) -> str:
    if how == "comment":
        return f"See my notebook.\n\n<!--\n{answer}\n-->\n"
    if how == "fence":
        return f"See my notebook.\n\n```\n{answer}\n```\n"
    if how == "indented code":
        return "See my notebook.\n\n" + "".join(f"    {line}\n" for line in answer.splitlines())
    if how == "raw HTML":
        return f'See my notebook.\n\n<div style="display:none">\n\n{answer}\n\n</div>\n'
    if how == "image text":
        return f"See my notebook. ![{' '.join(answer.split())}](notes.png)\n"
    if how == "reference title":
        return f'See my notebook.\n\n[notes]: http://example.org "{" ".join(answer.split())}"\n'
    raise ValueError(how)


@pytest.mark.parametrize(
    "how", ["comment", "fence", "indented code", "raw HTML", "image text", "reference title"]
)
def test_answers_a_reader_does_not_see_earn_nothing_and_are_flagged(how):
    real = read_sections(HIDDEN_ANSWER).answers
    sections = [
        f"## {q.upper() if q != 'challenge' else 'Challenge'}\n\n> The question.\n\n"
        + hide(real[q].text, how)
        for q in ("q1", "q2", "q3", "q4", "q5", "challenge")
    ]
    results = grade_written("\n".join(sections))
    plain = grade_written(
        "\n".join(s.split("See my notebook.")[0] + "See my notebook.\n" for s in sections)
    )
    assert [r.score for r in results] == [r.score for r in plain]
    assert sum(r.score for r in results) <= 0.25 * sum(POINTS[q] for q in WRITTEN_QUESTIONS)
    assert all("needs-review" in r.tags and "does not show" in r.output for r in results)


def test_mha_check_counts_the_visible_words_the_grader_grades(tmp_path):
    (tmp_path / "answers.md").write_text(
        "## Q1\n\n> q\n\nThree visible words <!-- and many hidden ones here -->\n\n"
        "```\nmore hidden code\n```\n\n## Q2\n\n> q\n\n<!-- all of it hidden -->\n"
    )
    q1, q2 = written_results(tmp_path, ["q1", "q2"])
    assert q1.status is Status.ANSWERED and q1.message.startswith("3 words;")
    assert HTML in q1.message and CODE in q1.message
    assert q2.status is Status.NOT_ATTEMPTED and "does not show" in q2.message
    sections = read_sections((tmp_path / "answers.md").read_text()).answers
    assert sections["q1"].text == "Three visible words"
    assert IMAGE not in sections["q1"].hidden and UNRENDERED not in sections["q1"].hidden


# --- ids ----------------------------------------------------------------------------------------


def test_ids_a_spreadsheet_would_run_are_neutralised_in_the_sheet_only(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    names = ["+SUM", "-2+3", "@cmd", "ada"]
    for name in names:
        correct(subs / name)
    result = run_batch_grading(subs, out, show_progress=False, limits=LIMITS)
    assert sorted(r["student"] for r in result.rows) == sorted(names)
    with open(out / "grades.csv", newline="") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]
    assert {"'+SUM", "'-2+3", "'@cmd", "ada"} <= set(cells)
    assert "-2+3" not in cells
    seal = json.loads((out / "students" / "-2+3" / "grade.json").read_text())
    assert seal["row"]["student"] == "-2+3"  # the id itself is unchanged everywhere else
    assert sorted(r["student"] for r in OutputFolder(out).read_grades()) == sorted(names)
    # `one` rewrites the sheet from what it reads back: no row doubles.
    OutputFolder(out).write_grades(OutputFolder(out).read_grades())
    assert len(OutputFolder(out).read_grades()) == len(names)


def test_every_submission_is_graded_when_two_names_give_one_id(tmp_path, capsys):
    subs, out = tmp_path / "subs", tmp_path / "out"
    correct(subs / "ana")
    folder = correct(subs / "ana_zip")
    with zipfile.ZipFile(subs / "ana.zip", "w") as zf:
        for name in STUDENT_FILES:
            zf.writestr(name, (folder / name).read_text())
    shutil.rmtree(folder)
    result = run_batch_grading(subs, out, show_progress=False, limits=LIMITS)
    assert sorted(r["student"] for r in result.rows) == ["ana", "ana-2"]
    assert all(r["status"] == "ok" for r in result.rows)
    assert "ana.zip is graded as ana-2" in capsys.readouterr().err
