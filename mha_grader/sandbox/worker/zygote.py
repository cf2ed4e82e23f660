"""The pre-loaded fork server (\"zygote\") that runs inside the sandbox.

It imports NumPy and PyTorch once, then forks one worker per request so nothing is started
twice. It never runs student code itself: each child closes the control socket before it
imports anything of the student's. Before torch comes in, it forks the NumPy questions'
zygote, which serves a second control socket the same way, for good without torch
(``withheld.py``: its workers can import NumPy and the standard library only). Requests
arrive as JSON on a SOCK_SEQPACKET control socket,
with file descriptors attached (SCM_RIGHTS):
- ``{"op": "spawn", "uid": u, "limits": {...}}`` + [channel socket, output pipe] -> ``{"pid": p}``
- ``{"op": "kill", "pid": p}`` -> ``{"status": ...}``: kills every process of the child's uid
  (double forks and daemons included), reaps the child, deletes its folder; with
  ``"wait": false`` it answers ``{}`` first and kills afterwards;
- ``{"op": "ping"}`` -> ``{}`` once every earlier request is done.
Run as: ``python -I -S -B -c "...; from worker.zygote import main; main()" CONFIG_JSON``.

Before importing anything large it says ``{"started": ...}``: the containment layer it runs,
Landlock's ABI, and what a worker contained as in that layer could and could not read (a
child contained exactly like a worker tries); ``{"ready": true}`` follows once torch is in.
The NumPy questions' zygote says ``{"ready": true, "torch_files": ...}`` on its own socket:
whether a worker contained as its are can read torch's files ("hidden" or "readable").
"""

from __future__ import annotations

import errno
import json
import os
import select
import shutil
import signal
import socket
import sys
import time

from .killer import Killer
from .linux import (
    MADV_COLLAPSE,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_PDEATHSIG,
    madvise,
    prctl,
)


def _processes(uid: int) -> int:
    """How many processes of ``uid`` still exist, zombies included (they keep a pid)."""
    n = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        n += int(fields["Uid"].split()[0]) == uid
    return n


def _kill_uid(killer: Killer, uid: int, reap) -> None:
    """Kill every process owned by ``uid`` and reap them (we are their subreaper). Inside the
    pid namespace /proc lists only the sandbox's processes, so counting them is cheap."""
    for _ in range(500):
        killer.kill_uid(uid)
        reap()
        if _processes(uid) == 0:
            return
        time.sleep(0.002)


def _kill_group(pgid: int, reap) -> None:
    """Kill the process group ``pgid`` until it is empty, reaping as we go (a zombie keeps its
    group). A worker cannot leave its group nor start processes (its seccomp filter refuses
    setsid, setpgid and fork); never ``kill -1``."""
    for _ in range(500):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        reap()
        time.sleep(0.0005)


WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")


def _remove_files_of(uid: int) -> None:
    """Delete what ``uid`` left at the top of the world-writable folders (the uid layer without
    Landlock, where a worker may write there; its files are private to it meanwhile)."""
    for folder in WORLD_WRITABLE:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"signal:{name}"
    return f"exit:{os.WEXITSTATUS(status)}"


