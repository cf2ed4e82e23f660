"""What the worker may send back, checked before anything reads it, and what it means.

``checked`` holds a decoded reply against what the grader's own worker code sends for each
request (``sandbox/worker/child.py``): the keys of each kind of reply, their types and lengths.
Anything else means the student's code wrote to the grader's channel (a protocol violation,
docs/contract.md §5). ``student_error`` and ``import_error_text`` turn a checked error record
into the grader's own words: the worker's text stays in the exception for trusted checks only.
"""

from __future__ import annotations

import re
from typing import Any

from mha_check.limits import LIMIT_WORDS, limit_hit
from mha_check.questions import NUMPY_QUESTIONS

from .. import errors, shown
from ..sandbox.worker import wire

NUMPY_ONLY = (
    "The NumPy questions run where only NumPy and the standard library can be imported: any "
    "other library is refused, and torch's names refuse to be used (parameter_counts alone may "
    "use torch)"
)
PROTOCOL_VIOLATION = (
    "the worker running your code sent the grader something its own code never sends (did "
    "your code write to the grader's channel?); your code was stopped and not run again"
)
REPLY_KEYS = {
    "load": frozenset({"seq", "ok", "error"}),
    "import": frozenset({"seq", "ok", "functions", "error"}),
    "call": frozenset(
        {"seq", "ok", "value", "modified", "error", "calls", "calls_overflow"}
        | {"callees", "warned"}
    ),
    "probe": frozenset({"seq", "ok", "errors", "error"}),
    "many": frozenset({"seq", "ok", "results", "error"}),
}
MAX_MANY = 64  # calls in one "many" exchange
MAX_CALLEE_CALLS = 64  # callee calls recorded or answered during one call (worker/callees.py)
_RECORD_KEYS = frozenset({"name", "args", "ok", "value", "error", "plain"})
_ERROR_KINDS = frozenset({"not_attempted", "raised", "bad_result", "missing"})
_ERROR_KEYS = frozenset({"kind", "type", "mro", "numpy", "message", "where"})
# Types a value that is not plain data may be named by (anything else: "of its own class").
_KNOWN_TYPES = frozenset(
    {"torch.Tensor", "torch.nn.parameter.Parameter", "set", "frozenset", "bytes", "bytearray"}
    | {"complex", "range", "generator", "function", "type", "object", "map", "zip", "filter"}
)


def _strs(value: Any, limit: int) -> bool:
    return type(value) is list and len(value) <= limit and all(type(x) is str for x in value)


def checked(reply: Any, seq: int, op: str) -> bool:
    """Whether a decoded reply is one the grader's worker code could have sent for ``op``."""
    if type(reply) is not dict or not reply.keys() <= REPLY_KEYS[op]:
        return False
    if type(reply.get("seq")) is not int or reply["seq"] != seq:
        return False
    if op == "call":
        return _call_reply(reply, {"seq"})
    if reply.get("ok") is True:
        if "error" in reply:
            return False
        if op == "import":
            return _strs(reply.get("functions"), wire.MAX_NODES)
        if op == "many":
            found = reply.get("results")
            return (
                type(found) is list
                and len(found) <= MAX_MANY
                and all(type(r) is dict and _call_reply(r, set()) for r in found)
            )
        if op == "probe":
            found = reply.get("errors")
            return (
                type(found) is list
                and len(found) <= 64
                and all(e is None or _error_record(e) for e in found)
            )
        return True
    if reply.get("ok") is not False or reply.keys() - {"seq", "ok", "error"}:
        return False
    return _error_record(reply.get("error"))


def _call_reply(reply: dict, extra: set[str]) -> bool:
    """Whether ``reply`` is a call's reply as the worker's code makes it (``extra``: the keys an
    exchange adds, such as seq)."""
    if not reply.keys() <= REPLY_KEYS["call"]:
        return False
    if "calls" in reply and not _records(reply["calls"]):
        return False
    if "calls_overflow" in reply and reply["calls_overflow"] is not True:
        return False
    callees = reply.get("callees", 0)
    if type(callees) is not int or not 0 <= callees <= MAX_CALLEE_CALLS:
        return False
    if "warned" in reply and reply["warned"] is not True:
        return False
    extra = extra | {"calls", "calls_overflow", "callees", "warned"}
    if reply.get("ok") is True:
        if "error" in reply or "value" not in reply:
            return False
        return "modified" not in reply or _strs(reply["modified"], 64)
    if reply.get("ok") is not False or reply.keys() - {"ok", "error"} - extra:
        return False
    return _error_record(reply.get("error"))


def _records(value: Any) -> bool:
    """Whether ``value`` is the list of callee calls the worker records (worker/callees.py)."""
    if type(value) is not list or len(value) > MAX_CALLEE_CALLS:
        return False
    for call in value:
        if type(call) is not dict or not call.keys() <= _RECORD_KEYS:
            return False
        if type(call.get("name")) is not str or type(call.get("ok")) is not bool:
            return False
        if call.get("plain", True) is not True:  # not plain data: nothing but that it happened
            if call.get("plain") is not False or call.get("args") is not None or "value" in call:
                return False
        else:
            args = call.get("args")
            if type(args) is not tuple or len(args) != 2:
                return False
            if type(args[0]) is not tuple or type(args[1]) is not dict:
                return False
            if call["ok"] and "value" not in call:
                return False
        if call["ok"] and "error" in call:
            return False
        if not call["ok"] and ("value" in call or not _error_record(call.get("error"))):
            return False
    return True


