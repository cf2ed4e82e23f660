# append-to-solution
# Looks for the solutions, hidden tests and rubrics: by the checkout's real path (the test
# writes it in place of __CHECKOUT__), by import, and by walking the whole filesystem.
# findings() returns what it saw; the grader must leave it empty.
import importlib as _importlib
import os as _os

_CHECKOUT = "__CHECKOUT__"
_found = []
_SECRET_NAMES = {"solutions", "autograder", "rubrics", "points.toml", "mha_grader", "hidden.py"}
_HIDDEN_MARKERS = ("from otter.test_files import test_case", "def multi_head_attention(")

for _rel in (
    "solutions/multihead.py",
    "autograder/points.toml",
    "autograder/tests/softmax.py",
    "mha_grader/grading/hidden.py",
    "README.md",
    "",
):
    _path = _os.path.join(_CHECKOUT, _rel)
    if _os.path.exists(_path):
        _found.append(f"path {_path}")

for _name in (
    "solutions",
    "solutions.multihead",
    "autograder",
    "mha_grader",
    "mha_grader.hidden",
    "mha_grader.paths",
    "exercises",
):
    try:
        _importlib.import_module(_name)
        _found.append(f"import {_name}")
    except BaseException:
        pass

_own = _os.path.realpath(__file__)
for _dir, _subdirs, _files in _os.walk("/"):
    if _dir in ("/proc", "/sys", "/dev"):
        _subdirs[:] = []
        continue
    for _n in _subdirs + _files:
        if _n in _SECRET_NAMES and "site-packages" not in _dir:
            _found.append(f"name {_os.path.join(_dir, _n)}")
    for _n in _files:
        _p = _os.path.join(_dir, _n)
        if not _n.endswith(".py") or _os.path.realpath(_p) == _own or "site-packages/" in _p:
            continue
        if "/usr/lib/python" in _p or "/lib/python3" in _p:
            continue  # the interpreter's own standard library
        try:
            with open(_p, errors="replace") as _f:
                _text = _f.read(200_000)
        except OSError:
            continue
        if any(m in _text for m in _HIDDEN_MARKERS):
            _found.append(f"content {_p}")

print("snoop found:", _found)


def findings():
    return list(_found)
