"""Question ids in contract order, and which student file each code question lives in.

The one declaration of these ids: mha-check ships to students without the grader, and the
grader imports them from here; ``mha_grader.points`` adds the points.
"""

from __future__ import annotations

CODE_QUESTIONS: dict[str, str] = {  # question id -> student file that defines it
    "softmax": "multihead.py",
    "split_heads": "multihead.py",
    "merge_heads": "multihead.py",
    "attention": "multihead.py",
    "multi_head_attention": "multihead.py",
    "distinct_head_pairs": "multihead.py",
    "parameter_counts": "multihead.py",
    "weights_from_torch": "crosscheck.py",
    "cross_check": "crosscheck.py",
}
WRITTEN_QUESTIONS: tuple[str, ...] = ("q1", "q2", "q3", "q4", "q5", "challenge")
QUESTION_IDS: tuple[str, ...] = (*CODE_QUESTIONS, *WRITTEN_QUESTIONS)
STUDENT_FILES: tuple[str, ...] = ("multihead.py", "crosscheck.py", "answers.md")

# The NumPy questions: their functions may use NumPy and the standard library only
# (parameter_counts may use torch, as its stub says; crosscheck.py is about torch).
NUMPY_QUESTIONS: frozenset[str] = frozenset(
    q for q, file in CODE_QUESTIONS.items() if file == "multihead.py" and q != "parameter_counts"
)

# The composite questions and the contract functions each one calls (its callees): one bug is
# charged once (an error carried forward in grading), and mha-check says a composite question is
# waiting on a callee that fails its own checks.
CALLEES: dict[str, tuple[str, ...]] = {
    "attention": ("softmax",),
    "multi_head_attention": ("split_heads", "attention", "merge_heads"),
    "cross_check": ("weights_from_torch", "multi_head_attention"),
}

# The signature each code question's function must have, for "no function ..." messages.
SIGNATURES: dict[str, str] = {
    "softmax": "softmax(x, axis=-1)",
    "split_heads": "split_heads(M, num_heads, d_head)",
    "merge_heads": "merge_heads(H)",
    "attention": "attention(Q, K, V)",
    "multi_head_attention": "multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads)",
    "distinct_head_pairs": "distinct_head_pairs(weights, atol=1e-6)",
    "parameter_counts": "parameter_counts(d_model, head_counts, bias=False)",
    "weights_from_torch": "weights_from_torch(mha)",
    "cross_check": "cross_check(mha, X)",
}
# Questions whose checks (or whose usual solutions) import torch: torch is imported before the
# student's code runs, so its 1-2 s import never counts against a check's time limit.
NEEDS_TORCH: frozenset[str] = frozenset({"parameter_counts", "weights_from_torch", "cross_check"})

# What each student file may import besides the standard library: grading has nothing else, and
# mha-check applies the same rule, so the student hears it before handing in (torch in
# multihead.py is for parameter_counts alone: grading flags it anywhere else).
IMPORTS: dict[str, tuple[str, ...]] = {
    "multihead.py": ("numpy", "torch"),
    "crosscheck.py": ("numpy", "torch", "multihead"),
}
IMPORT_REFUSED = (
    "{file} imports {name}, which this exercise does not allow: {file} may import the standard "
    "library, {allowed} only, and grading has nothing else (a file of your own beside the "
    "three is not handed in either)"
)


# A multihead.py that does not even load where grading runs the NumPy questions (torch withheld
# there: importable, its names refuse to be used), in grading's words and mha-check's.
NUMPY_BROKEN = (
    "{label} could not be imported where the NumPy questions run (NumPy and the standard library "
    "only: torch is not there, its names refuse to be used): {why}"
)


def import_refused(file: str, name: str, table: dict | None = None) -> str:
    """Why ``file`` may not import the module ``name`` (a sentence for the student)."""
    allowed = list((table or IMPORTS)[file])
    listed = ", ".join(allowed[:-1]) + f" and {allowed[-1]}" if len(allowed) > 1 else allowed[0]
    return IMPORT_REFUSED.format(file=file, name=name, allowed=listed)