class Zygote:
    def __init__(
        self,
        config: dict,
        ctrl: socket.socket,
        killer: Killer | None,
        landlock_abi: int,
        program: bytes | None,
    ):
        self.config = config
        self.killer = killer
        self.layer = config["layer"]
        self.landlock = landlock_abi
        self.ctrl = ctrl
        self.program = program
        self.privileged = os.geteuid() == 0
        self.statuses: dict[int, int] = {}  # reaped pid -> wait status
        self.live: dict[int, int | None] = {}  # child pid -> its uid
        self.pieces: list[tuple[int, int]] = []  # of the heap, to collapse while idle
        self.spawned = 0

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.statuses[pid] = status

    def _wait(self, pid: int, kill: bool = False) -> None:
        """Reap the worker ``pid`` (killing it first), keeping how it ended. A pid already
        reaped is never signalled: it may be another process's by now."""
        if pid in self.statuses:
            return
        if kill:  # not reaped: our child, alive or a zombie, still holds this pid
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if pid not in self.statuses:
            try:
                _, status = os.waitpid(pid, 0)
                self.statuses[pid] = status
            except ChildProcessError:
                pass

    def spawn(self, req: dict, fds: list[int]) -> dict:
        sock_fd, out_fd = fds
        uid = req["uid"] if self.privileged else None
        spec = worker_spec(self.config, uid, req["limits"], self.landlock, self.program)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                self.ctrl.close()
                from . import child  # imported (with numpy) before any fork: no cost here

                child.start(sock_fd, out_fd, spec)
            finally:
                os._exit(70)
        try:
            os.setpgid(pid, pid)  # as the child does: the group exists before we answer
        except OSError:
            pass
        os.close(sock_fd)
        os.close(out_fd)
        self.live[pid] = uid
        self.spawned += 1
        return {"pid": pid}

    def kill(self, req: dict) -> dict:
        pid = req["pid"]
        uid = self.live.pop(pid, None)
        if self.layer != "namespaces":
            if uid is not None:  # all of its uid, wherever it is (belt and braces)
                self.killer.kill_uid(uid)
            self._wait(pid, kill=True)
            _kill_group(pid, self.reap)
            if uid is not None and not self.landlock:
                _remove_files_of(uid)
        elif uid is not None:
            _kill_uid(self.killer, uid, self.reap)
            # a worker killed before it took its uid (killed right after its spawn) is not
            # reached by its uid: it is this process's child, killed as such
            self._wait(pid, kill=True)
        else:
            for target in (-pid, pid):  # its process group, then itself
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
        self._wait(pid)
        status = self.statuses.pop(pid, None)
        home = os.path.join(self.config["tmp_base"], f"w{uid if uid is not None else pid}")
        shutil.rmtree(home, ignore_errors=True)
        return {"status": None if status is None else _describe_status(status)}

    def _while_idle(self) -> None:
        """Collapse the heap one piece at a time while no request waits, once the first
        submissions are under way (started at once, its CPU would go to the batch's warm-up
        and put off the first grade); a request waits at most for one piece (a few ms)."""
        if self.spawned < COLLAPSE_AFTER:
            return
        while self.pieces and not select.select([self.ctrl], [], [], 0)[0]:
            start, length = self.pieces.pop()
            try:
                madvise(start, length, MADV_COLLAPSE)
            except OSError:
                pass

    def serve(self) -> None:
        while True:
            self._while_idle()
            try:
                msg, fds, _, _ = socket.recv_fds(self.ctrl, 1 << 16, 4)
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                raise
            if not msg:
                break  # the trusted side went away
            req = json.loads(msg)
            if req["op"] == "spawn":
                reply = self.spawn(req, fds)
            elif req["op"] == "kill" and not req.get("wait", True):
                # The end of a session: answer at once, kill while the grader moves on. Requests
                # are served in order, so the uid is dead before anything can reuse it.
                self.ctrl.send(b"{}")
                self.kill(req)
                self.reap()
                continue
            elif req["op"] == "kill":
                reply = self.kill(req)
            elif req["op"] == "ping":
                reply = {}
            else:
                break
            self.reap()
            self.ctrl.send(json.dumps(reply).encode())
        for pid in list(self.live):
            self.kill({"pid": pid})


def _warm_up_numpy(np) -> None:
    """Run once what every worker will run, so the lazy first-call set-up of NumPy is paid
    here and shared by every fork instead of paid per submission."""
    x = np.random.default_rng(0).standard_normal((4, 8))
    np.exp(x - x.max(axis=-1, keepdims=True)) @ x.T


def _warm_up_torch(np, torch) -> None:
    """The same for torch's module, in the layouts and dtypes the hidden tests use."""
    x = np.random.default_rng(0).standard_normal((4, 8))
    for dtype in (torch.float32, torch.float64):
        for batch_first in (False, True):
            mha = torch.nn.MultiheadAttention(
                8, 2, bias=False, batch_first=batch_first, dtype=dtype
            )
            t = torch.as_tensor(x, dtype=dtype).unsqueeze(0 if batch_first else 1)
            with torch.no_grad():
                mha(t, t, t, need_weights=True, average_attn_weights=False)
            mha.state_dict()
            mha.in_proj_weight.detach().to(torch.float64).numpy()


