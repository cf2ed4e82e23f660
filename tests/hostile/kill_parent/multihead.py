# append-to-solution
# Tries to kill the process that started it, the sandbox's init and every process it may
# signal; the functions themselves are the reference.
import os as _os
import signal as _signal

_attempts = []
for _target in (_os.getppid(), 1, -1):
    try:
        _os.kill(_target, _signal.SIGKILL)
        _attempts.append(f"{_target}: sent")
    except OSError as _e:
        _attempts.append(f"{_target}: {type(_e).__name__}")


def attempts():
    return list(_attempts)
