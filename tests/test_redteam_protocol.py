"""Red team: a worker that breaks the grader's protocol (student code writing to the channel).

Each attack writes its own frame onto the worker's channel socket, from a call or while being
imported: malformed bytes, a reply out of step, fields of the wrong type (a NumPy array where
a number belongs, which once raised in the trusted side), a frame announced far over the limit,
JSON built to amplify (millions of values, deep nesting). Every one is the student's fault: the
submission gets status protocol-error and keeps only what it earned before, the grading
process never fails, the worker's processes are gone when grading returns, the next worker with
that uid works, and the grading process stays small (memory measured in a subprocess).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mha_check.questions import CODE_QUESTIONS, STUDENT_FILES
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits, zygote

ROOT = Path(__file__).resolve().parent.parent
FAST = Limits(call_timeout=3.0, import_timeout=3.0, submission_timeout=30.0)

# Finds the channel (the one socket among the worker's descriptors) and writes a raw frame.
SEND = """
import json as _json
import os as _os
import stat as _stat
import struct as _struct
import time as _time


def _channel():
    for fd in range(3, 256):
        try:
            if _stat.S_ISSOCK(_os.fstat(fd).st_mode):
                return fd
        except OSError:
            pass
    raise RuntimeError("no channel")


def _frame(payload):
    _os.write(_channel(), _struct.pack("<I", len(payload)) + payload)


def _message(tree, blobs=b"", sizes=()):
    header = _json.dumps({"tree": tree, "blobs": list(sizes)}).encode()
    return b"MHA2" + _struct.pack("<I", len(header)) + header + blobs


def _dict(**items):
    return {"t": "dict", "v": [[k, v] for k, v in items.items()]}
"""

# Frames a student's code could forge (each is a Python expression of bytes).
FORGERIES = {
    "not a message at all": 'b"garbage, not a message of this grader"',
    "a reply out of step": "_message(_dict(seq=10**6, ok=True, value=1.0))",
    "an array where the sequence number belongs": (
        '_message(_dict(seq={"t": "nd", "i": 0, "dtype": "<i8", "shape": [2]}, ok=True, '
        "value=1.0), bytes(16), [16])"
    ),
    "an error record of the wrong types": (
        '_message(_dict(seq=2, ok=False, error=_dict(kind={"t": "nd", "i": 0, "dtype": "<i8",'
        ' "shape": [3]}, type=7)), bytes(24), [24])'
    ),
    "a frame announced at 4 GB": '_struct.pack("<I", 2**32 - 1) + b"MHA2"',
    # 48 MB of valid JSON (under the frame limit) that json.loads would turn into 16 million
    # lists, about a gigabyte.
    "a header of millions of empty lists": (
        'b"MHA2" + _struct.pack("<I", 48_000_001) + b"[" + b"[]," * 15_999_999 + b"[]]"'
    ),
    "a header nested a million deep": (
        'b"MHA2" + _struct.pack("<I", 2_000_000) + b"[" * 1_000_000 + b"]" * 1_000_000'
    ),
}


def attack_files(forgery: str, when: str) -> dict[str, str]:
    """The reference solutions, with softmax (a call) or the import of crosscheck.py sending the
    forged frame, then waiting so that the grader reads the forgery first."""
    files = {n: (ROOT / "solutions" / n).read_text() for n in STUDENT_FILES}
    send = f"_frame({FORGERIES[forgery]})\n_time.sleep(2)\n"
    if when == "call":
        files["multihead.py"] += (
            SEND + "\n\ndef softmax(x, axis=-1):\n" + textwrap.indent(send, "    ")
        )
    else:
        files["crosscheck.py"] += "\n" + SEND + "\n" + send
    return files


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def processes_of(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                status = Path(f"/proc/{entry}/status").read_text()
            except OSError:
                continue
            uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
            count += int(uids.split()[1]) == uid
    return count


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=FAST) as e:
        yield e


@pytest.mark.parametrize("when", ["call", "import"])
@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_frame_is_the_students_fault_and_ends_the_session(engine, tmp_path, forgery, when):
    submission = load_submission(write(tmp_path / "mallory", attack_files(forgery, when)))
    g = engine.grade(submission)  # never raises
    assert g.status == "protocol-error" and not g.needs_review
    assert any("grader's channel" in note for note in g.notes)
    scores = g.scores()
    if when == "import":  # crosscheck.py never loaded: its questions, and every later one, lost
        assert scores["weights_from_torch"] == scores["cross_check"] == 0
    else:  # softmax is the first question: nothing after it was run
        assert all(scores[q] == 0 for q in CODE_QUESTIONS)
    assert sum(scores[q] for q in CODE_QUESTIONS) < sum(POINTS[q] for q in CODE_QUESTIONS)


def test_after_a_violation_the_workers_uid_is_empty_and_the_next_worker_with_it_works(
    engine, tmp_path, monkeypatch
):
    files = attack_files("an array where the sequence number belongs", "call")
    files = {n.removesuffix(".py"): t for n, t in files.items() if n.endswith(".py")}
    counter = itertools.count(10_000)
    monkeypatch.setattr(zygote, "_uid_counter", counter)
    with engine.open_session(files) as session:
        assert session.available("multihead", "softmax") is None  # its NumPy worker started
        uid = session.numpy_session()._worker.uid  # softmax runs there
        env = session.env()
        with pytest.raises(Exception, match="grader's channel"):
            env["softmax"](__import__("numpy").zeros((2, 3)))
        assert session.ended is not None
        if os.geteuid() == 0 and engine._zygote.privileged:
            assert processes_of(uid) == 0  # killed at once, not at the end of the session
    # The same uid again (the counter is rewound): a correct submission grades in full.
    monkeypatch.setattr(zygote, "_uid_counter", itertools.count(10_000))
    correct = {m: (ROOT / "solutions" / f"{m}.py").read_text() for m in ("multihead", "crosscheck")}
    with engine.open_session(correct) as session:
        results = engine.question_results("softmax", session.env(), session)
        assert session.numpy_session()._worker.uid == uid
    assert sum(r.score for r in results) == POINTS["softmax"]


MEASURE = """
import json, resource, sys
from mha_grader.grading.engine import Engine
from mha_grader.sandbox import Limits
from mha_grader.grading.submission import load_submission
with Engine(limits=Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=30.0)) as e:
    g = e.grade(load_submission(sys.argv[1]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"status": g.status, "peak": peak}))
"""


def peak_of_grading(folder: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_amplifying_replies_leave_the_grading_process_small(tmp_path):
    reference = {n: (ROOT / "solutions" / n).read_text() for n in STUDENT_FILES}
    correct = peak_of_grading(write(tmp_path / "ok", reference))
    assert correct["status"] == "ok"
    attacks = {}
    for forgery in ("a header of millions of empty lists", "a header nested a million deep"):
        folder = write(tmp_path / forgery.replace(" ", "_"), attack_files(forgery, "call"))
        attacks[forgery] = peak_of_grading(folder)
    for forgery, measured in attacks.items():
        assert measured["status"] == "protocol-error", forgery
        # The frame is 48 MB and would build gigabytes of lists: it is refused unparsed.
        assert measured["peak"] < correct["peak"] + (100 << 20), (forgery, measured, correct)
        assert measured["peak"] < 1 << 30
