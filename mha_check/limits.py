"""A wall-clock limit and output capture around each call into the student's code."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import threading
from collections.abc import Iterator


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
