"""Run a command in a kernel that refuses namespaces, as a default Docker container does.

Not a mock: the command runs under a real seccomp filter that refuses ``unshare``, ``setns``,
``mount``, ``umount2``, ``pivot_root`` and every namespace flag of ``clone`` (EPERM), and makes
``clone3`` look absent (ENOSYS), with the capability bounding set cut to Docker's default
(0xa80425fb: no SYS_ADMIN, SYS_PTRACE, SYS_RESOURCE...). That is what Gradescope's autograder
containers, CI containers and many servers give a grader. Optionally also as another user,
and without Landlock (as on a kernel that lacks it).

    from refusing_kernel import wrap
    subprocess.run(wrap(["mha-grade", "one", "alice", "-o", "out"], user="nobody"))

or from a shell: ``python tests/refusing_kernel.py [--user NAME] [--no-landlock] -- CMD...``.
Switching user and cutting the bounding set need root; as another user the command only gets
the filter (and no_new_privs, which installing a filter without CAP_SYS_ADMIN requires).
"""

from __future__ import annotations

import argparse
import errno
import os
import pwd
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Docker's default capabilities; their bounding set is 0xa80425fb.
DOCKER_CAPS = (
    "chown",
    "dac_override",
    "fowner",
    "fsetid",
    "kill",
    "setgid",
    "setuid",
    "setpcap",
    "net_bind_service",
    "net_raw",
    "sys_chroot",
    "mknod",
    "audit_write",
    "setfcap",
)
DOCKER_BOUNDING_SET = 0xA80425FB
LANDLOCK_CALLS = ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self")


def available() -> str | None:
    """Why the harness cannot run here (None when it can)."""
    if sys.platform != "linux":
        return "needs Linux"
    if shutil.which("setpriv") is None:
        return "needs setpriv (util-linux)"
    try:
        from mha_grader.sandbox.worker import seccomp

        seccomp.library()
    except OSError as e:
        return str(e)
    return None


def wrap(argv: Sequence[str], *, user: str | int | None = None, landlock: bool = True) -> list[str]:
    """The argv that runs ``argv`` in the refusing kernel (as ``user``; ``landlock=False``:
    Landlock's calls fail with ENOSYS too)."""
    cmd = [sys.executable, str(Path(__file__).resolve())]
    if user is not None:
        cmd += ["--user", str(user)]
    if not landlock:
        cmd.append("--no-landlock")
    return [*cmd, "--", *argv]


def _install_filter(landlock: bool) -> None:
    sys.path.insert(0, str(ROOT))
    from mha_grader.sandbox.worker.seccomp import Filter

    f = Filter(no_new_privs=os.geteuid() != 0)  # as Docker: root keeps setuid programs working
    f.refuse_namespaces()
    if not landlock:
        for call in LANDLOCK_CALLS:
            f.refuse(call, errno.ENOSYS)
    f.load()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", help="run as this user (name or uid; needs root)")
    parser.add_argument("--no-landlock", action="store_true", help="refuse Landlock too")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    _install_filter(landlock=not args.no_landlock)
    setpriv = ["setpriv"]
    if os.geteuid() == 0:
        setpriv += ["--bounding-set", "-all," + ",".join(f"+{c}" for c in DOCKER_CAPS)]
    if args.user is not None:
        entry = pwd.getpwuid(int(args.user)) if args.user.isdigit() else pwd.getpwnam(args.user)
        setpriv += [f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
        os.environ.update(HOME=entry.pw_dir, USER=entry.pw_name, LOGNAME=entry.pw_name)
    os.execvp("setpriv", [*setpriv, "--", *args.command])


if __name__ == "__main__":
    main()
