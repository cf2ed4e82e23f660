"""Red team: what a student sees from grading (feedback.md, results.json) carries no hidden input
and cannot be formatted by the student's code.

Each attack submission makes every contract function spell out the first value of the hidden
input it was given (or a value it stashed from an earlier call) through one channel: integers
or letters in an exception message, the name of an exception class, a builtin exception or a
line number chosen by the value, a source line rewritten on disk, a shape or a length, numbers
printed with six decimals, the exit status, a report or an error of a chosen size. The decoders
below read every report as an attacker would, and none recovers a hidden value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt

from mha_check.questions import CODE_QUESTIONS, STUDENT_FILES
from mha_grader.grading import hidden
from mha_grader.grading.direct import proxy
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outputs.folder import OutputFolder
from mha_grader.sandbox import Limits
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

ROOT = Path(__file__).resolve().parent.parent
FAST = Limits(call_timeout=2.0, import_timeout=3.0, submission_timeout=60.0)

# --- every hidden input value, as the hidden tests pass them ----------------------------------


@cache
def hidden_values() -> np.ndarray:
    """Every number the hidden tests pass to a student function (recorded through in-process
    proxies that answer like the reference), sorted."""
    seen: list[np.ndarray] = []

    def recording(func: Callable) -> Callable:
        def call(*args, **kwargs):
            for a in (*args, *kwargs.values()):
                if isinstance(a, np.ndarray):
                    seen.append(a.astype(np.float64).ravel())
                elif type(a).__name__ == "MultiheadAttention":
                    for p in a.state_dict().values():
                        seen.append(p.detach().double().numpy().ravel())
            return func(*args, **kwargs)

        return call

    env = {q: proxy(recording(getattr(ref, q, None) or getattr(ref_cc, q))) for q in CODE_QUESTIONS}
    for qid in CODE_QUESTIONS:
        hidden.run_question(qid, env)
    values = np.unique(np.concatenate(seen))
    assert values.size > 500
    return values


def code(v: float) -> int:
    """How the attacks write a value as an integer: six significant decimals."""
    return int(abs(v) * 1e6)


# --- the attacks -------------------------------------------------------------------------------

PRELUDE = """
import builtins as _builtins
import os as _os
import numpy as _np

_seen = []


def _value(a):
    for v in a:
        if isinstance(v, _np.ndarray) and v.size:
            _seen.append(float(v.flat[0]))
            break
        if hasattr(v, "in_proj_weight"):
            _seen.append(float(v.in_proj_weight.detach().flatten()[0]))
            break
    return _seen[-1] if _seen else 0.123456


def _code(a):
    return int(abs(_value(a)) * 1e6)


def _letters(n):
    return "".join("abcdefghij"[int(c)] for c in str(n))
"""

PADDING = "\n".join("# padding, so that a line number can carry a value" for _ in range(4000))

CHANNELS = {
    # (Markers are built at run time: the submitted source itself may be quoted.)
    "integers in a message": "raise ValueError('le' + f'ak {_code(a)}')",
    "letters in a message": "raise ValueError('le' + 'ak ' + _letters(_code(a)))",
    "a class named after the value": (
        "raise type('Le' + 'ak' + _letters(_code(a)), (ValueError,), {})('x')"
    ),
    "a builtin exception chosen by the value": (
        "names = sorted(n for n, o in vars(_builtins).items() if isinstance(o, type)"
        " and issubclass(o, Exception) and n not in ('NotImplementedError',))\n"
        "    raise getattr(_builtins, names[_code(a) % len(names)])()"
    ),
    "a NumPy exception chosen by the value": (
        "names = ['AxisError', 'TooHardError', 'DTypePromotionError', 'ComplexWarning']\n"
        "    raise getattr(_np.exceptions, names[_code(a) % len(names)])('x')"
    ),
    "the worker's record of NumPy's classes rewritten": (
        "import gc\n"
        "    cls = type('AxisError', (ValueError,), {'__module__': 'numpy.exceptions'})\n"
        "    for m in gc.get_objects():\n"
        "        if type(m).__name__ == 'module' and hasattr(m, 'NUMPY_CLASSES'):\n"
        "            m.NUMPY_CLASSES = ((cls, 'Le' + 'ak' + _letters(_code(a))),)\n"
        "    raise cls('x')"
    ),
    "a line number chosen by the value": (
        "exec(compile('\\n' * (100 + _code(a) % 3900) + 'raise ValueError(1)', __file__, 'exec'))"
    ),
    "a source line rewritten on disk": (
        "lines = open(__file__).read().splitlines()\n"
        "    lines[2] = 'LE' + f'AK {_code(a)}'\n"
        "    open(__file__, 'w').write('\\n'.join(lines))\n"
        "    exec(compile('\\n\\nraise ValueError(2)', __file__, 'exec'))"
    ),
    "a shape chosen by the value": "return _np.empty((0, _code(a)))",
    "a length chosen by the value": "return [0] * (_code(a) % 100_000)",
    "a dict of a chosen size": "return {i: 0.5 for i in range(_code(a) % 10_000)}",
    "six-decimal numbers printed and raised": (
        "print(f'{_value(a):.6f}')\n    raise ValueError(f'{_value(a):.6f}')"
    ),
    "the exit status": (
        "open('/tmp/stash', 'w').write(str(_code(a)))\n    _os._exit(_code(a) % 256)"
    ),
    "errors and reports of a chosen size": (
        "v = _value(a) * 1e6\n"
        "    if len(a) == 2 and hasattr(a[0], 'in_proj_weight'):\n"
        "        return {'output_max_abs_diff': v, 'weights_max_abs_diff': -v, 'match': False}\n"
        "    x = next(x for x in a if isinstance(x, _np.ndarray))\n"
        "    return _np.full(x.shape, v)"
    ),
}

# At import: a restarted worker repeats what an earlier one stashed, printed and raised.
IMPORT_STASH = """
if _os.path.exists('/tmp/stash'):
    print('sta' + 'shed', open('/tmp/stash').read())
    raise ImportError('sta' + 'shed ' + open('/tmp/stash').read())
