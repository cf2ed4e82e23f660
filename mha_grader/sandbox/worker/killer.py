"""A small root helper that kills every process of a uid, forked before torch is imported.

Killing a worker's whole tree means signalling -1 *as its uid* (which reaches all its
processes, double forks and new sessions included, and nothing else), so it needs a process
that can take that uid. Forking that process from the zygote would copy torch's page tables
each time; this helper is forked once while the zygote is still small, and forks cheaply.
"""

from __future__ import annotations

import os
import signal
import struct

from .linux import PR_SET_PDEATHSIG, prctl


class Killer:
    def __init__(self) -> None:
        to_r, to_w = os.pipe()
        back_r, back_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(to_w)
                os.close(back_r)
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # never outlive the zygote
                _serve(to_r, back_w)
            finally:
                os._exit(0)
        os.close(to_r)
        os.close(back_w)
        self.pid, self._to, self._back = pid, to_w, back_r

    def kill_uid(self, uid: int) -> None:
        """Send SIGKILL to every process of ``uid``; returns once sent."""
        os.write(self._to, struct.pack("<I", uid))
        if os.read(self._back, 1) != b"k":
            raise OSError("the killer helper stopped")


def _serve(requests: int, replies: int) -> None:
    while True:
        data = os.read(requests, 4)
        if len(data) != 4:
            return
        (uid,) = struct.unpack("<I", data)
        helper = os.fork()
        if helper == 0:
            try:
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                for _ in range(3):  # a fork bomb may add processes while we kill
                    os.kill(-1, signal.SIGKILL)  # never the caller itself
            finally:
                os._exit(0)
        os.waitpid(helper, 0)
        os.write(replies, b"k")
