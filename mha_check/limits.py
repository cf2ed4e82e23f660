"""The sandbox's limits, a wall-clock limit and output capture around each call into the
student's code.

The limits grading's workers run under are defined here, once: grading's sandbox takes them
(``mha_grader/sandbox/layers.py``) and mha-check applies them to every call into the student's
code and every import of a student file (``call_limits``), so that code the sandbox stops fails
the local check too, in words naming the limit (``limit_words``, grading's words as well):

- memory, open files and the size of a file written: the same rlimits, on Linux (macOS and
  Windows have no such limits, or do not enforce them: none there);
- threads and processes: grading counts both against one limit and refuses a new process
  outright (seccomp, or the count), so mha-check, which shares the student's uid and its
  process count with everything else they run, refuses a new process (``os.fork``,
  ``subprocess``, ``multiprocessing``) and counts the threads the code starts, on every system.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

# -- the sandbox's limits per worker (docs/contract.md §7) ---------------------------------------
CALL_SECONDS = 10.0  # wall clock per call into student code (mha-check: per check)
IMPORT_SECONDS = 10.0  # per student file's import
CPU_SECONDS = 60
MEMORY_BYTES = 2 << 30  # address space on top of what the process already maps (torch)
PROCESSES = 16  # threads count too, the worker's own thread included
FILE_BYTES = 16 << 20  # the largest file it may write
OPEN_FILES = 64

# Each limit in words, for grading's feedback and mha-check's report alike.
LIMIT_WORDS = {
    "threads": f"it started more threads than the {PROCESSES - 1} the sandbox allows (threads "
    "and processes count together)",
    "refused": "the sandbox refuses it: no new process (subprocess, multiprocessing, os.fork), "
    "no network, no file outside the worker's own folder",
    "memory": f"it asked for more memory than the {MEMORY_BYTES >> 20} MB the sandbox allows"
    ": an array allocated counts, even one never written",
    "open_files": f"it had more files open at once than the {OPEN_FILES} the sandbox allows",
    "file_bytes": f"it wrote a file larger than the {FILE_BYTES >> 20} MB the sandbox allows",
}
THREAD_REFUSED = "can't start new thread"  # Python's own words when the count is reached


def limit_hit(types: list[str], message: str) -> str | None:
    """Which limit (a key of LIMIT_WORDS) an exception most likely ran into, from its class
    names (``types``: the class and its built-in bases) and its message; None: none."""
    if "MemoryError" in types:
        return "memory"
    if "RuntimeError" in types and message == THREAD_REFUSED:
        return "threads"
    if "OSError" in types:
        codes = {errno.EMFILE: "open_files", errno.EFBIG: "file_bytes"}
        codes |= {errno.EAGAIN: "threads", errno.EPERM: "refused", errno.EACCES: "refused"}
        for code, limit in codes.items():
            if message.startswith(f"[Errno {code}] "):
                return limit
    return None


class TimeLimitExceeded(BaseException):
    """Raised inside the student's code when its time is up.

    A BaseException, so that the student's own ``except Exception:`` does not swallow it.
    """


GIVE_UP_AFTER = 3  # extra seconds of re-raising before giving up on code that swallows the stop


def _can_time() -> bool:
    # SIGALRM exists on Linux and macOS only, and only the main thread receives it.
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise TimeLimitExceeded in the running code after `seconds` (no limit where unsupported)."""
    if not seconds or not _can_time():
        yield
        return
    fired = 0

    def on_alarm(signum: int, frame: object) -> None:
        nonlocal fired
        fired += 1
        if fired > GIVE_UP_AFTER:  # a bare `except:` keeps catching the stop: nothing else works
            os.write(
                2,
                b"\nmha-check: your code keeps running after being stopped (a bare `except:` "
                b"around an endless loop?). Giving up; nothing after this point was checked.\n",
            )
            os._exit(1)
        raise TimeLimitExceeded

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)  # then again every second if swallowed
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def captured_output() -> Iterator[io.StringIO]:
    """Collect what the student's code prints, so it does not interleave with the report."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        yield buffer


def limit_note(e: BaseException) -> str:
    """`` (<the limit in words>)`` when ``e`` ran into one of the sandbox's limits, else ''."""
    import builtins

    types = [c.__name__ for c in type(e).__mro__ if getattr(builtins, c.__name__, None) is c]
    try:
        limit = limit_hit(types, str(e))
    except Exception:  # a hostile __str__
        return ""
    return f" ({LIMIT_WORDS[limit]})" if limit else ""


