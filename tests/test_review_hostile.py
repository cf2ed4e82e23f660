"""Review decisions attacked as a student would (issue 22): a person's score must never stick to
code it did not judge, and the queue must show the code that ran.

Before issue 22 the judged-code hash dropped every line that starts with ``#`` (and every
blank line), even inside a string, and split lines at ``\\n`` only; so a change of behaviour
made inside a triple-quoted string that is run or read, in a file with ``\\r`` line endings
that starts with a comment, or in code a coding declaration hides in comments, kept a person's
6/6 on a softmax that is now wrong. The queue showed the first ``def softmax`` found in the
file (even a method, without its decorators) while a later binding is what ran.
"""

import hashlib
import re
import types
from pathlib import Path

import numpy as np
import pytest
from review_helpers import code_files, make_grade, seal
from rich.console import Console

from mha_check.questions import CODE_QUESTIONS, QUESTION_IDS
from mha_grader.outputs.folder import OutputFolder
from mha_grader.review import apply as reviewed
from mha_grader.review import decisions as reviews
from mha_grader.review import items as review_items
from mha_grader.review import queue

SOFTMAX = (
    "def softmax(x, axis=-1):\n"
    "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
    "    return e / np.sum(e, axis=axis, keepdims=True)\n"
)


UTF7 = "# -*- coding: utf-7 -*-\n"  # Python decodes the file as UTF-7: "+AAo-" is a line break
SCALED = (  # (no "+" in it: UTF-7 would read one as the start of an encoded run)
    "import numpy as np\n\n_K = 1.0\n{hidden}\n\n\n"
    + SOFTMAX.replace("return e / np", "return _K * e / np")
)


def multihead(tail: str) -> str:
    """The reference's multihead.py with ``tail`` after it (a later binding wins)."""
    return code_files()["multihead.py"] + "\n\n" + tail


def code_hash(text: str, question: str = "softmax") -> str:
    return reviews.judged(code_files() | {"multihead.py": text})["hashes"][question]


def run_softmax(text: str) -> np.ndarray:
    """What the file's softmax gives, the file compiled as Python compiles a file (bytes)."""
    module = types.ModuleType("multihead")
    exec(compile(text.encode("utf-8"), "multihead.py", "exec"), module.__dict__)
    return module.softmax(np.array([[1.0, 2.0, 3.0]]))


def earlier_rule_hash(files: dict[str, str], question: str) -> str:
    """The hash the grader kept before issue 22 (blank lines, comment-only lines and trailing
    spaces ignored), as reviews.toml files written then hold it."""

    def program(text: str) -> str:
        kept = re.sub(r"^[ \t]*(?:#.*)?\r?$\n?", "", text.replace("\r\n", "\n"), flags=re.M)
        return "\n".join(line.rstrip() for line in kept.split("\n"))

    h = hashlib.sha256()
    for part in ("code", *(program(files[n]) for n in reviews.code_files(question))):
        h.update(part.encode("utf-8", "replace") + b"\0")
    return h.hexdigest()[:16]


# -- the hash sees what Python reads -------------------------------------------------------------

# (route, the code a person judged, the same code changed by the student afterwards)
HIDDEN = [
    (
        "a '#' line inside a string that is run",
        multihead(
            '_PATCH = """\n' + SOFTMAX.replace("    return", "#    e = e\n    return") + '"""\n'
            'exec(_PATCH.replace("#", ""))\n'
        ),
        multihead(
            '_PATCH = """\n'
            + SOFTMAX.replace("    return", "#    e = e ** 2\n    return")
            + '"""\n'
            'exec(_PATCH.replace("#", ""))\n'
        ),
    ),
    (
        "a blank line inside a string that is read",
        multihead(
            '_ROWS = """\nrow\nrow\n"""\n_SCALE = len(_ROWS.splitlines())\n\n\n'
            + SOFTMAX.replace("x - np.max", "_SCALE / 3 * x - np.max")
        ),
        multihead(
            '_ROWS = """\nrow\n\nrow\n"""\n_SCALE = len(_ROWS.splitlines())\n\n\n'
            + SOFTMAX.replace("x - np.max", "_SCALE / 3 * x - np.max")
        ),
    ),
    (
        "trailing spaces inside a string that is read",
        multihead(
            '_PAD = """\nrow\n"""\n\n\n'
            + SOFTMAX.replace("x - np.max", "len(_PAD) / 5 * x - np.max")
        ),
        multihead(
            '_PAD = """\nrow   \n"""\n\n\n'
            + SOFTMAX.replace("x - np.max", "len(_PAD) / 5 * x - np.max")
        ),
    ),
    (
        "a file with \\r line endings that starts with a comment",
        ("# my solution\n" + multihead(SOFTMAX)).replace("\n", "\r"),
        ("# my solution\n" + multihead(SOFTMAX.replace("axis=axis, k", "axis=0, k"))).replace(
            "\n", "\r"
        ),
    ),
    (
        "code a coding declaration hides in comments",
        UTF7 + SCALED.format(hidden="#+AAo-_K = 1.0"),
        UTF7 + SCALED.format(hidden="#+AAo-_K = 0.5"),
    ),
    (
        "a coding declaration added to a file whose comments hold code",
        SCALED.format(hidden="#+AAo-_K = 0.5"),
        UTF7 + SCALED.format(hidden="#+AAo-_K = 0.5"),
    ),
]


