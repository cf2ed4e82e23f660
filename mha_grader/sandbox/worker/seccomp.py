"""Seccomp filters through the system's libseccomp (ctypes, standard library only).

Used by the worker in the layers without namespaces, to refuse the system calls a worker never
needs (``worker_filter``), and by the project's tests to build a kernel that refuses
namespaces the way Docker's default profile does. Every filter allows by default and refuses
named calls with an errno: a refused call fails like a call the kernel does not permit, so
student code sees an ordinary ``PermissionError``/``OSError``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os

ALLOW = 0x7FFF0000
CMP_NE, CMP_EQ, CMP_MASKED_EQ = 1, 4, 7  # enum scmp_compare
_ATTR_CTL_NNP = 3  # enum scmp_filter_attr: set no_new_privs when loading
_MASK64 = (1 << 64) - 1

# clone(2) flags that create namespaces (CLONE_NEWTIME shares CSIGNAL's bits: not filterable).
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_THREAD = 0x00010000
PR_SET_PDEATHSIG = 1


def errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


_lib: ctypes.CDLL | None = None


def library() -> ctypes.CDLL:
    """libseccomp, loaded once (raises OSError when it is not installed)."""
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
        except OSError:
            name = ctypes.util.find_library("seccomp")
            if name is None:
                raise OSError(
                    errno.ENOENT, "libseccomp is not installed (Debian/Ubuntu: libseccomp2)"
                ) from None
            lib = ctypes.CDLL(name, use_errno=True)
        lib.seccomp_init.restype = ctypes.c_void_p
        lib.seccomp_init.argtypes = [ctypes.c_uint32]
        lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        lib.seccomp_rule_add_array.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.POINTER(_ArgCmp),
        ]
        lib.seccomp_load.argtypes = [ctypes.c_void_p]
        lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.seccomp_release.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


class Filter:
    """A filter under construction: ``refuse`` calls, then ``load`` it into this process (and
    every process it starts from then on; a loaded filter cannot be removed)."""

    def __init__(self, no_new_privs: bool = True) -> None:
        self._lib = library()
        self._ctx = self._lib.seccomp_init(ALLOW)
        if not self._ctx:
            raise OSError(errno.ENOMEM, "seccomp_init failed")
        if not no_new_privs:  # the caller has CAP_SYS_ADMIN and keeps setuid programs working
            self._lib.seccomp_attr_set(self._ctx, _ATTR_CTL_NNP, 0)

    def refuse(self, syscall: str, code: int = errno.EPERM, *where: tuple[int, ...]) -> bool:
        """Make ``syscall`` fail with ``code`` when every condition in ``where`` holds: each is
        ``(arg, op, value)``, or ``(arg, CMP_MASKED_EQ, mask, value)``. Returns False when
        this architecture has no such call."""
        nr = self._lib.seccomp_syscall_resolve_name(syscall.encode())
        if nr < 0:
            return False
        conditions = (_ArgCmp * max(1, len(where)))()
        for i, (arg, op, a, *b) in enumerate(where):
            conditions[i] = _ArgCmp(arg, op, a & _MASK64, (b[0] if b else 0) & _MASK64)
        rc = self._lib.seccomp_rule_add_array(
            self._ctx, errno_action(code), nr, len(where), conditions
        )
        if rc < 0:
            raise OSError(-rc, f"seccomp: cannot add a rule for {syscall}")
        return True

    def refuse_namespaces(self) -> None:
        """What Docker's default profile refuses to a container without CAP_SYS_ADMIN:
        namespaces (unshare, setns, clone with a namespace flag; clone3 looks absent, so C
        libraries fall back to clone) and mounts."""
        for call in ("unshare", "setns", "mount", "umount2", "pivot_root"):
            self.refuse(call)
        self.refuse("clone3", errno.ENOSYS)
        for flag in NAMESPACE_FLAGS.values():
            self.refuse("clone", errno.EPERM, (0, CMP_MASKED_EQ, flag, flag))

    def load(self) -> None:
        rc = self._lib.seccomp_load(self._ctx)
        self._lib.seccomp_release(self._ctx)
        self._ctx = None
        if rc < 0:
            raise OSError(-rc, "seccomp: the kernel refused the filter")

    def export(self) -> bytes:
        """The filter as a BPF program, for ``load_program`` (built once, loaded many times:
        compiling it is most of what loading a filter costs)."""
        read_fd, write_fd = os.pipe()
        try:
            rc = self._lib.seccomp_export_bpf(self._ctx, write_fd)
            os.close(write_fd)
            write_fd = -1
            if rc < 0:
                raise OSError(-rc, "seccomp: cannot export the filter")
            chunks = []
            while chunk := os.read(read_fd, 1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
            self._lib.seccomp_release(self._ctx)
            self._ctx = None


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_libc = ctypes.CDLL(None, use_errno=True)


def load_program(program: bytes) -> None:
    """Install a BPF program made by ``Filter.export`` (no_new_privs must be set)."""
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))  # 8 bytes each
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp: the kernel refused the filter")


# System calls a worker never needs, refused in every layer without namespaces: networks and
# other processes' memory, leaving its process group, new namespaces, mounts and processes,
# kernel keyrings, SysV IPC shared with other processes, and kernel interfaces that widen the
# attack surface (io_uring, BPF, perf, userfaultfd).
NEVER_NEEDED = (
    "socket",  # no network, no abstract or filesystem Unix socket (socketpair stays)
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "setsid",  # stays in its process group: the group is how it is killed
    "setpgid",
    "chroot",
    "keyctl",
    "add_key",
    "request_key",
    "shmget",
    "shmat",
    "msgget",
    "semget",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "name_to_handle_at",
    "open_by_handle_at",
    "acct",
    "personality",
)
# With a uid of its own: files it creates stay private to that uid (umask 077, fixed), so
# nothing it leaves in /tmp or /dev/shm is readable by another worker.
PRIVATE_FILES = (
    "umask",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
)
# Sharing the grader's uid, without Landlock's signal scoping: it may signal its own process
# group (kill(0, ...)) and raise signals in its own threads, nothing else.
OTHER_SIGNALS = ("tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal")


def needs_pid(own_uid: bool, signals_scoped: bool) -> bool:
    """Whether ``worker_filter`` depends on the worker's pid (so cannot be built in advance)."""
    return not own_uid and not signals_scoped


def worker_filter(own_uid: bool, signals_scoped: bool, pid: int | None = None) -> Filter:
    """The filter a worker installs on itself: ``own_uid`` in the uid layer; ``signals_scoped``
    when Landlock already keeps its signals inside; ``pid``, the worker's own, when
    ``needs_pid``."""
    f = Filter()
    for call in NEVER_NEEDED:
        f.refuse(call)
    f.refuse_namespaces()
    # No new process (threads stay): nothing it starts can outlive it or leave its group.
    for call in ("fork", "vfork"):
        f.refuse(call)
    f.refuse("clone", errno.EPERM, (0, CMP_MASKED_EQ, CLONE_THREAD, 0))
    f.refuse("prctl", errno.EPERM, (0, CMP_EQ, PR_SET_PDEATHSIG))  # dies with the grader
    if own_uid:
        for call in PRIVATE_FILES:
            f.refuse(call)
    elif not signals_scoped:
        f.refuse("kill", errno.EPERM, (0, CMP_NE, 0))
        f.refuse("tgkill", errno.EPERM, (0, CMP_NE, pid))
        for call in OTHER_SIGNALS:
            f.refuse(call)
    return f
