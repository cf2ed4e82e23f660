"""Contain a process forked from the zygote as a worker, in the layer the zygote runs in.

Standard library only (no NumPy): the zygote also runs it in a child it checks before
importing anything large.
"""

from __future__ import annotations

import grp  # (imported with this module, in the zygote: nothing is loaded after containment)
import os
import pwd
import resource
import signal

from . import landlock, seccomp
from .linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    PR_SET_DUMPABLE,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    mount,
    prctl,
    unshare,
)

WORKER_USER = "student"  # the user name a worker's environment gives (its uid has none)

# Devices every process may use; all else under /dev stays closed under Landlock.
READ_WRITE_DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _count_processes(uid: int) -> int:
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                n += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    return n


def _apply_limits(spec: dict, own_uid: bool) -> None:
    lim = spec["limits"]
    address_space = _vm_size() + lim["memory_bytes"]  # torch is already mapped: budget on top
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu_seconds"], lim["cpu_seconds"] + 2))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim["file_bytes"], lim["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (lim["open_files"], lim["open_files"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # NPROC counts every process of the real uid. With a uid of its own the limit is exactly
    # its own tree. Otherwise the uid is shared: allow what exists.
    nproc = lim["processes"] + (0 if own_uid else _count_processes(os.getuid()))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def _name_own_user(home: str) -> None:
    """Answer for the worker's own uid and gid in the user database as a laptop answers for its
    user (``student``, as the environment says): the sandbox's uid has no entry (inside
    namespaces there is no /etc at all), so a top-level ``pwd.getpwuid(os.getuid())`` or
    ``os.getlogin()``, which loads on the student's laptop and in mha-check, would fail the
    file's import. Every other uid and name is asked of the database as before."""
    uid, gid = os.getuid(), os.getgid()
    me = pwd.struct_passwd((WORKER_USER, "x", uid, gid, WORKER_USER, home, "/bin/sh"))
    group = grp.struct_group((WORKER_USER, "x", gid, [WORKER_USER]))
    by_uid, by_name = pwd.getpwuid, pwd.getpwnam
    by_gid, by_group = grp.getgrgid, grp.getgrnam

    def getpwuid(u):
        return me if u == uid else by_uid(u)

    def getpwnam(name):
        return me if name == WORKER_USER else by_name(name)

    def getgrgid(g):
        return group if g == gid else by_gid(g)

    def getgrnam(name):
        return group if name == WORKER_USER else by_group(name)

    pwd.getpwuid, pwd.getpwnam, grp.getgrgid, grp.getgrnam = getpwuid, getpwnam, getgrgid, getgrnam
    os.getlogin = lambda: WORKER_USER


def contain(spec: dict) -> str:
    """Apply the layer's containment to this process; returns its private folder (the cwd).

    - namespaces (inside bubblewrap), as root: a uid of its own, its own mount, IPC and
      network namespaces and a size-limited tmpfs as its folder (a NumPy worker: torch's
      folders hidden under empty ones);
    - uid (no namespaces, as root): a uid of its own and a 0700 folder; files it creates stay
      private to that uid; Landlock where the kernel has it (a NumPy worker: torch's files
      unreadable); the seccomp filter (no network, no new process, see seccomp.worker_filter);
    - limits (not root): the grader's uid, its own folder; Landlock where the kernel has it;
      the seccomp filter (also: no signal outside its process group).
    Every layer: the resource limits, no_new_privs, not dumpable, killed with the zygote.
    """
    layer, uid = spec["layer"], spec["uid"]
    home = os.path.join(spec["tmp_base"], f"w{uid if uid is not None else os.getpid()}")
    os.mkdir(home, 0o700)
    if layer == "namespaces" and uid is not None:
        # Its own mount, IPC and network namespaces: a private size-limited tmpfs as its
        # folder (filling it fills nobody else's), and no SysV/POSIX IPC object or abstract
        # socket shared with another worker or outliving this one.
        unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET)
        mount(None, "/", None, MS_REC | MS_PRIVATE)  # our mounts stay ours
        size = spec["limits"]["disk_bytes"]
        mount(
            "tmpfs",
            home,
            "tmpfs",
            MS_NOSUID | MS_NODEV,
            f"size={size},mode=0700,uid={uid},gid={uid}",
        )
        # A NumPy worker: torch's folders empty and read-only in its own view of the files.
        for folder in spec.get("withheld_paths", []):
            mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k,mode=0555")
    elif uid is not None:
        os.chown(home, uid, uid)
    os.chdir(home)
    os.environ.update(HOME=home, TMPDIR=home, TMP=home, TEMP=home)
    # its uid has no name: getpass.getuser() and the like read these instead (as the zygote's)
    os.environ.update(USER=WORKER_USER, LOGNAME=WORKER_USER)

    _apply_limits(spec, uid is not None)
    if uid is not None:  # a uid of its own: cannot signal, trace or read the zygote or others
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_NO_NEW_PRIVS, 1)  # setuid binaries stay unprivileged
    if layer != "namespaces":
        own_uid = uid is not None
        if own_uid:
            os.umask(0o077)  # fixed by the filter: what it writes in /tmp stays its own
        abi = spec["landlock"]
        if abi:
            withheld = spec.get("withheld_paths", [])
            landlock.restrict(abi, spec["read_paths"], READ_WRITE_DEVICES, home, withheld)
        if spec.get("seccomp_program"):  # built once by the zygote
            seccomp.load_program(spec["seccomp_program"])
        else:
            seccomp.worker_filter(own_uid, abi >= 6, os.getpid()).load()
    _name_own_user(home)
    return home
