"""The mutation suite graded through the real engine (sandbox, hidden tests, diagnosis), with
errors carried forward (points.toml's policy) and without.

Carried forward, a one-bug submission loses points on the function that holds the bug only:
every other question keeps each case that is right given the student's own (buggy) callee and
says so, and loses only cases where that callee failed outright ("could not be checked"). Not
carried forward, the old behaviour: the bug costs its function and the functions that call it.
Either way the failing cases carry exactly its misconception tags; correct alternatives lose
nothing and mistakes outside the catalogue carry no tag.
"""

from __future__ import annotations

import pytest

from mha_check.questions import CODE_QUESTIONS, WRITTEN_QUESTIONS
from mha_grader.outcomes import Tag
from mha_grader.outputs import reports
from mha_grader.points import POINTS
from tests.mutants.build import SUBMISSIONS
from tests.suite_grades import suite_grades

COULD_NOT = "could not be checked: your "


@pytest.fixture(scope="module")
def carried(tmp_path_factory):
    """Every submission of the suite graded once, errors carried forward (the default)."""
    return suite_grades(tmp_path_factory, True)


@pytest.fixture(scope="module")
def not_carried(tmp_path_factory):
    return suite_grades(tmp_path_factory, False)


def _lost(grade) -> set[str]:
    scores = grade.scores()
    return {q for q in CODE_QUESTIONS if scores[q] < POINTS[q]}


def _tags_are_the_bugs(grade, sub) -> None:
    want = [f"misconception:{i}" for i in sub.ids]
    for r in grade.results:
        tags = [t for t in r.tags if t.startswith("misconception:")]
        assert tags == ([] if r.passed else want), r.name
        if not r.passed and sub.ids:
            assert "Diagnosis: " in r.output
    if sub.ids:
        assert "(known mistake: " in reports.feedback_md(grade)


@pytest.mark.parametrize("sub", SUBMISSIONS, ids=lambda s: s.name)
def test_one_bug_costs_its_own_function_only_and_is_carried_forward_elsewhere(
    carried, not_carried, sub
):
    grade, old = carried[sub.name], not_carried[sub.name]
    assert grade.status == "ok", grade.notes
    if sub.blame is None:
        assert _lost(grade) == set()
        return
    assert sub.blame in _lost(grade)
    for r in grade.results:
        if r.question in (sub.blame, *WRITTEN_QUESTIONS):
            continue
        if not r.passed:  # only where the buggy callee failed outright
            assert r.question in sub.affects and r.output.startswith(COULD_NOT), r.name
    before = {r.name: r for r in old.results}
    for r in grade.results:
        if r.passed and not before[r.name].passed:  # kept by carrying the error forward
            assert any(t.startswith(Tag.CARRIED) for t in r.tags), r.name
            assert "Carried forward: your " in r.output
    if any(Tag.CARRIED in t for r in grade.results for t in r.tags):
        feedback = reports.feedback_md(grade)
        assert "Carried forward: your " in feedback
        assert "passed. Carried" not in feedback  # the mark says "passed" once
    _tags_are_the_bugs(grade, sub)


@pytest.mark.parametrize("sub", SUBMISSIONS, ids=lambda s: s.name)
def test_without_carry_forward_a_bug_costs_its_function_and_its_callers(not_carried, sub):
    grade = not_carried[sub.name]
    assert grade.status == "ok", grade.notes
    lost = _lost(grade)
    assert lost <= set(sub.affects)
    assert sub.blame is None or sub.blame in lost
    assert not any(t.startswith(Tag.CARRIED) for r in grade.results for t in r.tags)
    assert not any(r.output.startswith(COULD_NOT) for r in grade.results)
    _tags_are_the_bugs(grade, sub)


def test_carrying_errors_forward_keeps_points_the_old_rule_charged_again(carried, not_carried):
    """The suite's bugs in softmax, split_heads, merge_heads, attention, multi_head_attention
    and weights_from_torch cost their callers points without the policy, far fewer with it."""

    def others(grades):
        return sum(
            POINTS[q] - g.scores()[q]
            for s in SUBMISSIONS
            if s.blame
            for g in [grades[s.name]]
            for q in CODE_QUESTIONS
            if q != s.blame
        )

    assert others(not_carried) > 100
    assert others(carried) < others(not_carried) / 3
