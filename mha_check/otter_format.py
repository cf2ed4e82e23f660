"""otter-grader's exception-based test-file format, loaded without the rest of otter.

``import otter`` runs otter's package ``__init__``, which imports its whole API (nbconvert, pandas,
...): about 1 s, more than the rest of mha-check together. The test-file format itself lives in
two standard-library-only modules, ``otter/test_files/exception_test.py`` and
``abstract_test.py``. They are loaded here from the installed otter, under their real names, with
light package entries for ``otter`` and ``otter.test_files`` in front of them, so that a test
file's ``from otter.test_files import test_case`` gets otter's own class. If anything about that
fails (another otter version, otter already imported), the full package is imported instead.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any


def _load_light() -> Any:
    spec = importlib.util.find_spec("otter")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("otter-grader is not installed")
    otter_dir = Path(next(iter(spec.submodule_search_locations)))
    package = types.ModuleType("otter", "otter-grader (test-file format only, loaded by mha-check)")
    package.__path__ = [str(otter_dir)]
    test_files = types.ModuleType("otter.test_files")
    test_files.__path__ = [str(otter_dir / "test_files")]
    package.test_files = test_files  # type: ignore[attr-defined]
    sys.modules["otter"], sys.modules["otter.test_files"] = package, test_files
    module = importlib.import_module("otter.test_files.exception_test")
    test_files.test_case = module.test_case  # type: ignore[attr-defined]
    test_files.ExceptionTestFile = module.ExceptionTestFile  # type: ignore[attr-defined]
    return module.ExceptionTestFile


def exception_test_file_class() -> Any:
    """otter's ExceptionTestFile class, as cheaply as possible."""
    if "otter" not in sys.modules:
        try:
            return _load_light()
        except Exception:  # fall back on the full package below
            for name in [n for n in sys.modules if n == "otter" or n.startswith("otter.")]:
                del sys.modules[name]
    from otter.test_files.exception_test import ExceptionTestFile

    return ExceptionTestFile
