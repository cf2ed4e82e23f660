"""The trusted side of one submission's code: a session of contained workers, and proxies.

``WorkerSession`` owns one contained worker at a time for one submission (``link.WorkerLink``).
It sends the student's files as text over the channel (they are never written where another
worker can read them), imports each module under a wall-clock timeout, and turns each call into
a request whose reply the link checks (``replies``) before this module reads it. A call that hangs
or kills the worker costs that call only: the worker is killed (its whole process tree) and the
next call gets a fresh one with the same files. A module whose import hangs or crashes is
replaced by a placeholder in later workers, so the other file still imports.

What the student's code prints is captured. Output printed while the first worker imports the
files (before any hidden input exists in it) is kept (truncated) for the feedback; output printed
later is only counted, because it could echo the hidden inputs. For the same reason a call's
exception is told in the grader's words (``shown``): its kind and the line it was raised at, read
from the submitted file here; ``StudentRaised.message`` keeps the worker's text for trusted
checks (e.g. "the ValueError names the bad head count") and is never shown.

A reply the grader's own worker code could not have sent means the student's code wrote to the
grader's channel: a protocol violation. It costs the student, never the grader: the worker and
every process of its uid are killed at once, the session ends (later calls fail with the same
message) and the submission's status says so.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mha_check.questions import (
    CODE_QUESTIONS,
    IMPORT_REFUSED,
    IMPORTS,
    NUMPY_BROKEN,
    NUMPY_QUESTIONS,
)

from .. import errors, shown
from ..calls import CalleeCall, Observed
from ..sandbox import Limits, SandboxError, Zygote
from ..sandbox.worker import wire
from . import replies
from .link import Answer, LinkClosed, LinkTimeout, LinkViolation, WorkerLink

MODULES = ("multihead", "crosscheck")  # import order: crosscheck imports multihead
COMPILE_HERE_CHARS = 200_000  # files compiled on the trusted side before any worker starts
NUMPY_MODULE = "multihead"  # the file of the NumPy questions, all a NumPy worker loads
# The public probe's share of a call's time limit: the probe is best effort (a hang in it tells
# nothing, and the hidden tests meet the hang again and charge it), so a submission that hangs
# does not pay the full limit for it in each worker.
PROBE_SHARE = 0.5


@dataclass
class Budget:
    """The seconds left of a submission's time limit, shared by all of its workers."""

    left: float


@dataclass
class SessionLog:
    """What happened while running one submission's code, for status and feedback."""

    import_output: str = ""  # shown to the student (truncated)
    import_output_truncated: int = 0  # bytes dropped
    call_output_bytes: int = 0  # printed during hidden-test calls: counted, never shown
    warned: bool = False  # warnings during hidden-test calls (never shown, nor taken as output)
    timeouts: list[str] = field(default_factory=list)  # "softmax", "import multihead", ...
    crashes: list[str] = field(default_factory=list)
    import_errors: dict[str, str] = field(default_factory=dict)  # module -> message
    budget_exhausted: bool = False
    protocol_violation: str = ""  # what the worker sent that it never should (for the log)


