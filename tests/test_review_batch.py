"""Review decisions through real grading: a rerun keeps every decision, a changed answer drops
exactly its own, `one`, a merge of shards and the LMS export carry the reviewed scores."""

import json
import shutil
from pathlib import Path

import pytest

from mha_grader import cli
from mha_grader.outputs.export import CANVAS, build_export
from mha_grader.outputs.folder import OutputFolder
from mha_grader.review import decisions as reviews
from mha_grader.review import items as review_items
from mha_grader.runs.batch import run_batch_grading
from mha_grader.runs.merge import merge
from mha_grader.runs.shards import Shard
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=2.0, submission_timeout=20.0)
FILES = ("multihead.py", "crosscheck.py", "answers.md")
FRENCH_Q4 = (
    "Avec plus de têtes, chaque tête travaille dans un sous-espace plus petit et il y a plus de "
    "softmax indépendants, donc plusieurs motifs d'attention peuvent coexister."
)


def correct(folder: Path, answers: str | None = None) -> Path:
    folder.mkdir(parents=True)
    for name in FILES:
        shutil.copy(ROOT / "solutions" / name, folder / name)
    if answers is not None:
        (folder / "answers.md").write_text(answers)
    return folder


def with_answer(text: str, heading: str, answer: str) -> str:
    """answers.md with the section under ``heading`` holding ``answer`` instead."""
    head, rest = text.split(f"\n{heading}\n", 1)
    following = rest.split("\n## ", 1)
    quote = [line for line in following[0].splitlines() if line.startswith(">")]
    body = "\n".join([*quote, "", answer, ""])
    return f"{head}\n{heading}\n\n{body}\n" + (f"## {following[1]}" if len(following) > 1 else "")


def sheet(out: Path) -> dict[str, dict[str, str]]:
    return {r["student"]: r for r in OutputFolder(out).read_grades()}


def review(out: Path, *args: str) -> int:
    return cli.main(["review", str(out), "--reviewer", "tess", *args])


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = tmp_path_factory.mktemp("subs")
    out = tmp_path_factory.mktemp("out")
    shutil.copytree(ROOT / "examples" / "submissions" / "erin", subs / "erin")  # Q1 keywords
    reference = (ROOT / "solutions" / "answers.md").read_text()
    correct(subs / "fleur", with_answer(reference, "## Q4", FRENCH_Q4))  # flagged: French
    correct(subs / "ana")
    run_batch_grading(subs, out, jobs=1, show_progress=False, limits=LIMITS)
    return subs, out


def test_decisions_survive_reruns_until_the_answer_they_judged_changes(graded):
    subs, out = graded
    flagged = {(it.student, it.question) for it in review_items.items(out)}
    assert {("erin", "q1"), ("fleur", "q4")} <= flagged
    assert (
        review(out, "--set", "erin", "q1", "3", "--note", "A list, but the ideas are right.") == 0
    )
    assert review(out, "--set", "fleur", "q4", "4", "--note", "Très bien.") == 0
    assert review(out, "--set", "erin", "q2", "1") == 0  # a regrade request: never flagged
    assert review(out, "--set", "ana", "softmax", "5") == 0
    decided = sheet(out)
    assert (decided["erin"]["q1"], decided["erin"]["q2"]) == ("3", "1")
    assert decided["fleur"]["q4"] == "4" and decided["ana"]["softmax"] == "5"
    stored = (out / "reviews.toml").read_text()

    # A rerun with nothing changed grades nobody and keeps every decision, in every report.
    again = run_batch_grading(subs, out, jobs=1, show_progress=False, limits=LIMITS)
    assert again.graded == 0
    assert sheet(out) == decided
    assert (out / "reviews.toml").read_text() == stored
    assert "Très bien." in (out / "students" / "fleur" / "feedback.md").read_text()

    # erin changes her Q1 answer, nothing else: exactly that decision is dropped.
    answers = subs / "erin" / "answers.md"
    answers.write_text(
        with_answer(answers.read_text(), "## Q1", "Every head has its own Wq, Wk and Wv.")
    )
    changed = run_batch_grading(subs, out, jobs=1, show_progress=False, limits=LIMITS)
    assert changed.graded == 1
    store = reviews.load(out)
    assert set(store.decisions) == {("erin", "q2"), ("fleur", "q4"), ("ana", "softmax")}
    assert set(store.reopened) == {("erin", "q1")}
    erin = sheet(out)["erin"]
    assert erin["q2"] == "1" and erin["q1"] != "3" and erin["needs_review"] == "true"
    assert sheet(out)["fleur"] == decided["fleur"] and sheet(out)["ana"] == decided["ana"]
    tests = json.loads((out / "students" / "erin" / "results.json").read_text())["tests"]
    (q1,) = [t for t in tests if t["name"].startswith("q1")]
    assert "needs-review" in q1["tags"] and "It has changed since" in q1["output"]
    item = next(it for it in review_items.items(out) if it.key == "erin/q1")
    assert item.kind == "changed" and item.previous.score == 3
    summary = (out / "summary.md").read_text()
    assert "Reviews: 1 open (1 of them again, since the answer changed), 3 decided" in summary

    # Grading everyone again with the same answers keeps the decisions that still hold.
    regraded = run_batch_grading(
        subs, out, jobs=1, regrade=True, show_progress=False, limits=LIMITS
    )
    assert regraded.graded == 3
    assert sheet(out)["ana"]["softmax"] == "5" and sheet(out)["fleur"]["q4"] == "4"


def test_the_lms_export_and_one_carry_the_reviewed_scores(graded, tmp_path):
    subs, out = graded
    review(out, "--set", "ana", "q3", "1")
    rows = OutputFolder(out).read_grades()
    roster = ["Student,ID,SIS User ID,SIS Login ID,Section"]
    roster += [f"{s} S,{i},{i},{s},A" for i, s in enumerate(sorted(sheet(out)), start=1)]
    (tmp_path / "roster.csv").write_text("\n".join(roster) + "\n")
    from mha_grader.outputs.export import read_roster

    header, records = read_roster(tmp_path / "roster.csv")
    exported = build_export(rows, header, records, CANVAS)
    cells = {line.split(",")[3]: line.split(",")[-1] for line in exported.text.splitlines()[2:]}
    assert cells["ana"] == sheet(out)["ana"]["total"]
    assert float(cells["ana"]) == 82 - 1 - 3  # softmax 5 of 6, q3 1 of 4

    # `one` grades ana again into the same folder: the decisions on her still hold.
    assert cli.main(["one", str(subs / "ana"), "-o", str(out)]) == 0
    assert sheet(out)["ana"]["softmax"] == "5" and sheet(out)["ana"]["q3"] == "1"


def test_a_merge_of_shards_keeps_the_decisions_made_on_the_merged_class(tmp_path):
    subs = tmp_path / "subs"
    for sid in ("ana", "ben", "cy"):
        correct(subs / sid)
    parts = [tmp_path / "out-1", tmp_path / "out-2"]
    for i, part in enumerate(parts, start=1):
        run_batch_grading(subs, part, jobs=1, show_progress=False, limits=LIMITS, shard=Shard(i, 2))
    out = tmp_path / "out"
    merge(parts, out)
    for sid in ("ana", "ben", "cy"):
        assert review(out, "--set", sid, "q5", "2") == 0
    merge(parts, out)  # the shards' reports are copied again: the decisions still hold
    assert {r["q5"] for r in sheet(out).values()} == {"2"}
    assert "Graded by a person: 2 / 4" in (out / "students/ben/feedback.md").read_text()