def _fork_numpy_zygote(config: dict, killer: Killer | None, abi: int, program) -> None:
    """Fork the zygote of the NumPy questions' workers while torch is not in this process:
    it serves its own control socket, with the NumPy-only wall (``withheld``) installed for
    good; where the layer allows, its workers cannot even read torch's files (``contain``).
    It dies with this zygote."""
    fd = config["numpy_ctrl_fd"]
    pid = os.fork()
    if pid == 0:
        try:
            os.close(config["ctrl_fd"])  # the other zygote's socket is not its own
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            prctl(PR_SET_CHILD_SUBREAPER, 1)
            from . import withheld

            killer = Killer() if killer is not None else None  # its own: replies not shared
            torch_folders = withheld.locations()  # before the wall stands: nothing imported
            hidden = torch_folders + withheld.packages()  # torch's first: _withheld_check
            withheld.install(withheld.ALLOWED, withheld.REFUSED)
            numpy_config = {**config, "withheld_paths": hidden}
            ctrl = socket.socket(fileno=fd)
            zygote = Zygote(numpy_config, ctrl, killer, abi, program)
            files = "absent"
            if torch_folders:
                files = _withheld_check(numpy_config, killer, abi, program)
            reply = {"ready": True, "privileged": zygote.privileged, "torch_files": files}
            reply["pid"] = os.getpid()  # as this pid namespace numbers it
            ctrl.send(json.dumps(reply).encode())
            zygote.serve()
        finally:
            os._exit(0)
    os.close(fd)


HUGE_PAGE = 1 << 21
COLLAPSE_AFTER = 6  # workers spawned (three submissions) before the heap is collapsed


