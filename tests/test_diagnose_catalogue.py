"""The catalogue covers docs/contract.md §6, and its messages teach without answer code."""

import re

import pytest

from mha_check.questions import CODE_QUESTIONS
from mha_grader.diagnose import CATALOGUE, CONTRACT_IDS
from mha_grader.diagnose.catalogue import ELSEWHERE
from mha_grader.diagnose.result import catalogue_text
from mha_grader.paths import ROOT

CONTRACT_SECTION_6 = {
    "softmax-wrong-axis",
    "softmax-unstable",
    "softmax-no-keepdims",
    "softmax-global",
    "split-no-transpose",
    "split-interleaved",
    "split-token-axis",
    "merge-no-transpose",
    "merge-reversed-heads",
    "scale-missing",
    "scale-not-sqrt",
    "scale-d-model",
    "attention-transpose-v",
    "attention-3d-transpose",
    "mha-no-output-projection",
    "mha-heads-not-split",
    "adapter-no-transpose",
    "adapter-qkv-order",
    "adapter-averaged-weights",
    "adapter-batch-first",
}


def test_every_contract_id_is_catalogued_under_its_exact_name():
    assert set(CONTRACT_IDS) == CONTRACT_SECTION_6
    assert CONTRACT_SECTION_6 <= set(CATALOGUE)


@pytest.mark.parametrize("mid", sorted(CATALOGUE))
def test_each_mistake_lives_in_a_code_question(mid):
    assert CATALOGUE[mid].where in CODE_QUESTIONS


@pytest.mark.parametrize("mid", sorted(CATALOGUE))
def test_each_message_says_what_why_and_how_without_answer_code(mid):
    m = CATALOGUE[mid]
    assert m.did.startswith("Your ") and len(m.why) > 40 and m.nudge
    assert "Hint:" in m.message
    code = re.compile(r"np\.|\.transpose\(|\.reshape\(|swapaxes|return |def ")
    assert not code.search(m.message), m.message


def test_readme_table_lists_every_misconception_with_its_message():
    """The misconception table lives in the instructors' guide (docs/instructors.md)."""
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    assert "<!-- section: misconceptions -->" in guide
    section = guide.split("<!-- section: misconceptions -->", 1)[1].split("<!-- section:", 1)[0]
    for mid, m in CATALOGUE.items():
        assert f"`{mid}`" in section
        assert m.did.replace("|", "\\|") in section


@pytest.mark.parametrize("key", sorted(ELSEWHERE), ids=lambda k: f"{k[0]}-in-{k[1]}")
def test_a_mistake_made_in_another_function_is_told_in_that_functions_words(key):
    """adapter-no-detach made in weights_from_torch (.numpy() on the parameters) keeps its id,
    and is told as weights_from_torch's mistake, not cross_check's."""
    mid, where = key
    m, home = ELSEWHERE[key], CATALOGUE[mid]
    assert (m.id, m.where) == (mid, where) and where in CODE_QUESTIONS and where != home.where
    assert m.did.startswith(f"Your {where} ") and len(m.why) > 40 and m.nudge
    assert f"Your {home.where}" not in m.message
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    assert m.did.replace("|", "\\|") in guide
    assert catalogue_text((mid,), where) == m.message
    assert catalogue_text((mid,), home.where) == catalogue_text((mid,)) == home.message