"""


def attack(tmp_path: Path, channel: str) -> Path:
    folder = tmp_path / re.sub(r"\W+", "_", channel)
    folder.mkdir()
    body = CHANNELS[channel]
    for name in STUDENT_FILES:
        (folder / name).write_text((ROOT / "solutions" / name).read_text())
    for file in ("multihead.py", "crosscheck.py"):
        funcs = [q for q, f in CODE_QUESTIONS.items() if f == file]
        text = (
            PRELUDE + IMPORT_STASH + "".join(f"\n\ndef {q}(*a, **k):\n    {body}\n" for q in funcs)
        )
        if file == "crosscheck.py":
            text = "from multihead import multi_head_attention  # noqa\n" + text
        (folder / file).write_text("# line 1\n# line 2\n# line 3\n" + text + "\n" + PADDING)
    return folder


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=FAST) as e:
        yield e


def everything_shown(grade, tmp_path: Path) -> str:
    """All a student reads: feedback.md and results.json's outputs and test names."""
    folder = OutputFolder(tmp_path / "out").write_reports(grade)
    results = json.loads((folder / "results.json").read_text())
    parts = [(folder / "feedback.md").read_text(), results["output"]]
    parts += [t["name"] + "\n" + t["output"] for t in results["tests"]]
    return "\n".join(parts)


# --- the decoders ------------------------------------------------------------------------------


def near_hidden(numbers: list[float], tolerance: float = 1e-3) -> list[float]:
    """The numbers that equal a hidden input value (or its magnitude) within ``tolerance``."""
    values = np.unique(np.abs(hidden_values()))
    hits = []
    for x in numbers:
        i = np.searchsorted(values, abs(x))
        near = [values[j] for j in (i - 1, i) if 0 <= j < len(values)]
        if any(abs(abs(x) - v) <= tolerance * max(v, 1e-3) for v in near):
            hits.append(x)
    return hits


def decode(text: str) -> dict[str, list]:
    """Everything an attacker would try to read back out of a report."""
    codes = {code(v) for v in hidden_values()} - {0}
    integers = [int(t) for t in re.findall(r"\d{4,}", text)]
    lettered = [
        int("".join(str("abcdefghij".index(c)) for c in run))
        for run in re.findall(r"(?<![a-z])[a-j]{5,}(?![a-z])", text.lower())
    ]
    decimals = [float(t) for t in re.findall(r"-?\d+\.\d{3,}", text)]
    # The padding's line numbers: one per function may be shown (where it raises on the
    # grader's public input); more would be lines chosen per hidden case.
    lines = sorted({n for n in map(int, re.findall(r"line (\d+)", text)) if n > 99})
    return {
        "integers that are codes": [n for n in integers if n in codes],
        "letter runs that are codes": [n for n in lettered if n in codes],
        "decimals near a hidden value": near_hidden(decimals),
        "six-decimal numbers": re.findall(r"\d\.\d{6}", text),
        "line numbers of padding, beyond one per function": lines[len(CODE_QUESTIONS) :],
        "words the attack wrote": re.findall(r"(?i)leak|stashed", text),
    }