def callee_question(frame: Any, seq: int, names: frozenset[str]) -> bool:
    """Whether ``frame`` is a callee frame the worker's code sends (worker/callees.py) while
    serving request ``seq``, for one of the callees the trusted side answers."""
    return (
        type(frame) is dict
        and frame.keys() == {"seq", "callee", "args", "kwargs"}
        and type(frame["seq"]) is int
        and frame["seq"] == seq
        and frame["callee"] in names
        and type(frame["args"]) is list
        and type(frame["kwargs"]) is dict
        and all(type(k) is str for k in frame["kwargs"])
    )


def _error_record(error: Any) -> bool:
    """Whether ``error`` is an error record the worker's own code could have sent."""
    if type(error) is not dict or not error.keys() <= _ERROR_KEYS:
        return False
    if error.get("kind") not in _ERROR_KINDS or type(error["kind"]) is not str:
        return False
    texts = all(type(error.get(k, "")) is str for k in ("type", "numpy", "message", "where"))
    return texts and _strs(error.get("mro", []), 64)


# -- what a checked error record means -------------------------------------------------------


# Keys of a returned dict whose values are plain scalars, and what each must be: a value that
# is not plain data is said to be at one of these keys (no other key is ever repeated: the
# student's code chooses its keys).
SCALAR_KEYS = {
    "output_max_abs_diff": "a float",
    "weights_max_abs_diff": "a float",
    "match": "a bool (True or False)",
}
_NOT_PLAIN = re.compile(r"a value of type (\S+) is not plain data(?: at key '([A-Za-z_]+)')?")


def not_plain_data(message: str) -> str:
    """The worker says "a value of type X is not plain data" (and, inside a dict, "at key K");
    X is named only when it is a type the grader knows (a class of the student's own could be
    named to carry anything), K only when it is one of SCALAR_KEYS: then what was expected
    there is said, and how to get it."""
    found = _NOT_PLAIN.fullmatch(message)
    name, key = (found.group(1), found.group(2)) if found else ("", None)
    if name in _KNOWN_TYPES:
        what = "a torch tensor" if name.startswith("torch.") else f"a {name}"
        if key in SCALAR_KEYS:
            want = SCALAR_KEYS[key]
            how = "bool(...)" if key == "match" else "float(...) (or .item())"
            return (
                f"returned a dict whose '{key}' is {what}, where {want} is asked: convert "
                f"it with {how}"
            )
        hint = " (convert it with .detach().numpy())" if name.startswith("torch.") else ""
        return f"returned {what}, which is not plain data{hint}"
    if "too large" in message:
        return "returned more data than the grader accepts"
    return (
        "returned something that is not plain data (NumPy arrays, numbers, strings, lists, "
        "tuples and dicts are): an object of a class of its own?"
    )


def student_error(record: dict, func: str, door: shown.Door) -> errors.StudentCodeError:
    """A call's error record (already checked) as an errors.StudentCodeError whose text is the
    grader's: the worker's own words stay in the exception for trusted checks only."""
    kind = record["kind"]
    if kind == "not_attempted":
        return errors.NotAttempted("still raises NotImplementedError: not attempted yet")
    if kind == "bad_result":
        return errors.BadResult(not_plain_data(record.get("message", "")))
    if kind == "missing":
        return errors.MissingFunction("the function is not defined in your file")
    exc_type = record.get("type", "")[:100] or "Exception"
    mro = record.get("mro", [])
    where = record.get("where", "")[:300]
    numpy = record.get("numpy", "")[:100]
    kind, place = door.raised(func, exc_type, mro, where, public=False, numpy=numpy)
    message = record.get("message", "")[:500]
    error = errors.StudentRaised(exc_type, mro, message, where, place, kind, numpy)
    if func in NUMPY_QUESTIONS and "ImportError" in mro:  # what the wall makes of torch
        error.hint = NUMPY_ONLY
    elif limit := limit_hit(list(mro), message):  # the sandbox's limit, in mha-check's words
        error.hint = LIMIT_WORDS[limit][0].upper() + LIMIT_WORDS[limit][1:] + "."
    return error


def syntax_error_record(e: SyntaxError, file: str) -> dict:
    """The error record the worker sends for a SyntaxError of ``file`` (child._describe)."""
    mro = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"]
    where = f"{file}, line {e.lineno}: {(e.text or '').strip()}"
    return {
        "kind": "raised",
        "type": type(e).__name__,
        "mro": mro,
        "numpy": "",
        "message": str(e.msg)[:500],
        "where": where[:300],
    }


def import_error_text(record: dict, door: shown.Door, numpy_only: bool = False) -> str:
    """An import's error in full (kind, message, line): imports run before any hidden input
    exists in the worker, so the student may see their own message, escaped."""
    if record["kind"] == "not_attempted":
        return "it raised NotImplementedError while being imported"
    if record["kind"] != "raised":
        return "it did not load"
    name = shown.inline_code(record.get("type", "")[:100] or "Exception")
    message = record.get("message", "")[:500]
    text = f"raised {name}" + (f": {shown.inline_code(message)}" if message.strip() else "")
    place = door.place(record.get("where", ""))
    text += f" ({place})" if place else ""
    limit = limit_hit(list(record.get("mro", [])), message)
    text += f" ({LIMIT_WORDS[limit]})" if limit else ""
    refused = "does not allow" in message
    if record.get("type") == "ModuleNotFoundError" and not refused and not numpy_only:
        text += (
            ". Grading has the standard library, NumPy and torch only: the student files may "
            "import nothing else (mha-check applies the same rule)"
        )
    return text