@pytest.mark.parametrize("route, before, after", HIDDEN, ids=[h[0] for h in HIDDEN])
def test_a_change_of_behaviour_hidden_where_the_earlier_rule_looked_away_is_seen(
    route, before, after
):
    a, b = run_softmax(before), run_softmax(after)
    assert not np.allclose(a, b, equal_nan=True), f"{route}: not a change of behaviour"
    assert code_hash(before) != code_hash(after), f"{route}: the decision would stick"


def test_a_file_that_does_not_tokenize_is_judged_on_its_raw_text():
    broken = multihead(SOFTMAX + '_NOTE = """\n# one\n')  # an unterminated string: no tokens
    assert code_hash(broken) != code_hash(broken.replace("# one", "# two"))
    assert code_hash(broken) != code_hash(broken + "\n")


def test_indentation_python_reads_differently_is_a_change():
    """A tab where eight spaces were makes a TabError in Python: never the same hash."""
    nested = "def f(x):\n    if x:\n        y = 1\n        return y\n"
    assert code_hash(multihead(nested)) != code_hash(
        multihead(nested.replace("        return", "\treturn"))
    )


def test_comments_blank_lines_and_line_breaks_inside_brackets_change_nothing():
    base = multihead(SOFTMAX)
    relaid = multihead(
        "# a comment\n\n"
        + SOFTMAX.replace("keepdims=True))", "keepdims=True)  # shifted\n    )").replace(
            "axis=axis, keepdims=True)\n", "axis=axis,\n                        keepdims=True)\n", 1
        )
    )
    assert relaid != base and run_softmax(relaid).tolist() == run_softmax(base).tolist()
    assert code_hash(relaid) == code_hash(base)
    assert code_hash(base.replace("\n", "\r\n")) == code_hash(base)


def test_code_hashes_say_which_rule_made_them():
    hashes = reviews.judged(code_files())["hashes"]
    assert all(hashes[q].startswith(reviews.CODE_RULE) for q in CODE_QUESTIONS)
    assert not any(
        hashes[q].startswith(reviews.CODE_RULE) for q in QUESTION_IDS if q not in CODE_QUESTIONS
    )


# -- a decision follows the code it judged --------------------------------------------------------


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    seal(
        folder,
        make_grade("eve", share={"softmax": 0.0}, flagged={"softmax": "hm"}),
        files=files_of(HIDDEN[0][1]),
    )
    return folder


def files_of(text: str) -> dict[str, str]:
    return code_files() | {"multihead.py": text}


def test_a_decision_on_code_is_reopened_when_a_hidden_line_changes(out):
    reviewed.record(out, "eve", "softmax", 6.0, "right", "tess")
    seal(
        out,
        make_grade("eve", share={"softmax": 0.0}, flagged={"softmax": "hm"}),
        files=files_of(HIDDEN[0][2]),
    )
    settled = reviewed.settle(out, OutputFolder(out).read_grades())
    assert settled.dropped == [("eve", "softmax")]
    assert reviews.load(out).reopened[("eve", "softmax")].previous.score == 6.0