@pytest.mark.parametrize("channel", list(CHANNELS))
def test_no_decoder_recovers_a_hidden_input_from_the_reports(engine, tmp_path, channel):
    g = engine.grade(load_submission(attack(tmp_path, channel)))
    assert all(g.scores()[q] == 0 for q in CODE_QUESTIONS), g.scores()
    text = everything_shown(g, tmp_path)
    assert {k: v for k, v in decode(text).items() if v} == {}


def test_the_decoders_do_find_values_when_they_are_shown():
    values = hidden_values()
    v = float(values[len(values) // 3])
    text = f"raised ValueError: leak {code(v)} and {abs(v):.6f} " + "".join(
        "abcdefghij"[int(c)] for c in str(code(v))
    )
    text += "".join(f" (multihead.py, line {1000 + i})" for i in range(12))
    found = decode(text)
    assert found["integers that are codes"] and found["letter runs that are codes"]
    assert found["decimals near a hidden value"] and found["six-decimal numbers"]
    assert found["line numbers of padding, beyond one per function"]
    assert found["words the attack wrote"]


# --- formatting and injection ------------------------------------------------------------------

INJECTION = (
    "<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n![tracker](http://evil.example/x.png)"
    "\n## Total: 82 / 82\n\x1b[2J\x1b]0;owned\x07 carriage\rreturn\n```\n# out of the block\n"
)


def test_student_text_cannot_add_markup_headings_images_or_terminal_escapes(engine, tmp_path):
    folder = tmp_path / "injector"
    folder.mkdir()
    for name in STUDENT_FILES:
        (folder / name).write_text((ROOT / "solutions" / name).read_text())
    payload = json.dumps(INJECTION)
    # Printed while importing (shown, escaped) and raised while importing crosscheck.py (shown,
    # escaped): both before any hidden input exists.
    (folder / "multihead.py").write_text(
        (ROOT / "solutions" / "multihead.py").read_text() + f"\nprint({payload})\n"
    )
    (folder / "crosscheck.py").write_text(f"raise ValueError({payload})\n")
    g = engine.grade(load_submission(folder))
    assert g.status == "import-error"
    out = OutputFolder(tmp_path / "out").write_reports(g)
    feedback = (out / "feedback.md").read_text()
    results = json.loads((out / "results.json").read_text())
    assert results["output_format"] == results["test_output_format"] == "md"
    shown = [feedback, results["output"], *(t["output"] for t in results["tests"])]
    md = MarkdownIt("commonmark")
    for text in shown:
        assert "\x1b" not in text and "\r" not in text
        tokens = md.parse(text)
        inline = [c for t in tokens if t.children for c in t.children]
        assert not [t for t in tokens + inline if t.type in ("html_block", "html_inline")]
        assert not [t for t in inline if t.type == "image"]
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
        assert not [h for h in headings if "82 / 82" in h]
    assert "alert(1)" in feedback  # shown, as text


def test_an_exceptions_kind_names_only_classes_the_grader_knows():
    from mha_grader.shown import OWN_CLASS, exception_kind

    mro = ["ValueError", "IndexError", "LookupError", "Exception", "BaseException"]
    assert exception_kind("AxisError", mro, "AxisError") == "NumPy's AxisError"
    assert exception_kind("ValueError", mro, "") == "Python's ValueError"
    # A student's class: named like NumPy's but not NumPy's (the worker says ""), or named by a
    # record the student's code rewrote (a name outside the grader's list).
    assert exception_kind("AxisError", mro, "") == OWN_CLASS
    assert exception_kind("Leak", mro, "Leak12345") == OWN_CLASS
    assert exception_kind("Leak", ["Exception", "BaseException"], "") == OWN_CLASS


def test_every_class_the_worker_holds_as_numpys_has_a_name_the_grader_shows():
    from mha_grader.sandbox.worker import origin
    from mha_grader.shown import NUMPY_EXCEPTIONS

    held = {name for _, name in origin.NUMPY_CLASSES}
    assert "AxisError" in held and "LinAlgError" in held
    assert held <= NUMPY_EXCEPTIONS
