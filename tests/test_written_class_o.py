"""Issue 21, set O seen: its misses handled as classes, in words of their own, not the labelled
set's: the student's disbelief as a whole sentence ("I'm not convinced.", "I have my doubts.")
or with a degree ("I'm not fully convinced; ...") disowns what they reported before it."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_REPORTED_Q2 = (
    "Our tutor told us the two counts come out identical, 256 and 256, because Wq, Wk, Wv and Wo "
    "stay d_model x d_model for every head count."
)


@pytest.mark.parametrize(
    "doubt",
    [
        "I'm not convinced.",
        "Not persuaded.",
        "I'm not entirely convinced.",
        "I have my doubts.",
        "I'm not fully convinced; the heads could add weights somewhere.",
    ],
)
def test_disbelief_after_a_reported_view_earns_it_nothing(doubt):
    share, _, _ = _graded("q2", f"{_REPORTED_Q2} {doubt}")
    assert share <= 0.25