def decided(judged: str, score: float = 5.0) -> reviews.Decision:
    return reviews.Decision(score, judged, "tess", reviews.utc_now(), 0.0)


def sealed_hashes(out: Path, student: str) -> dict[str, str]:
    return OutputFolder(out).read_seal(student).hashes


def test_a_decision_made_under_the_earlier_rule_holds_once_where_that_rule_cannot_misread(out):
    """reviews.toml files written before issue 22: their code decisions hold where the earlier
    rule still calls the code unchanged and it has nothing that rule could misread, and are
    keyed to the new rule then; elsewhere they are reopened. Written answers are untouched."""
    documented = code_files()["multihead.py"].replace('tokens)."""', 'tokens).\n\nNotes.\n"""', 1)
    plain, with_exec = files_of(documented), files_of(HIDDEN[0][1])
    seal(out, make_grade("fay", share={"softmax": 0.5}), files=plain)
    seal(out, make_grade("eve", share={"softmax": 0.0}), files=with_exec)
    store = reviews.load(out)
    for student, files in (("fay", plain), ("eve", with_exec)):
        store.decisions[(student, "softmax")] = decided(earlier_rule_hash(files, "softmax"))
        store.decisions[(student, "q1")] = decided(sealed_hashes(out, student)["q1"], 3.0)
    reviews.save(out, store)
    settled = reviewed.settle(out, OutputFolder(out).read_grades())
    assert settled.carried == [("fay", "softmax")]
    assert settled.dropped == [("eve", "softmax")]  # an exec'd multi-line string: reopened
    after = reviews.load(out)
    assert after.decisions[("fay", "softmax")].judged == sealed_hashes(out, "fay")["softmax"]
    assert after.decisions[("fay", "softmax")].judged.startswith(reviews.CODE_RULE)
    assert {("fay", "q1"), ("eve", "q1")} <= set(after.decisions)
    assert reviewed.settle(out, OutputFolder(out).read_grades()).carried == []  # once
    # Keyed to the new rule, the decision now sees what the earlier rule could not.
    inside = documented.replace("Notes.\n", "Notes.\n# a line inside the docstring\n", 1)
    changed = files_of(inside)
    assert earlier_rule_hash(changed, "softmax") == earlier_rule_hash(plain, "softmax")
    seal(out, make_grade("fay", share={"softmax": 0.5}), files=changed)
    assert reviewed.settle(out, OutputFolder(out).read_grades()).dropped == [("fay", "softmax")]


def test_an_earlier_rule_decision_on_code_that_changed_is_reopened(out):
    plain = code_files()
    seal(out, make_grade("fay", share={"softmax": 0.5}), files=plain)
    store = reviews.load(out)
    old = earlier_rule_hash(
        plain | {"multihead.py": plain["multihead.py"] + "\nX = 1\n"}, "softmax"
    )
    store.decisions[("fay", "softmax")] = decided(old)
    reviews.save(out, store)
    assert reviewed.settle(out, OutputFolder(out).read_grades()).dropped == [("fay", "softmax")]


# -- the queue shows what ran ------------------------------------------------------------------


WRONG = "def softmax(x, axis=-1):\n    return x\n"


def test_a_later_def_is_what_the_queue_shows():
    text = multihead(WRONG)
    assert queue.function_source(files_of(text), "softmax") == WRONG.strip()
    shown = queue.what_ran(files_of(text), "softmax")
    assert len(shown.bindings) == 2 and "bound 2 times" in shown.note and "what ran" in shown.note


def test_an_assignment_after_the_def_is_shown_with_what_it_names():
    text = multihead("def _plain(x, axis=-1):\n    return x\n\n\nsoftmax = _plain\n")
    assert queue.function_source(files_of(text), "softmax") == "softmax = _plain"
    shown = queue.what_ran(files_of(text), "softmax")
    assert shown.ran.source == "softmax = _plain" and shown.ran.kind == "assignment"
    assert [name for name, _ in shown.named] == ["_plain"] and "return x" in shown.named[0][
        1
    ].source
    assert "an assignment" in shown.note
    lam = queue.what_ran(files_of(multihead("softmax = lambda x, axis=-1: x\n")), "softmax")
    assert lam.ran.source == "softmax = lambda x, axis=-1: x"


