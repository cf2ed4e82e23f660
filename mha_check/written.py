"""Written answers: answered, not attempted yet, or section missing (never graded here)."""

from __future__ import annotations

from pathlib import Path

from .answers import MAX_CHARS, count_words, read_sections
from .results import QuestionResult, Status


def _heading(qid: str) -> str:
    return "## Challenge" if qid == "challenge" else f"## {qid.upper()}"


def written_results(folder: Path, qids: list[str]) -> list[QuestionResult]:
    """One result per written question id in `qids`, read from `folder`/answers.md."""
    path = folder / "answers.md"
    if not path.is_file():
        problem = f"answers.md is missing: there is no answers.md in {folder}."
        return [QuestionResult(q, Status.UNAVAILABLE, problem) for q in qids]
    try:
        sections = read_sections(path.read_bytes())
    except OSError as e:
        problem = f"answers.md could not be read ({e.strerror or e})."
        return [QuestionResult(q, Status.UNAVAILABLE, problem) for q in qids]
    results = []
    for q in qids:
        answer = sections.answers[q]
        text = answer.text
        if text is None:
            results.append(
                QuestionResult(
                    q,
                    Status.FAILED,
                    f"answers.md has no section for {q}: put its heading `{_heading(q)}` back "
                    "above your answer, so that the grader can find it.",
                )
            )
        elif not text.strip():
            hidden = (
                f"your text there does not show when the file is displayed "
                f"({', '.join(answer.hidden)}), so it is not graded: write it as plain text"
                if answer.hidden
                else ""
            )
            results.append(QuestionResult(q, Status.NOT_ATTEMPTED, hidden))
        else:
            message = f"{count_words(text)} words; graded later, not by mha-check"
            results.append(QuestionResult(q, Status.ANSWERED, message + _unread(answer, sections)))
    return results


def _unread(answer, sections) -> str:
    """What in a section is not graded, said where the student sees the word count."""
    notes = []
    if answer.hidden:
        notes.append(
            f"not counted, since it does not show when the file is displayed: "
            f"{', '.join(answer.hidden)}"
        )
    if sections.truncated:
        notes.append(f"the grader reads only the first {MAX_CHARS:,} characters of answers.md")
    return "".join(f"; {n}" for n in notes)
