"""Written answers: answered, not attempted yet, or section missing (never graded here)."""

from __future__ import annotations

from pathlib import Path

from .answers import parse_answers
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
        answers = parse_answers(path.read_bytes())
    except OSError as e:
        problem = f"answers.md could not be read ({e.strerror or e})."
        return [QuestionResult(q, Status.UNAVAILABLE, problem) for q in qids]
    results = []
    for q in qids:
        text = answers.get(q)
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
            results.append(QuestionResult(q, Status.NOT_ATTEMPTED))
        else:
            words = len(text.split())
            results.append(
                QuestionResult(q, Status.ANSWERED, f"{words} words; graded later, not by mha-check")
            )
    return results