def test_a_method_of_the_same_name_is_not_taken_for_the_function():
    text = multihead(
        "class _Impl:\n"
        + "".join("    " + line + "\n" for line in SOFTMAX.replace("(x,", "(self, x,").splitlines())
        + "\n\nsoftmax = lambda x, axis=-1: x\n"
    )
    assert queue.function_source(files_of(text), "softmax") == "softmax = lambda x, axis=-1: x"


def test_a_decorated_def_is_shown_with_its_decorator():
    text = multihead(
        "def _identity(f):\n    return lambda x, axis=-1: x\n\n\n@_identity\n" + SOFTMAX
    )
    assert queue.function_source(files_of(text), "softmax").startswith("@_identity\n")
    shown = queue.what_ran(files_of(text), "softmax")
    assert shown.ran.source.startswith("@_identity\ndef softmax") and "decorated" in shown.note


def test_bindings_the_queue_cannot_settle_are_named():
    cond = queue.what_ran(
        files_of(multihead("if np.pi > 3:\n    softmax = lambda x, axis=-1: x\n")), "softmax"
    )
    assert cond.ran.conditional and "only if" in cond.note
    glob = queue.what_ran(
        files_of(multihead("def _later():\n    global softmax\n    softmax = None\n")), "softmax"
    )
    assert "rebinds it when called" in glob.note
    dyn = queue.what_ran(
        files_of(multihead("globals()['soft' + 'max'] = lambda x, axis=-1: x\n")), "softmax"
    )
    assert "at run time" in dyn.note and "globals" in dyn.note
    served = queue.what_ran(
        files_of(
            code_files()["multihead.py"].replace("def softmax(", "def _softmax(")
            + "\n\ndef __getattr__(name):\n    return abs\n"
        ),
        "softmax",
    )
    assert "__getattr__" in served.note and served.bindings[-1].source.startswith("def __getattr__")
    other = code_files() | {
        "crosscheck.py": code_files()["crosscheck.py"]
        + "\nimport multihead\nmultihead.softmax = abs\n"
    }
    assert "crosscheck.py sets .softmax" in queue.what_ran(other, "softmax").note


def test_the_queue_shows_the_code_as_python_reads_it():
    text = UTF7 + "import numpy as np\n\n\n" + SOFTMAX + "#+AAo-softmax = abs\n"
    shown = queue.what_ran(files_of(text), "softmax")
    assert shown.ran.source == "softmax = abs" and "coding declaration" in shown.note


def test_the_queue_screen_shows_every_binding_and_the_note(tmp_path):
    out = tmp_path / "out"
    seal(
        out,
        make_grade("eve", share={"softmax": 0.0}, flagged={"softmax": "hm"}),
        files=files_of(multihead(WRONG)),
    )
    item = next(i for i in review_items.items(out) if i.question == "softmax")
    shown, where = queue.code_of(OutputFolder(out), item)
    assert shown is not None and shown.ran.source == WRONG.strip()
    console = Console(width=110, record=True, force_terminal=False)
    screen_of = queue.Queue(out, review_items.items(out), "tess", console=console)
    screen_of._show(item)
    screen = console.export_text()
    assert "bound 2 times" in screen and "(what ran)" in screen and "return x" in screen


def test_code_sealed_by_an_earlier_grader_is_shown_only_where_its_record_can_tell(tmp_path):
    out = tmp_path / "out"
    for student, text in (("fay", code_files()["multihead.py"]), ("eve", HIDDEN[0][1])):
        seal(
            out,
            make_grade(student, share={"softmax": 0.0}, flagged={"softmax": "hm"}),
            files=files_of(text),
        )
        sealed = OutputFolder(out).read_seal(student)
        sealed.hashes = {  # as an earlier grader sealed it
            q: earlier_rule_hash(files_of(text), q) if q in CODE_QUESTIONS else h
            for q, h in sealed.hashes.items()
            if "@" not in q
        }
        OutputFolder(out).write_seal(sealed)
    items = {i.student: i for i in review_items.items(out) if i.question == "softmax"}
    shown, _ = queue.code_of(OutputFolder(out), items["fay"])
    assert shown is not None and shown.ran.source.startswith("def softmax")
    shown, why = queue.code_of(OutputFolder(out), items["eve"])  # an exec'd string: cannot tell
    assert shown is None and "earlier grader" in why and "--regrade" in why
