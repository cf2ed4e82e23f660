"""Landlock (Linux 5.13 and later): the worker restricts itself to the files it needs.

Without namespaces the worker sees the machine's whole filesystem; Landlock lets an
unprivileged process give up access to all of it but an allow-list: read (and execute) the
system and the interpreter, write only its own folder. Newer kernels also let it give up TCP
(ABI 4) and reaching abstract Unix sockets or signalling processes outside its own domain
(ABI 6). Access is checked on top of file permissions, never instead of them.
"""

from __future__ import annotations

import ctypes
import os
import struct

from .linux import PR_SET_NO_NEW_PRIVS, prctl

# The same numbers on every architecture (system calls added after the unified table).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_V1 = (1 << 13) - 1  # execute ... make_sym
_FS_BY_ABI = {1: _FS_V1, 2: _FS_V1 | 1 << 13, 3: _FS_V1 | 3 << 13, 4: _FS_V1 | 3 << 13}
_FS_V5 = _FS_V1 | 7 << 13  # ABI 2 adds refer, 3 truncate, 5 ioctl_dev
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | 1 << 14 | 1 << 15  # rights a file may hold
READ = EXECUTE | READ_FILE | READ_DIR
_NET_TCP = 3  # bind_tcp | connect_tcp (ABI 4)
_SCOPE_ALL = 3  # abstract_unix_socket | signal (ABI 6)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(*args: object) -> int:
    result = _libc.syscall(*args)
    if result < 0:
        raise OSError(ctypes.get_errno(), "landlock")
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is absent, disabled or refused."""
    try:
        return _syscall(
            ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION
        )
    except OSError:
        return 0


def _fs_rights(abi: int) -> int:
    return _FS_BY_ABI.get(abi, _FS_V5)


def readable(read: list[str], withheld: list[str]) -> list[tuple[str, int]]:
    """Rules to read everything beneath ``read`` except the folders ``withheld``: a folder above
    a withheld one may only be listed, and each of its other entries is read in full."""
    rules: list[tuple[str, int]] = []
    for path in read:
        inside = [w for w in withheld if w == path or w.startswith(path.rstrip("/") + "/")]
        if not inside:
            rules.append((path, READ))
        elif path not in inside and os.path.isdir(path):
            rules.append((path, READ_DIR))
            try:
                entries = sorted(os.listdir(path))
            except OSError:
                continue
            rules += readable([os.path.join(path, e) for e in entries], inside)
    return rules


def restrict(
    abi: int, read: list[str], read_write_files: list[str], home: str, withheld: list[str] = ()
) -> None:
    """Restrict this process (and everything it starts) to reading ``read`` (beneath each
    path) but ``withheld``, reading and writing the files ``read_write_files`` (such as
    /dev/null) and doing anything in ``home``; with ABI 4, no TCP; with ABI 6, no abstract Unix
    socket or signal reaching out of this domain. Paths that do not exist are skipped."""
    handled = _fs_rights(abi)
    attr = struct.pack("<Q", handled)
    if abi >= 4:
        attr += struct.pack("<Q", _NET_TCP)
    if abi >= 6:
        attr += struct.pack("<Q", _SCOPE_ALL)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(ctypes.c_long(_CREATE_RULESET), buf, ctypes.c_size_t(len(attr)), 0)
    try:
        rules = [(p, rights & handled) for p, rights in readable(read, list(withheld))]
        rules += [(p, (READ_FILE | WRITE_FILE) & handled) for p in read_write_files]
        rules.append((home, handled))
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= FILE_RIGHTS
                beneath = ctypes.create_string_buffer(struct.pack("<Qi", rights, fd), 12)
                _syscall(ctypes.c_long(_ADD_RULE), ruleset, _RULE_PATH_BENEATH, beneath, 0)
            finally:
                os.close(fd)
        prctl(PR_SET_NO_NEW_PRIVS, 1)  # required to restrict oneself without CAP_SYS_ADMIN
        _syscall(ctypes.c_long(_RESTRICT_SELF), ruleset, 0)
    finally:
        os.close(ruleset)
