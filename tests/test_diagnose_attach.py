"""How a diagnosis reaches the results, and when diagnosis stays out of the way."""

import time

import numpy as np
import pytest

from mha_grader import errors
from mha_grader.diagnose import DiagnosisSession, diagnose, explain_failures
from mha_grader.diagnose import mutants as mut
from mha_grader.outcomes import TestResult as Result
from tests.mutants.build import reference_env


def _results():
    return [
        Result("split_heads: case a", "split_heads", 1.0, 1.0, "passed"),
        Result("split_heads: case b", "split_heads", 0.0, 1.0, "wrong values"),
    ]


def test_only_failing_cases_get_the_tag_and_the_diagnosis():
    env = reference_env(split_heads=mut.SPLIT["split-no-transpose"][0])
    passed, failed = explain_failures("split_heads", _results(), DiagnosisSession(env))
    assert passed.tags == [] and passed.output == "passed"
    assert failed.tags == ["misconception:split-no-transpose"]
    assert failed.output.startswith("wrong values\nDiagnosis: Your split_heads")


def test_results_that_all_pass_are_left_alone_without_calling_the_student():
    def boom(*args):
        raise AssertionError("must not be called")

    results = [Result("softmax: a", "softmax", 1.0, 1.0, "passed")]
    assert explain_failures("softmax", results, DiagnosisSession({"softmax": boom})) == results


def test_a_failure_inside_the_diagnosis_leaves_the_results_unchanged(monkeypatch):
    def broken(self, qid):
        raise RuntimeError("a bug in the diagnosis")

    monkeypatch.setattr(DiagnosisSession, "diagnose", broken)
    results = explain_failures("split_heads", _results(), DiagnosisSession(reference_env()))
    assert results[1].output == "wrong values" and results[1].tags == []


def test_a_result_that_is_not_an_array_is_described_by_its_type():
    d = diagnose("split_heads", reference_env(split_heads=lambda *a: "heads"))
    assert d.misconception is None and "returned a string, not a numeric array" in d.message


def test_a_function_that_timed_out_is_not_called_again_and_gets_no_diagnosis():
    calls = []

    def hangs(*args, **kwargs):
        calls.append(1)
        raise errors.CallTimeout("ran out of time")

    env = {**reference_env(), "softmax": hangs}
    assert diagnose("attention", {**env, "attention": hangs}) is None
    assert len(calls) == 1


def test_diagnosis_stops_once_its_time_budget_is_spent():
    slow_split = mut.SPLIT["split-no-transpose"][0]

    def slow(*args, **kwargs):
        time.sleep(0.02)
        return slow_split(*args, **kwargs)

    env = reference_env(split_heads=slow)
    # the probes of one function go in one exchange; the budget is checked before each
    session = DiagnosisSession(env, budget=0.01)
    assert session.diagnose("split_heads").misconception == "split-no-transpose"
    assert session.spent > 0.01
    assert session.diagnose("multi_head_attention") is None  # it needs more calls of split
    assert session.gave_up
    full = DiagnosisSession(env).diagnose("multi_head_attention")
    assert full.misconception == "split-no-transpose" and full.blame == "split_heads"


JUNK = [
    None,
    "text",
    {"a": [1, 2]},
    {1: [1], 2: [2]},
    [[1, "x"]],
    (1, 2, 3),
    np.zeros((0,)),
    np.full((3, 3), np.nan),
    np.ones((2, 2), dtype=complex),
    [(0, 1), (2,)],
]


@pytest.mark.parametrize("junk", JUNK, ids=lambda j: type(j).__name__)
def test_diagnose_never_raises_whatever_the_student_returns(junk):
    from mha_check.questions import CODE_QUESTIONS

    env = reference_env(**{q: (lambda *a, _j=junk, **k: _j) for q in CODE_QUESTIONS})
    for q in CODE_QUESTIONS:
        d = diagnose(q, env)
        assert d is None or (d.misconception is None and d.message)


def test_a_function_not_written_yet_is_not_diagnosed_so_no_worker_is_started_for_it():
    """Its cases already say it is not attempted; the diagnosis would start a worker of its
    own only to find that out. A case that failed otherwise beside them is still diagnosed."""

    class Refuses:
        def __init__(self):
            self.asked = []

        def diagnose(self, qid):
            self.asked.append(qid)
            return None

    not_yet = [
        Result("softmax: a", "softmax", 0.0, 1.0, "not attempted", not_attempted=True),
        Result("softmax: b", "softmax", 0.0, 1.0, "not attempted", not_attempted=True),
    ]
    session = Refuses()
    assert explain_failures("softmax", not_yet, session) == not_yet
    assert session.asked == []
    wrong = Result("softmax: c", "softmax", 0.0, 1.0, "wrong values")
    explain_failures("softmax", [*not_yet, wrong], session)
    assert session.asked == ["softmax"]