class WorkerSession:
    """Run one submission's modules in contained workers; make proxies for its functions.

    ``files`` maps a module name (``multihead``, ``crosscheck``) to its source text; a missing
    module gets a placeholder so the other still imports. Use as a context manager: the worker
    and everything it started are always killed at the end.
    """

    def __init__(
        self,
        zygote: Zygote,
        files: Mapping[str, str],
        limits: Limits | None = None,
        missing_reasons: Mapping[str, str] | None = None,
        kind: str = "full",
        parent: WorkerSession | None = None,
    ):
        """``kind`` "numpy": the workers come from the NumPy questions' zygote (NumPy and the
        standard library only) and load ``multihead`` alone; ``parent``: the session this one
        serves the NumPy questions for (its log, time budget and inputs' record are shared)."""
        self.zygote = zygote
        self.kind = kind
        self.parent = parent
        self.files = dict(files)
        self.limits = limits or Limits()
        self.log = parent.log if parent else SessionLog()
        self.functions: dict[str, set[str]] = {}  # module -> public callables after import
        # functions a call of which changed its inputs
        self.modified_inputs: set[str] = parent.modified_inputs if parent else set()
        self.broken: dict[str, str] = dict(missing_reasons or {})  # module -> reason
        # (module, func) -> why it is not called again (it hung, or took all the memory): in
        # every worker of the submission, since it is the same code (a multi_head_attention
        # that hung for a NumPy question is not waited for again beside torch)
        self.skipped: dict[tuple[str, str], errors.StudentCodeError] = (
            parent.skipped if parent else {}
        )
        self._worker: WorkerLink | None = None
        self._seq = 0
        self.budget = parent.budget if parent else Budget(self.limits.submission_timeout)
        self._grader_failure: str | None = None  # the sandbox itself failed (not the student)
        self.ended: errors.ProtocolViolation | None = None  # set by a protocol violation
        self.door = (
            parent.door
            if parent
            else shown.Door({f"{m}.py": text for m, text in self.files.items()})
        )
        self._output_phase = "import"
        self._started = False
        self._clean: WorkerSession | None = None  # for ``fresh`` calls, started when needed
        self._numpy: WorkerSession | None = None  # for the NumPy questions, started when needed
        self._diagnosis: WorkerSession | None = None  # for the diagnosis (``diagnosis_env``)
        self._inputs_sent = False  # a call has carried the grader's inputs to a worker
        self.last_calls: list[CalleeCall] = []  # of the latest observed call
        self.last_complete = True

    @property
    def grader_failure(self) -> str | None:
        """Why the grader's own sandbox failed (not the student), in any worker of the session."""
        return self._grader_failure

    @grader_failure.setter
    def grader_failure(self, value: str | None) -> None:
        self._grader_failure = value
        if self.parent is not None and value is not None:
            self.parent.grader_failure = value

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> WorkerSession:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start a worker and import the student's modules (each under its own timeout). A
        protocol violation while importing ends the session here: later calls say so. A file
        that does not even compile is told so without a worker, and when no file is left to
        import, no worker starts at all."""
        if self.parent is None and self.kind == "full":
            self._compile_first()
        if all(m in self.broken for m in self.files):
            return
        try:
            self._ensure_worker()
        except errors.ProtocolViolation:
            pass

    def _compile_first(self) -> None:
        """Compile each file here, as the worker's import would (from its bytes, so that a coding
        declaration counts): a SyntaxError is the file's, with the same words and line the
        worker would give, and costs no worker. Compiling runs none of the student's code; a
        file the compiler cannot judge in bounds is left to the worker."""
        for module, text in self.files.items():
            if module in self.broken or len(text) > COMPILE_HERE_CHARS:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # SyntaxWarnings are the worker's to see
                    compile(text.encode("utf-8"), f"{module}.py", "exec", dont_inherit=True)
            except SyntaxError as e:
                record = replies.syntax_error_record(e, f"{module}.py")
                why = replies.import_error_text(record, self.door)
                self.broken[module] = f"{module}.py could not be imported: {why}"
                self.log.import_errors[module] = self.broken[module]
            except Exception:  # (RecursionError, MemoryError...) the worker will tell
                continue

    def close(self) -> None:
        """Kill the worker and its process tree (the zygote finishes that in the background)."""
        for sub in (self._clean, self._numpy, self._diagnosis):
            if sub is not None:
                sub.close()
        self._clean = self._numpy = self._diagnosis = None
        if self._worker is not None:
            try:
                self._worker.retire(wait=False)
            except SandboxError:  # the zygote is gone, and its workers with it
                self._worker.close_output()
            self._worker = None

    def _ensure_worker(self) -> WorkerLink:
        if self.parent is not None and self.parent.ended is not None:
            raise self.parent.ended
        if self.ended is not None:
            raise self.ended
        if self._worker is not None and not self._worker.dead:
            return self._worker
        if self._worker is not None:
            self._worker.retire()
        spawner = self.zygote.numpy if self.kind == "numpy" else self.zygote
        worker = WorkerLink(spawner, self.limits, self._record_output)
        self._worker = worker
        present = {m: s for m, s in self.files.items() if m not in self.broken}
        placeholders = {m: r for m, r in self.broken.items()}
        # Import-time output is shown once; a restarted worker prints it again: count only.
        self._output_phase = "call" if self._started else "import"
        self._started = True
        load = {"op": "load", "files": present, "placeholders": placeholders}
        load["imports"] = {"table": {f: list(a) for f, a in IMPORTS.items()}}
        load["imports"]["message"] = IMPORT_REFUSED
        try:  # no student code runs before this succeeds: a failure here is the grader's
            reply = self._exchange(worker, load, 10.0, "load")
        except errors.StudentCodeError as e:
            if self.log.budget_exhausted:
                raise
            self.ended = None  # the worker never ran student code: not the student's doing
            raise SandboxError(f"a worker could not be set up: {e}") from None
        if not reply["ok"]:
            worker.retire()
            raise SandboxError(f"a worker could not be set up: {reply.get('error')!r:.300}")
        for module in MODULES:
            if module not in present:
                continue
            self._import(worker, module)
            if self.ended is not None:
                raise self.ended
            if worker.dead:  # hung, crashed or half-imported: a fresh worker without it
                if all(m in self.broken for m in self.files):
                    # Nothing is left to import: every call is told its file's error without
                    # a worker (``_ready``), so none is started.
                    return worker
                return self._ensure_worker()
        self._output_phase = "call"
        return worker

    def _import(self, worker: WorkerLink, module: str) -> None:
        label = f"{module}.py"
        # No input of the grader's has reached any worker of this session yet: the error cannot
        # carry one, and is told in full.
        first = not self._inputs_sent and not (self.parent and self.parent._inputs_sent)
        try:
            reply = self._exchange(
                worker, {"op": "import", "module": module}, self.limits.import_timeout, "import"
            )
        except errors.CallTimeout:
            self.log.timeouts.append(f"import {label}")
            limit = min(self.limits.import_timeout, self.limits.submission_timeout)
            self.broken[module] = f"importing {label} did not finish in time (limit {limit:g} s)"
        except errors.WorkerCrashed as e:
            self.log.crashes.append(f"import {label}")
            self.broken[module] = f"importing {label} stopped the worker ({e})"
        except errors.StudentCodeError as e:
            self.broken[module] = f"importing {label} failed: {e}"
        else:
            if reply["ok"]:
                self.functions[module] = set(reply["functions"])
                return
            why = replies.import_error_text(reply["error"], self.door, self.kind == "numpy")
            self.broken[module] = f"{label} could not be imported: {why}"
            if self.kind == "numpy":
                self.broken[module] = NUMPY_BROKEN.format(label=label, why=why)
            if not first:  # a worker restarted after calls: its error could carry their inputs
                self.broken[module] = f"{label} could not be imported again after a restart"
        self.log.import_errors[module] = self.broken[module]
        self.functions.pop(module, None)
        if not worker.dead:
            # The module is half-imported in this worker: start again without it. Not waited
            # for (as at a session's end): the zygote answers at once and kills it before it
            # serves the next request, the next worker's spawn included, so nothing of it runs
            # beside the next worker; the grader does not wait for the kill's round trip.
            worker.retire(wait=False)

    # -- one exchange --------------------------------------------------------------------------

    def _exchange(
        self,
        worker: WorkerLink,
        request: dict,
        timeout: float,
        op: str,
        answer: Answer | None = None,
    ) -> dict:
        """Send a request, wait for its reply (checked: ``replies.checked``); raises CallTimeout,
        WorkerCrashed, BadResult or ProtocolViolation."""
        if self.budget.left <= 0:
            self.log.budget_exhausted = True
            raise errors.CallTimeout(
                f"not run: the submission used up its total time limit "
                f"({self.limits.submission_timeout:g} s)"
            )
        self._seq += 1
        request["seq"] = self._seq
        if request.get("op") in ("call", "many", "probe"):
            self._inputs_sent = True
            if self.parent is not None:
                self.parent._inputs_sent = True
        payload = wire.encode(request)
        by_budget = self.budget.left < timeout
        timeout = min(timeout, self.budget.left)
        started = time.monotonic()
        try:
            return worker.exchange(payload, self._seq, started + timeout, op, answer)
        except LinkViolation as e:
            raise self._violation(worker, e.what) from None
        except LinkClosed:
            raise self._crashed(worker) from None
        except LinkTimeout:
            if by_budget:
                self.log.budget_exhausted = True
                raise errors.CallTimeout(
                    "ran out of time: the submission used up its total time limit "
                    f"({self.limits.submission_timeout:g} s)"
                ) from None
            raise errors.CallTimeout(
                f"ran out of time: did not finish within {timeout:.3g} s (an endless loop?)"
            ) from None
        finally:
            self.budget.left -= time.monotonic() - started

    def _violation(self, worker: WorkerLink, what: str) -> errors.ProtocolViolation:
        """End the session: kill the worker's whole uid now, refuse every later call."""
        self.log.protocol_violation = self.log.protocol_violation or what
        self.ended = errors.ProtocolViolation(replies.PROTOCOL_VIOLATION)
        if self.parent is not None and self.parent.ended is None:
            self.parent.ended = self.ended  # the student's doing, in either worker
        worker.retire()
        return self.ended

    def _crashed(self, worker: WorkerLink) -> errors.WorkerCrashed:
        # The exit status and most signals are the student's code's choice: only the causes the
        # grader itself produces are named.
        status = worker.end_status or ""
        if status.startswith("exit:"):
            how = "the process exited (sys.exit or os._exit?)"
        elif status == "signal:SIGXCPU":
            how = "it used up its CPU time limit"
        elif status in ("signal:SIGKILL", "signal:SIGSEGV", "signal:SIGABRT"):
            how = f"the process was killed ({status[7:]}: memory limit or a crash?)"
        elif status.startswith("signal:"):
            how = "the process was killed by a signal"
        else:
            how = "the process ended"
        return errors.WorkerCrashed(f"the worker running your code stopped: {how}")

    def _record_output(self, chunk: bytes) -> None:
        if self.parent is not None and self._output_phase == "import":
            return  # what the file prints when imported is told once, from the other worker
        if self._output_phase == "call":
            self.log.call_output_bytes += len(chunk)
            return
        room = self.limits.output_bytes - len(self.log.import_output.encode())
        if room > 0:
            self.log.import_output += chunk[:room].decode(errors="replace")
        self.log.import_output_truncated += max(0, len(chunk) - max(room, 0))

    # -- calls -------------------------------------------------------------------------------

    def numpy_session(self) -> WorkerSession:
        """The session of the NumPy questions' workers (NumPy and the standard library only,
        ``worker/withheld.py``), started at its first call; a NumPy session is its own."""
        if self.kind == "numpy":
            return self
        if self._numpy is None:
            files = {m: t for m, t in self.files.items() if m == NUMPY_MODULE}
            broken = {m: r for m, r in self.broken.items() if m == NUMPY_MODULE}
            self._numpy = WorkerSession(
                self.zygote, files, self.limits, broken, kind="numpy", parent=self
            )
        return self._numpy

    def routed(self, module: str, func: str) -> WorkerSession:
        """The session that calls ``module.func``: a NumPy question's workers, or this one's."""
        if module == NUMPY_MODULE and func in NUMPY_QUESTIONS:
            return self.numpy_session()
        return self

    def available(self, module: str, func: str) -> str | None:
        """Why ``module.func`` cannot be called, or None when it can."""
        session = self.routed(module, func)
        if session is not self:
            if session.ended is None and session._worker is None and module not in session.broken:
                try:
                    session.start()
                except SandboxError as e:
                    self.grader_failure = str(e)
                    raise
            return session.available(module, func)
        return self._available_here(module, func)

    def _available_here(self, module: str, func: str) -> str | None:
        if module in self.broken:
            return self.broken[module]
        if func not in self.functions.get(module, set()):
            return f"{module}.py defines no function `{func}`"
        return None

    def call(
        self,
        module: str,
        func: str,
        args: tuple,
        kwargs: dict,
        observe: tuple[str, ...] = (),
        answer: Answer | None = None,
    ) -> Any:
        """Call the student's ``module.func`` in the worker; raises errors.StudentCodeError,
        or SandboxError when the grader's own sandbox failed (also kept in ``grader_failure``,
        since a test may swallow it)."""
        try:
            return self._call(module, func, args, kwargs, observe, answer)
        except SandboxError as e:
            self.grader_failure = str(e)
            raise

    def _ready(self, module: str, func: str) -> WorkerLink:
        """The worker, ready to call ``module.func``; raises what a call would meet first (the
        session ended, the function skipped after a timeout, no time left, no such function)."""
        if self.ended is not None:
            raise self.ended
        if (module, func) in self.skipped:
            raise self.skipped[(module, func)]
        if module in self.broken:  # no worker needed to say so
            raise errors.MissingFunction(self.broken[module])
        try:
            worker = self._ensure_worker()
        except errors.ProtocolViolation:
            raise
        except errors.StudentCodeError as e:  # out of time budget while restarting
            raise errors.CallTimeout(str(e)) from None
        reason = self._available_here(module, func)
        if reason is not None:
            raise errors.MissingFunction(reason)
        return worker

    def _call(
        self,
        module: str,
        func: str,
        args: tuple,
        kwargs: dict,
        observe: tuple[str, ...] = (),
        answer: Answer | None = None,
    ) -> Any:
        worker = self._ready(module, func)
        request = {"op": "call", "module": module, "func": func, "args": args, "kwargs": kwargs}
        if observe:
            request["observe"] = list(observe)
        if answer is not None:
            request["inject"] = sorted(answer.names)
        reply = self._send_call(worker, module, func, request, "call", answer)
        self.last_calls = [self._callee_call(c) for c in reply.get("calls", [])]
        self.last_complete = "calls_overflow" not in reply
        try:
            return self._result(module, func, reply)
        except errors.StudentRaised as e:  # which input it failed on, by shape
            e.inputs = shown.inputs(args)
            raise

    def _callee_call(self, record: dict) -> CalleeCall:
        """A recorded callee call (checked by replies.checked), its error in the grader's words."""
        name = record["name"]
        if record.get("plain") is False:
            return CalleeCall(name, None)
        args, kwargs = record["args"]
        if record["ok"]:
            return CalleeCall(name, args, kwargs, value=record["value"])
        error = replies.student_error(record["error"], name, self.door)
        return CalleeCall(name, args, kwargs, error=error)

    def observe(
        self, module: str, func: str, args: tuple, kwargs: dict, callees: tuple[str, ...]
    ) -> Observed:
        """Call ``module.func`` and record the calls it makes of ``callees``; the call's error
        comes back in the result, not raised (a SandboxError still is)."""
        self.last_calls, self.last_complete = [], True
        try:
            value = self.call(module, func, args, kwargs, observe=callees)
        except errors.StudentCodeError as e:
            value = e
        return Observed(value, list(self.last_calls), self.last_complete)

    def plain_and_observed(
        self, module: str, func: str, args: tuple, kwargs: dict, callees: tuple[str, ...]
    ) -> tuple[Any, Observed]:
        """A plain call of ``module.func`` and a watched one (``observe``) on the same inputs, in
        one exchange: the plain call's value (or the StudentCodeError it ended in), and the
        watched call as ``observe`` gives it. A SandboxError is raised."""
        try:
            worker = self._ready(module, func)
            request = {"op": "many", "module": module, "func": func}
            request["calls"] = [
                {"args": args, "kwargs": kwargs},
                {"args": args, "kwargs": kwargs, "observe": list(callees)},
            ]
            timeout = 2 * self.limits.call_timeout  # two calls, each given its own time
            reply = self._send_call(worker, module, func, request, "many", timeout=timeout)
        except SandboxError as e:
            self.grader_failure = str(e)
            raise
        except errors.StudentCodeError as e:  # a hang, a crash, nothing to call
            return e, Observed(e, [], True)
        if not reply["ok"]:  # a value that is not plain data: the calls one at a time
            return self._one(module, func, args, kwargs), self.observe(
                module, func, args, kwargs, callees
            )
        if len(reply["results"]) != 2:
            raise self._violation(worker, "a reply with another number of results")
        outcomes = []
        for r in reply["results"]:
            try:
                outcomes.append(self._result(module, func, r))
            except errors.StudentCodeError as e:
                if isinstance(e, errors.StudentRaised):  # which input it failed on, by shape
                    e.inputs = shown.inputs(args)
                outcomes.append(e)
        watched = reply["results"][1]
        calls = [self._callee_call(c) for c in watched.get("calls", [])]
        return outcomes[0], Observed(outcomes[1], calls, "calls_overflow" not in watched)

    def with_callees(
        self,
        module: str,
        func: str,
        args: tuple,
        kwargs: dict,
        callees: frozenset[str],
        answer: Callable[[str, list, dict], dict],
    ) -> Any:
        """Call ``module.func`` with each call it makes of ``callees`` answered by ``answer``
        (calls.answering) on this side; raises as ``call`` does."""
        return self.call(module, func, args, kwargs, answer=Answer(frozenset(callees), answer))

    def fresh(self, module: str, func: str, args: tuple, kwargs: dict) -> Any:
        """Call ``module.func`` in a worker of its own, which has run nothing but such calls:
        what the function gives on these inputs whatever another call left behind."""
        if self._clean is None:
            limits = dataclasses.replace(self.limits, submission_timeout=max(0.0, self.budget.left))
            # Its log is its own: what it prints is never shown (nor counted as the student's).
            self._clean = WorkerSession(self.zygote, self.files, limits, self.broken, self.kind)
        try:
            return self._clean.call(module, func, args, kwargs)
        except SandboxError as e:  # the grader's failure, whichever worker met it
            self.grader_failure = str(e)
            raise
        finally:
            if self._clean.ended is not None and self.ended is None:  # the student's doing
                self.log.protocol_violation = self._clean.log.protocol_violation
                self.ended = self._clean.ended

    def _send_call(
        self,
        worker: WorkerLink,
        module: str,
        func: str,
        request: dict,
        op: str,
        answer: Answer | None = None,
        timeout: float | None = None,
    ) -> dict:
        try:
            timeout = self.limits.call_timeout if timeout is None else timeout
            return self._exchange(worker, request, timeout, op, answer)
        except errors.CallTimeout:
            self.log.timeouts.append(func)
            if self.log.budget_exhausted:  # not this function's fault alone
                raise
            self.skipped[(module, func)] = errors.CallTimeout(
                "not run again: it ran out of time on an earlier case "
                f"(limit {self.limits.call_timeout:g} s per call)"
            )
            raise
        except errors.WorkerCrashed:
            self.log.crashes.append(func)
            raise

    def _result(self, module: str, func: str, reply: dict) -> Any:
        """A call's value, or its error raised (a call's reply, already checked)."""
        if reply.get("warned"):
            self.log.warned = True
        if reply["ok"]:
            if reply.get("modified"):
                self.modified_inputs.add(func)
            return reply["value"]
        error = replies.student_error(reply["error"], func, self.door)
        if isinstance(error, errors.StudentRaised) and error.is_a(MemoryError):
            skip = errors.StudentRaised(
                "MemoryError", error.mro, "", error.where, error.place, error.kind
            )
            skip.args = (
                "not run again: it ran out of memory on an earlier case "
                f"(limit {self.limits.memory_bytes >> 20} MB)",
            )
            self.skipped[(module, func)] = skip
        raise error

    def call_many(
        self, module: str, func: str, calls: list[tuple[tuple, dict]]
    ) -> list[Any | errors.StudentCodeError]:
        """Several calls of ``module.func`` in one exchange (the diagnosis' probes): each
        result is its value or the errors.StudentCodeError it raised. A reply that cannot carry
        every value (one is not plain data) falls back to one call at a time; a hang or a crash
        raises, as a single call's would."""
        if len(calls) <= 1 or len(calls) > replies.MAX_MANY:
            return [self._one(module, func, a, k) for a, k in calls]
        try:
            return self._call_many(module, func, calls)
        except SandboxError as e:
            self.grader_failure = str(e)
            raise

    def _call_many(self, module: str, func: str, calls: list[tuple[tuple, dict]]) -> list[Any]:
        worker = self._ready(module, func)
        request = {"op": "many", "module": module, "func": func}
        request["calls"] = [{"args": a, "kwargs": k} for a, k in calls]
        reply = self._send_call(worker, module, func, request, "many")
        if not reply["ok"]:  # a value that is not plain data: the calls one at a time
            return [self._one(module, func, a, k) for a, k in calls]
        results: list[Any] = []
        for r in reply["results"]:
            try:
                results.append(self._result(module, func, r))
            except errors.StudentCodeError as e:
                results.append(e)
        if len(results) != len(calls):
            raise self._violation(worker, "a reply with another number of results")
        return results

    def _one(self, module: str, func: str, args: tuple, kwargs: dict) -> Any:
        try:
            return self.call(module, func, args, kwargs)
        except errors.StudentCodeError as e:
            return e

    def probe_public(self, calls: list[tuple[str, str, tuple, dict]]) -> None:
        """Call functions on the grader's own public inputs, before any hidden input reaches
        the worker, in one exchange; where they raise is told to the door (``shown.Door``) so
        that the same place may be named later. Best effort: a hang or a crash only means no
        place is known (the hidden tests meet it again and report it)."""
        calls = [(m, f, a, k) for m, f, a, k in calls if self.available(m, f) is None]
        if self.kind == "full":  # the NumPy questions' calls go to their own workers
            mine = [self.routed(m, f) is self for m, f, _, _ in calls]
            numpy = [c for c, own in zip(calls, mine, strict=True) if not own]
            if numpy:
                self.numpy_session().probe_public(numpy)
            calls = [c for c, own in zip(calls, mine, strict=True) if own]
        if not calls or self.ended is not None:
            return
        request = {
            "op": "probe",
            "calls": [{"module": m, "func": f, "args": a, "kwargs": k} for m, f, a, k in calls],
        }
        try:
            worker = self._ensure_worker()
            timeout = self.limits.call_timeout * PROBE_SHARE
            reply = self._exchange(worker, request, timeout, "probe")
        except errors.ProtocolViolation:
            return
        except errors.StudentCodeError:  # a hang or a crash: the next call gets a new worker
            return
        if not reply["ok"]:
            return
        for (_, func, _, _), record in zip(calls, reply["errors"], strict=True):
            if record is not None and record["kind"] == "raised":
                self.door.raised(
                    func,
                    record.get("type", ""),
                    record.get("mro", []),
                    record.get("where", ""),
                    public=True,
                    numpy=record.get("numpy", ""),
                )

    def diagnosis_env(self) -> dict[str, Callable]:
        """``env()`` of a session of the same files whose workers never meet a hidden input (its
        own, started at its first call, its NumPy questions' too): the diagnosis calls the
        student's code there, on the grader's probes alone, so that a number a diagnosis tells
        (a scale or counts fitted to what the code returned) cannot carry anything the code kept
        from a hidden case. Its time, log and record of skipped functions are this session's."""
        if self._diagnosis is None:
            self._diagnosis = WorkerSession(
                self.zygote, self.files, self.limits, self.broken, self.kind, parent=self
            )
        return self._diagnosis.env()

    def proxy(self, module: str, func: str) -> Callable:
        return _Proxy(self.routed(module, func), module, func)

    def env(self, qid: str | None = None) -> dict[str, Callable]:
        """A proxy for every contract function, by name (the names are the code question ids),
        each called where its question runs; with ``qid``, every proxy calls the worker where
        ``qid`` runs, so that what a composite's test calls of its callees is what the
        composite itself meets (cross_check's multi_head_attention beside torch)."""
        if qid is not None:
            home = self.routed(CODE_QUESTIONS[qid].removesuffix(".py"), qid)
            return {q: _Proxy(home, f.removesuffix(".py"), q) for q, f in CODE_QUESTIONS.items()}
        return {q: self.proxy(f.removesuffix(".py"), q) for q, f in CODE_QUESTIONS.items()}


