"""Which part of a class one grading run takes: ``mha-grade batch DIR -o OUT --shard I/N|auto``.

A class is cut into N stable parts by a hash of each student id, so the same student always
lands in the same part whatever else is in the folder, and any scheduler that runs N copies of
one command (a Slurm job array, a Kubernetes Indexed Job) can grade the class in parallel.
``auto`` reads the part from the scheduler's environment:

- Slurm job array: ``SLURM_ARRAY_TASK_ID`` relative to ``SLURM_ARRAY_TASK_MIN`` (arrays may start
  at any index, and step by ``SLURM_ARRAY_TASK_STEP``), out of ``SLURM_ARRAY_TASK_COUNT``;
- Kubernetes Indexed Job: ``JOB_COMPLETION_INDEX`` (from 0), out of ``MHA_SHARD_COUNT``, which the
  Job's manifest sets to its ``completions`` (Kubernetes does not pass that number on itself).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

COUNT_VARIABLE = "MHA_SHARD_COUNT"


class ShardError(ValueError):
    """A --shard value or scheduler environment that names no valid part; the message says why."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1 .. count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, student: str) -> bool:
        return shard_of(student, self.count) == self.index


def shard_of(student: str, count: int) -> int:
    """The part (1 .. count) a student id belongs to: a hash, so stable across runs and machines."""
    digest = hashlib.sha256(student.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def _int(env: Mapping[str, str], name: str) -> int:
    raw = env.get(name, "").strip()
    try:
        return int(raw)
    except ValueError:
        raise ShardError(f"{name}={raw!r} is not a whole number") from None


def from_environment(env: Mapping[str, str] | None = None) -> Shard:
    """The part a Slurm array task or a Kubernetes indexed pod should grade."""
    env = os.environ if env is None else env
    if "SLURM_ARRAY_TASK_ID" in env:
        for name in ("SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"):
            if name not in env:
                raise ShardError(f"SLURM_ARRAY_TASK_ID is set but {name} is not")
        task, first = _int(env, "SLURM_ARRAY_TASK_ID"), _int(env, "SLURM_ARRAY_TASK_MIN")
        count = _int(env, "SLURM_ARRAY_TASK_COUNT")
        step = _int(env, "SLURM_ARRAY_TASK_STEP") if "SLURM_ARRAY_TASK_STEP" in env else 1
        offset, rest = divmod(task - first, max(step, 1))
        if rest or not 0 <= offset < count:
            raise ShardError(
                f"Slurm array task {task} is not one of {count} evenly spaced tasks from {first} "
                f"(step {step}); use a plain range such as --array=1-{count}, or pass --shard I/N"
            )
        return _checked(offset + 1, count)
    if "JOB_COMPLETION_INDEX" in env:
        if COUNT_VARIABLE not in env:
            raise ShardError(
                f"JOB_COMPLETION_INDEX is set but {COUNT_VARIABLE} is not: set it in the Job's "
                "manifest to the number of completions"
            )
        return _checked(_int(env, "JOB_COMPLETION_INDEX") + 1, _int(env, COUNT_VARIABLE))
    raise ShardError(
        "--shard auto found no scheduler: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
        "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; pass --shard I/N instead"
    )


def _checked(index: int, count: int) -> Shard:
    if count < 1:
        raise ShardError(f"the number of shards must be at least 1, not {count}")
    if not 1 <= index <= count:
        raise ShardError(f"shard {index} is outside 1..{count}")
    return Shard(index, count)


def parse(value: str, env: Mapping[str, str] | None = None) -> Shard:
    """``I/N`` (I from 1 to N) or ``auto``."""
    value = value.strip()
    if value.lower() == "auto":
        return from_environment(env)
    m = re.fullmatch(r"(\d+)\s*/\s*(\d+)", value)
    if not m:
        raise ShardError(f"--shard {value!r}: expected I/N (such as 2/8, I from 1 to N) or auto")
    return _checked(int(m.group(1)), int(m.group(2)))
