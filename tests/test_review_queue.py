"""The review queue driven as a person would, through a pseudo-terminal: type scores and notes,
accept with Enter, skip, go back, quit, and resume where it stopped."""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from review_helpers import make_grade, seal, small_class
from rich.console import Console

from mha_grader.outputs.folder import OutputFolder
from mha_grader.review import decisions as reviews
from mha_grader.review import items as review_items
from mha_grader.review.queue import Queue

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]|\r")


def spawn(out: Path) -> pexpect.spawn:
    # The terminal's size is the pseudo-terminal's (110 columns), not an inherited COLUMNS
    # (pytest-xdist's workers set COLUMNS=80).
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env |= {"TERM": "xterm-256color", "MHA_REVIEWER": "tess"}
    env["PYTHONPATH"] = str(ROOT)
    return pexpect.spawn(
        sys.executable,
        ["-m", "mha_grader.cli", "review", str(out)],
        env=env,
        cwd=str(ROOT),
        dimensions=(50, 110),
        encoding="utf-8",
        timeout=60,
    )


def screen(child: pexpect.spawn, prompt: str = "score> ") -> str:
    """Wait for the prompt; what the terminal showed since the last one, without escapes."""
    child.expect_exact(prompt)
    return ANSI.sub("", child.before)


def type_line(child: pexpect.spawn, text: str) -> None:
    child.sendline(text)


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return ANSI.sub("", child.before)


def scores(out: Path) -> dict[tuple[str, str], tuple[float, str, str]]:
    store = reviews.load(out)
    return {k: (d.score, d.note, d.reviewer) for k, d in store.decisions.items()}


@pytest.fixture
def out(tmp_path):
    folder = tmp_path / "out"
    small_class(folder)  # ana softmax (grader error), ben q1 (a quarter), cy q3 (a half)
    return folder


def test_a_person_types_scores_skips_goes_back_quits_and_resumes(out):
    child = spawn(out)
    first = screen(child)
    assert "item 1 of 3 · 3 left" in first
    assert "ana · softmax (code, 6 points)" in first and "the grader itself failed" in first
    assert "def softmax(x" in first and "sources.json" in first  # the code as graded
    type_line(child, "5")
    screen(child, "note for the student (Enter for none)> ")
    type_line(child, "graded by hand: the code is right")

    second = screen(child)
    assert "item 2 of 3 · 2 left" in second and "ben · q1 (written answer, 4 points)" in second
    assert "Each head takes a slice of the shared projections" in second  # the answer
    assert "What the rubric asks" in second and "The grader: 1 / 4" in second
    assert "Saved: ana softmax 5 / 6" in second
    type_line(child, "s")

    third = screen(child)
    assert "item 3 of 3 · 2 left" in third and "cy · q3" in third
    assert "Enter accepts the grader's 2" in third
    type_line(child, "b")  # back to the skipped one
    assert "ben · q1" in screen(child)
    type_line(child, "b")  # and to the decided one: its decision can be changed
    again = screen(child)
    assert "ana · softmax" in again
    assert "Decided: 5 / 6 by tess" in again and "graded by hand: the code is right" in again
    type_line(child, "4")
    screen(child, "note for the student (Enter for none)> ")
    type_line(child, "")
    assert "ben · q1" in screen(child)
    type_line(child, "q")
    end = finish(child)
    assert "1 decided and 1 skipped in this session; 2 items left" in end.replace("\n", " ")

    assert scores(out) == {("ana", "softmax"): (4.0, "", "tess")}
    assert OutputFolder(out).read_grades()[0]["softmax"] == "4"

    # Resume: the item skipped before comes after the one never seen.
    child = spawn(out)
    first = screen(child)
    assert "item 1 of 2 · 2 left" in first and "cy · q3" in first
    type_line(child, "")  # Enter: the grader's score
    second = screen(child)
    assert "item 2 of 2 · 1 left" in second and "ben · q1" in second
    type_line(child, "9")
    assert "from 0 to 4" in screen(child)
    type_line(child, "3/4")
    screen(child, "note for the student (Enter for none)> ")
    type_line(child, "terse, but every idea is there")
    end = finish(child)
    assert "end of the queue" in end and "0 items left" in end

    assert scores(out) == {
        ("ana", "softmax"): (4.0, "", "tess"),
        ("cy", "q3"): (2.0, "", "tess"),
        ("ben", "q1"): (3.0, "terse, but every idea is there", "tess"),
    }
    sheet = {r["student"]: r for r in OutputFolder(out).read_grades()}
    assert sheet["ben"]["q1"] == "3" and sheet["ben"]["needs_review"] == "false"
    assert "Checked by a person" in (out / "students/cy/feedback.md").read_text()
    assert "Reviews: 0 open, 3 decided by a person." in (out / "summary.md").read_text()

    child = spawn(out)
    child.expect_exact("Nothing to review")
    finish(child)


def test_ctrl_d_quits_and_keeps_what_was_decided(out):
    child = spawn(out)
    screen(child)
    type_line(child, "6")
    screen(child, "note for the student (Enter for none)> ")
    type_line(child, "")
    screen(child)
    child.sendeof()
    finish(child)
    assert scores(out) == {("ana", "softmax"): (6.0, "", "tess")}


def test_without_a_terminal_the_queue_says_what_to_use_instead(out):
    proc = subprocess.run(
        [sys.executable, "-m", "mha_grader.cli", "review", str(out)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2
    assert "--list" in proc.stderr and "--set STUDENT QUESTION SCORE" in proc.stderr


def test_student_text_reaches_the_reviewer_as_plain_text_never_markup_or_escapes(tmp_path):
    out = tmp_path / "out"
    answer = "[bold red]fake[/] \x1b]0;pwned\x07 \x1b[2J heads slice Q"
    seal(
        out,
        make_grade("eve", share={"q1": 0.5}, flagged={"q1": "flag [link=x]y[/link]"}),
        {"q1": answer},
    )
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100, record=True)
    queue = Queue(out, review_items.items(out), "tess", console=console)
    queue._show(queue.items[0])
    shown = console.export_text()
    assert "[bold red]fake[/]" in shown and "flag [link=x]y[/link]" in shown
    raw = buffer.getvalue()
    assert "\x1b]0;" not in raw and "\x07" not in raw and "\x1b[2J heads" not in raw
