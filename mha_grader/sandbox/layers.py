"""Containment layers and limits: the names every part of the grader uses for the sandbox.

Three layers, strongest first (docs/contract.md §7; how each one contains student code is in
docs/containment.md): ``namespaces`` (bubblewrap), ``uid`` (no namespaces, as root: a uid of
its own per worker) and ``limits`` (no namespaces, not root). ``zygote`` starts the strongest
one this machine allows.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from mha_check import limits as shared

LAYERS = ("namespaces", "uid", "limits")  # strongest first
REQUIRE_ENV = "MHA_REQUIRE_SANDBOX"


class SandboxError(RuntimeError):
    """The grader could not start or talk to its sandbox (a grader failure, not the student's)."""


class LayerUnavailable(SandboxError):
    """No containment layer (or none as strong as required) could start; ``str`` is one line."""


@dataclass(frozen=True)
class LayerInfo:
    """The containment layer in force, and why the stronger ones were not."""

    name: str
    per_worker_uid: bool
    landlock: int = 0  # Landlock ABI version in force (0: none)
    trusted_readable: bool = False  # limits without Landlock: student code can read the checkout
    fallbacks: tuple[str, ...] = ()  # "namespaces: <why not>", ...
    changes: tuple[str, ...] = field(default=(), compare=False)  # permissions fixed at start

    def describe(self) -> str:
        """One plain line for the terminal."""
        if self.name == "namespaces":
            what = "bubblewrap: a private filesystem view, no network, " + (
                "a uid of its own per worker" if self.per_worker_uid else "an unprivileged uid"
            )
        else:
            who = "as a uid of its own" if self.per_worker_uid else "as this user"
            guard = f"Landlock ABI {self.landlock}" if self.landlock else "no Landlock"
            what = f"each worker runs {who} with rlimits, seccomp and {guard}"
            if self.trusted_readable:
                what += "; student code can read and write what this user can"
        why = f" ({'; '.join(self.fallbacks)})" if self.fallbacks else ""
        return f"sandbox: {self.name}: {what}{why}"


def required_layer(explicit: str | None = None) -> str | None:
    """The weakest layer grading may use: ``explicit`` (--require-sandbox), else the
    environment variable MHA_REQUIRE_SANDBOX, else None (any)."""
    value = explicit if explicit is not None else os.environ.get(REQUIRE_ENV) or None
    if value is not None and value not in LAYERS:
        raise LayerUnavailable(
            f"{REQUIRE_ENV}={value!r} names no sandbox layer (one of: {', '.join(LAYERS)})"
        )
    return value


def candidate_layers(require: str | None = None) -> tuple[str, ...]:
    """The layers this process may try, strongest first: root never runs student code under
    its own uid (no ``limits``), and nobody else can hand out uids (no ``uid``)."""
    mine = ("namespaces", "uid") if os.geteuid() == 0 else ("namespaces", "limits")
    if require is not None:
        mine = tuple(layer for layer in mine if LAYERS.index(layer) <= LAYERS.index(require))
    return mine


@dataclass(frozen=True)
class Limits:
    """Per-worker limits; the wall-clock ones are enforced by the trusted side (grading/
    session.py). The defaults are defined once in ``mha_check/limits.py``, which mha-check
    applies to the student's code too."""

    call_timeout: float = shared.CALL_SECONDS  # seconds of wall clock per call into student code
    import_timeout: float = shared.IMPORT_SECONDS  # per student module import
    submission_timeout: float = 60.0  # all calls and imports of one submission together
    cpu_seconds: int = shared.CPU_SECONDS
    memory_bytes: int = shared.MEMORY_BYTES  # address space on top of what torch already maps
    processes: int = shared.PROCESSES  # threads count too
    file_bytes: int = shared.FILE_BYTES
    open_files: int = shared.OPEN_FILES
    disk_bytes: int = 64 << 20  # the worker's private folder (its own tmpfs, as root)
    output_bytes: int = 4096  # captured stdout/stderr kept per submission

    def for_worker(self) -> dict:
        keys = ("cpu_seconds", "memory_bytes", "processes", "file_bytes", "open_files")
        keys += ("disk_bytes",)
        return {k: v for k, v in asdict(self).items() if k in keys}