# -- the same limits around the student's code here -----------------------------------------------


def _linux_rlimits() -> Any:
    """The resource module where the sandbox's rlimits mean the same (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import resource
    except ImportError:
        return None
    return resource


def _mapped_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _open_files() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return OPEN_FILES


_OPEN_AT_START = _open_files()  # what this process held before any student code ran


@contextlib.contextmanager
def _rlimits() -> Iterator[None]:
    """Memory (on top of what is mapped), open files and file size as a worker has them; only
    the soft limits, so that they are lifted again afterwards."""
    resource = _linux_rlimits()
    mapped = _mapped_bytes() if resource is not None else 0
    if resource is None or not mapped:
        yield
        return
    wanted = {resource.RLIMIT_AS: mapped + MEMORY_BYTES, resource.RLIMIT_FSIZE: FILE_BYTES}
    if _OPEN_AT_START < OPEN_FILES // 2:  # not in a process that holds many (a notebook's)
        wanted[resource.RLIMIT_NOFILE] = OPEN_FILES
    before = {}
    for which, value in wanted.items():
        try:
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            if soft == resource.RLIM_INFINITY or value < soft:
                resource.setrlimit(which, (value, hard))
                before[which] = (soft, hard)
        except (OSError, ValueError):
            pass
    try:
        yield
    finally:
        for which, previous in before.items():
            with contextlib.suppress(OSError, ValueError):
                resource.setrlimit(which, previous)


def _process_refused(*args: object, **kwargs: object) -> Any:
    raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))


# Where a new process starts in Python: each is refused while the student's code runs.
_PROCESS_STARTS = (
    ("os", ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system")),
    ("_posixsubprocess", ("fork_exec",)),
    ("_winapi", ("CreateProcess",)),
)


@contextlib.contextmanager
def _threads_and_processes() -> Iterator[None]:
    """No new process, and at most PROCESSES - 1 threads started and alive at once."""
    patched: list[tuple[Any, str, Any, Any]] = []  # module, name, original, replacement
    for module_name, names in _PROCESS_STARTS:
        module = sys.modules.get(module_name)
        for name in names:
            if module is not None and hasattr(module, name):
                patched.append((module, name, getattr(module, name), _process_refused))
    at_start = threading.active_count()
    for name in ("_start_joinable_thread", "_start_new_thread"):  # Python 3.13+, before
        original = getattr(threading, name, None)
        if original is not None:
            patched.append((threading, name, original, _counted(original, at_start)))
            break
    try:
        for module, name, _, replacement in patched:
            setattr(module, name, replacement)
        yield
    finally:
        for module, name, original, _ in patched:
            setattr(module, name, original)


def _counted(start: Any, at_start: int) -> Any:
    def counted_start(*args: Any, **kwargs: Any) -> Any:
        if threading.active_count() - at_start >= PROCESSES - 1:
            raise RuntimeError(THREAD_REFUSED)
        return start(*args, **kwargs)

    return counted_start


@contextlib.contextmanager
def call_limits(seconds: float | None) -> Iterator[None]:
    """Run the student's code under the sandbox's limits (as far as this system has them) and
    a wall-clock limit of ``seconds``."""
    with time_limit(seconds), _rlimits(), _threads_and_processes():
        yield
