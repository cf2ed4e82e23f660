"""Which files a worker must read and which it must not, where it sees the whole filesystem.

In the layers without namespaces a worker sees the machine's files. In the uid layer it runs as
a uid of its own, in no group, so only the "other" permission bits apply to it: before the
first worker starts, ``close_to_workers`` makes every folder on the way to the interpreter and
its packages traversable by others (``o+x``, nothing more) and takes every "other" permission
off the trusted paths (``o-rwx``): the checkout (but the way to a virtualenv inside it, which
becomes traverse-only), the output folder and the submissions. The zygote then checks the
result by trying, as a worker (``check_lists``).
"""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..paths import AUTOGRADER, HIDDEN_TESTS, POINTS_FILE, ROOT, SOLUTIONS

# What every worker may read beside the interpreter (Landlock's allow-list).
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc")
SYSTEM_DIRS += ("/proc", "/sys")


def site_dirs() -> list[str]:
    paths = sysconfig.get_paths()
    dirs: list[str] = []
    for key in ("purelib", "platlib"):
        p = os.path.realpath(paths[key])
        if p not in dirs:
            dirs.append(p)
    return dirs


def needed_paths() -> list[str]:
    """Folders a worker must read: the interpreter's own (standard library) and its packages."""
    paths = [os.path.realpath(sys.base_prefix), os.path.dirname(os.path.realpath(sys.executable))]
    for key in ("stdlib", "platstdlib"):
        paths.append(os.path.realpath(sysconfig.get_paths()[key]))
    paths += site_dirs()
    return list(dict.fromkeys(paths))


def read_paths() -> list[str]:
    """Everything a worker may read under Landlock (no path beneath another listed)."""
    paths = [*SYSTEM_DIRS, *needed_paths()]
    return [p for p in paths if not any(q != p and _inside(p, q) for q in paths)]


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _leads_to_needed(path: str, needed: Sequence[str]) -> bool:
    return any(_inside(n, path) for n in needed)


def _chmod(path: str, mode: int, changes: list[str], label: str) -> None:
    try:
        os.chmod(path, mode)
        changes.append(f"{label} {path}")
    except OSError as e:  # read-only or foreign filesystem: the check decides
        changes.append(f"could not change {path} ({e.strerror})")


def close_to_workers(protect: Iterable[Path] = ()) -> list[str]:
    """Open the way to the interpreter, close the trusted paths; returns what was changed."""
    needed = needed_paths()
    changes = open_the_way(needed)
    root = os.path.realpath(ROOT)
    for top in dict.fromkeys(os.path.realpath(p) for p in [ROOT, *protect]):
        if top != root and _leads_to_needed(top, needed):
            continue  # an output folder above the interpreter (even /): never chmod'ed; the
            # check then finds it readable and the layer says what to choose instead
        _close(top, needed, changes, top_level=True)
    return changes


def open_the_way(needed: Sequence[str] | None = None) -> list[str]:
    """Make every folder above the interpreter and its packages traversable by other users
    (o+x: they can reach what is inside by name, not list it); returns what was changed."""
    changes: list[str] = []
    for path in needed_paths() if needed is None else needed:
        parts = Path(path).parts
        for i in range(1, len(parts) + 1):
            folder = str(Path(*parts[:i]))
            try:
                mode = os.stat(folder).st_mode
            except OSError:
                break
            if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
                _chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH, changes, "o+x")
    return changes


def _close(path: str, needed: Sequence[str], changes: list[str], top_level: bool) -> None:
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode) or path in needed:
        return
    mode = stat.S_IMODE(st.st_mode)
    if not _leads_to_needed(path, needed):
        if mode & stat.S_IRWXO:
            _chmod(path, mode & ~stat.S_IRWXO, changes, "o-rwx")
        return
    if not top_level:  # a folder on the way to a virtualenv inside a trusted path: left as is
        return
    # A trusted folder that holds the virtualenv (a checkout with .venv): traverse-only for
    # others, and every entry closed but the way to the virtualenv.
    if mode & stat.S_IRWXO != stat.S_IXOTH:
        _chmod(path, (mode & ~stat.S_IRWXO) | stat.S_IXOTH, changes, "o=x")
    with os.scandir(path) as entries:
        for entry in entries:
            _close(entry.path, needed, changes, top_level=False)


def _origin(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec else None


def check_lists(protect: Iterable[Path] = ()) -> tuple[list[str], list[str]]:
    """(paths a worker must be able to read, paths it must not), for the zygote's self-check."""
    stdlib = sysconfig.get_paths()["stdlib"]
    must_read = [stdlib, os.path.join(stdlib, "os.py"), os.path.join(stdlib, "json", "__init__.py")]
    must_read += site_dirs()
    must_read += [o for o in (_origin("numpy"), _origin("torch")) if o]
    needed = needed_paths()
    must_not = [str(ROOT), str(SOLUTIONS / "multihead.py"), str(POINTS_FILE), str(HIDDEN_TESTS)]
    must_not += [str(AUTOGRADER), str(ROOT / "mha_grader" / "grading" / "engine.py")]
    try:  # every other entry of the checkout too, whatever it is called
        must_not += [
            e.path for e in os.scandir(ROOT) if not _leads_to_needed(os.path.realpath(e), needed)
        ]
    except OSError:
        pass
    must_not += [str(p) for p in protect]
    return list(dict.fromkeys(must_read)), list(dict.fromkeys(must_not))
