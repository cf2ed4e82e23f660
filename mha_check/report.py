"""Print the check: one line per question id, in contract order, then a summary line."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from .questions import CODE_QUESTIONS
from .results import QuestionResult, Status
from .text import strip_controls

STYLE = {
    Status.PASSED: "green",
    Status.ANSWERED: "green",
    Status.FAILED: "bold red",
    Status.NOT_ATTEMPTED: "yellow",
    Status.UNAVAILABLE: "bold red",
    Status.WAITING: "yellow",
}
WIDTH = 22  # the longest id, multi_head_attention, plus room


def make_console() -> Console:
    # In a terminal, wrap messages under their question; elsewhere (logs, pipes) keep one line
    # per message so that it can be searched.
    tty = sys.stdout.isatty()
    return Console(highlight=False, soft_wrap=not tty, emoji=False)


def _text(text: str, style: str = "") -> Text:
    """Text for the console; what the student's code wrote may hold terminal escapes, which
    are removed first (rich itself drops some control bytes, which would cut a sequence)."""
    return Text(strip_controls(text), style=style)


def _indented(console: Console, text: Text, indent: int) -> None:
    if console.soft_wrap:  # no wrapping: one long line, searchable in a log
        console.print(Text(" " * indent) + text)
    else:
        console.print(Padding(text, (0, 0, 0, indent)))


def _status_text(r: QuestionResult) -> Text:
    words = r.status.value
    if r.status is Status.PASSED and r.total:
        words += f" ({r.total} checks)"
    elif r.status is Status.FAILED and r.total:
        words += f" ({r.total - r.passed} of {r.total} checks)"
    elif r.status is Status.WAITING and r.waiting_on:
        words += f" on {', '.join(r.waiting_on)}"
    elif r.status is Status.ANSWERED and r.message:
        words += f" ({r.message})"
    return Text(words, style=STYLE[r.status])


def print_header(console: Console, folder: Path, tests: Path | None) -> None:
    console.print(Text(f"mha-check: your files in {folder}", style="bold"))
    if tests is not None:
        console.print(Text(f"public tests from {tests}", style="dim"))


def print_problems(console: Console, problems: list[str]) -> None:
    """File-level problems (missing, syntax error, failed import), before the question lines."""
    for p in problems:
        first, *rest = p.splitlines()
        _indented(console, _text(first, style="red"), 2)
        for line in rest:  # e.g. what a file printed while loading
            _indented(console, _text(line), 4)


def print_results(console: Console, results: list[QuestionResult], show_output: bool) -> None:
    console.print()
    for r in results:
        line = Text("  ") + Text(f"{r.qid:<{WIDTH}}") + _status_text(r)
        console.print(line)
        if r.message and r.status is not Status.ANSWERED:
            _indented(console, _text(r.message), 6)
        if show_output and r.output.strip():
            _indented(console, Text("your code printed:", style="dim"), 6)
            for line in strip_controls(r.output).rstrip().splitlines():
                _indented(console, _text(line), 8)


def summary_line(results: list[QuestionResult], everything: bool = True) -> str:
    """The last line: how many of the questions checked are done, saying only what was checked
    (``everything``: every question was selected, not only some with -q)."""
    done = sum(r.done for r in results)
    if done < len(results):
        failing = sum(r.status in (Status.FAILED, Status.UNAVAILABLE) for r in results)
        text = f"{done} of {len(results)} done, {len(results) - done} to go"
        if failing:
            text += f" ({failing} failing: start with the first one above)"
        return text + "."
    if everything:
        return f"All {done} done: every public test passes and every written answer is in."
    code = [r.qid for r in results if r.qid in CODE_QUESTIONS]
    written = [r.qid for r in results if r.qid not in CODE_QUESTIONS]
    said = []
    if len(code) == 1:
        said.append(f"{code[0]} passes its public tests")
    elif code:
        said.append(f"these {len(code)} questions pass their public tests")
    if len(written) == 1:
        said.append(f"the answer to {written[0]} is in")
    elif written:
        said.append(f"these {len(written)} written answers are in")
    return f"All {done} done: {' and '.join(said)} (only the questions asked for were checked)."


def print_summary(console: Console, results: list[QuestionResult], everything: bool = True) -> None:
    console.print()
    all_done = all(r.done for r in results)
    console.print(
        Text(summary_line(results, everything), style="bold green" if all_done else "bold")
    )