class _Proxy:
    """A student function as the tests see it: calling it calls the worker."""

    def __init__(self, session: WorkerSession, module: str, func: str):
        self.session, self.module, self.__name__ = session, module, func
        self.__qualname__ = f"student.{module}.{func}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.session.call(self.module, self.__name__, args, kwargs)

    def many(self, calls: list[tuple[tuple, dict]]) -> list[Any]:
        """Several calls in one exchange: each result a value or the StudentCodeError raised."""
        return self.session.call_many(self.module, self.__name__, calls)

    def observe(self, args: tuple, kwargs: dict, callees: tuple[str, ...]) -> Observed:
        """A call, with the calls it made of ``callees`` (calls.Observed)."""
        return self.session.observe(self.module, self.__name__, args, kwargs, callees)

    def plain_and_observed(
        self, args: tuple, kwargs: dict, callees: tuple[str, ...]
    ) -> tuple[Any, Observed]:
        """A plain call and a watched one, in one exchange (``WorkerSession``'s)."""
        return self.session.plain_and_observed(self.module, self.__name__, args, kwargs, callees)

    def with_callees(
        self, args: tuple, kwargs: dict, answer: Callable[[str, list, dict], dict], callees
    ) -> Any:
        """A call whose calls of ``callees`` are answered by ``answer`` (calls.answering)."""
        return self.session.with_callees(
            self.module, self.__name__, args, kwargs, frozenset(callees), answer
        )

    def fresh(self, args: tuple, kwargs: dict) -> Any:
        """A call in a worker that has run nothing but such calls (no state of other calls)."""
        return self.session.fresh(self.module, self.__name__, args, kwargs)

    @property
    def inputs_modified(self) -> bool:
        """Whether some call so far changed one of its array arguments in place."""
        return self.__name__ in self.session.modified_inputs
