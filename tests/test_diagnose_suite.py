"""The mutation suite through direct.proxy: right tag, right blame, and only where the bug is."""

from collections import Counter

import pytest

from mha_check.questions import CODE_QUESTIONS
from mha_grader.diagnose import CATALOGUE, diagnose_all
from tests.mutants.build import SUBMISSIONS, load_env

# Mistakes a submission of one buggy function cannot show (the suite replaces one function of
# the reference), each with where it is tested instead.
TWO_FUNCTIONS = {
    "report-not-own-pipeline": "shows only beside a wrong multi_head_attention; tested in "
    "tests/test_diagnose_classes.py and tests/test_carry_forward.py (set M)",
}


def test_every_catalogued_mistake_has_at_least_two_buggy_submissions():
    counts = Counter(i for s in SUBMISSIONS for i in s.ids)
    short = {mid: counts[mid] for mid in CATALOGUE if counts[mid] < 2}
    assert {mid: n for mid, n in short.items() if mid not in TWO_FUNCTIONS} == {}


def test_the_suite_has_correct_alternatives_and_mistakes_outside_the_catalogue():
    assert sum(1 for s in SUBMISSIONS if s.blame is None) >= 4
    assert sum(1 for s in SUBMISSIONS if s.blame and not s.ids) >= 4


@pytest.mark.parametrize("sub", SUBMISSIONS, ids=lambda s: s.name)
def test_submission_is_diagnosed_only_where_the_bug_is_and_named_right(sub):
    found = diagnose_all(CODE_QUESTIONS, load_env(sub))
    diagnosed = {q for q, d in found.items() if d is not None}
    assert diagnosed == set(sub.affects)
    for q in sub.affects:
        d = found[q]
        assert d.misconceptions == sub.ids, f"{q}: {d.message}"
        assert d.blame == sub.blame, f"{q}: {d.message}"
        assert d.message and "Traceback" not in d.message
        if q != sub.blame:
            assert f"your {sub.blame}" in d.message