def _heap_pieces() -> list[tuple[int, int]]:
    """The 2 MiB pieces of the heap that torch's import left (~140 MB), to be backed by huge
    pages (``madvise(MADV_COLLAPSE)``, one piece at a time while the zygote is idle).

    Every fork copies the page tables of this memory and every worker's exit frees them: with
    2 MiB pages that is ~70 entries instead of ~35,000, about 2 ms less CPU per worker. Making
    them costs about 0.8 s of CPU, so only a zygote that will fork hundreds of workers does it
    (``config["collapse"]``). Best effort: a kernel without MADV_COLLAPSE (before 6.1) or
    without free huge pages changes nothing.
    """
    pieces = []
    with open("/proc/self/maps") as f:
        regions = [line.split() for line in f]
    for fields in regions:
        private_writable = fields[1].startswith("rw") and fields[1].endswith("p")
        if not private_writable or fields[4] != "0" or fields[5:] not in ([], ["[heap]"]):
            continue  # file-backed, shared, stacks and other special mappings stay as they are
        start, end = (int(x, 16) for x in fields[0].split("-"))
        start, end = -(-start // HUGE_PAGE) * HUGE_PAGE, end // HUGE_PAGE * HUGE_PAGE
        pieces += [(at, HUGE_PAGE) for at in range(start, end, HUGE_PAGE)]
    return pieces


def worker_spec(
    config: dict, uid: int | None, limits: dict, landlock_abi: int, program: bytes | None = None
) -> dict:
    """What ``contain`` needs to contain one worker (``program``: its seccomp filter, built)."""
    return {
        "seccomp_program": program,
        "layer": config["layer"],
        "uid": uid,
        "limits": limits,
        "tmp_base": config["tmp_base"],
        "hide_paths": config["hide_paths"],
        "read_paths": config["read_paths"],
        "withheld_paths": config.get("withheld_paths", []),
        "landlock": landlock_abi,
    }


def _prebuilt_filter(layer: str, landlock_abi: int) -> bytes | None:
    """The workers' seccomp filter as BPF, when it is the same for every worker."""
    if layer == "namespaces":
        return None
    from . import seccomp

    own_uid, scoped = layer == "uid", landlock_abi >= 6
    if seccomp.needs_pid(own_uid, scoped):
        return None
    return seccomp.worker_filter(own_uid, scoped).export()


def _can_read(path: str) -> bool:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(1)
        return True
    except OSError:
        return False


def _self_check(
    config: dict, killer: Killer | None, landlock_abi: int, program: bytes | None
) -> dict:
    """Contain a child exactly as a worker is contained, and let it try: which of the paths it
    must read it cannot, which of the trusted paths it can, whether it can open a socket."""
    check = config["check"]
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            os.setpgid(0, 0)  # its own group, as a worker's (which calls setsid)
            from .contain import contain

            uid = check["uid"] if os.geteuid() == 0 else None
            contain(worker_spec(config, uid, check["limits"], landlock_abi, program))
            try:
                socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
                network = True
            except OSError:
                network = False
            report = {
                "unreadable": [p for p in check["must_read"] if not _can_read(p)],
                "readable": [p for p in check["must_not_read"] if _can_read(p)],
                "network": network,
            }
            os.write(write_fd, json.dumps(report).encode())
        except BaseException as e:
            os.write(write_fd, json.dumps({"error": f"{type(e).__name__}: {e}"}).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        data = f.read()
    uid = check["uid"] if os.geteuid() == 0 else None
    if killer is not None and uid is not None:
        killer.kill_uid(uid)
    _kill_group(pid, lambda: _reap_quietly(pid))
    home = os.path.join(config["tmp_base"], f"w{uid if uid is not None else pid}")
    shutil.rmtree(home, ignore_errors=True)
    try:
        return json.loads(data)
    except ValueError:
        return {"error": "the check child stopped without a report"}


def _withheld_check(config: dict, killer: Killer | None, abi: int, program) -> str:
    """Whether a NumPy worker, contained exactly as one, can read a file of torch's: "hidden"
    (the layer hides them) or "readable" (the import wall alone stands)."""
    probe = os.path.join(config["withheld_paths"][0], "__init__.py")
    check = {**config, "check": {**config["check"], "must_read": [], "must_not_read": [probe]}}
    report = _self_check(check, killer, abi, program)
    if "error" in report:
        return "unknown"
    return "readable" if report.get("readable") else "hidden"


def _reap_quietly(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def main() -> None:
    config = json.loads(sys.argv[1])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # never outlive the grader
    prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of a child come back here to be reaped
    layer = config["layer"]
    killer = Killer() if os.geteuid() == 0 else None  # while this process is still small
    started: dict = {"started": True, "layer": layer, "landlock": 0}
    program = None
    if layer != "namespaces":
        prctl(PR_SET_DUMPABLE, 0)  # a worker sharing our uid cannot read our memory
        from . import landlock, seccomp

        try:
            seccomp.library()  # loaded once, before any fork
            started["landlock"] = abi = landlock.abi_version()  # 0 where the kernel lacks it
            program = _prebuilt_filter(layer, abi)
            started["check"] = _self_check(config, killer, abi, program)
        except OSError as e:
            started["error"] = str(e)
    ctrl = socket.socket(fileno=config["ctrl_fd"])
    ctrl.send(json.dumps(started).encode())
    if config.get("probe") or "error" in started:
        return
    import numpy  # noqa: F401  (the point: imported once, shared by every fork)

    from . import child  # noqa: F401  (and the worker's own code)

    _warm_up_numpy(numpy)
    if config.get("numpy_ctrl_fd") is not None:  # before torch is in this process
        _fork_numpy_zygote(config, killer, started["landlock"], program)
    import torch

    torch.set_num_threads(1)
    _warm_up_torch(numpy, torch)
    zygote = Zygote(config, ctrl, killer, started["landlock"], program)
    if config.get("collapse"):
        zygote.pieces = _heap_pieces()
    zygote.ctrl.send(json.dumps({"ready": True, "privileged": zygote.privileged}).encode())
    zygote.serve()
