"""Thin wrappers for the Linux calls the sandbox needs that Python 3.11 lacks (stdlib only)."""

from __future__ import annotations

import ctypes

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
MADV_COLLAPSE = 25  # Linux 6.1+
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 1, 2, 4, 1 << 14, 1 << 18

_libc = ctypes.CDLL(None, use_errno=True)
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what} failed")


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl({option})")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    args = [None if v is None else v.encode() for v in (source, target, fstype, data or None)]
    _check(_libc.mount(args[0], args[1], args[2], ctypes.c_ulong(flags), args[3]), "mount")


def madvise(start: int, length: int, advice: int) -> None:
    _check(_libc.madvise(start, length, advice), f"madvise({advice})")
