"""Grade one submission: hidden tests in this (trusted) process, student code in the sandbox.

``Engine`` owns one running zygote and is reused across submissions; ``grade`` may be called
from several threads at once (each call has its own worker). A question's results are produced
in exactly one place, ``Engine.question_results``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import carry, proxy, questions, shown
from .proxy import MODULES, SessionLog, WorkerSession
from .questions import (
    CODE_QUESTIONS,
    MAX_TOTAL,
    NUMPY_QUESTIONS,
    POINTS,
    QUESTION_IDS,
    WRITTEN_QUESTIONS,
    Policy,
)
from .results import TestResult
from .sandbox import LayerInfo, Limits, SandboxError, Zygote, required_layer, start_zygote
from .submission import Submission

if TYPE_CHECKING:
    from .diagnose import DiagnosisSession

log = logging.getLogger(__name__)

QuestionRunner = Callable[[str, Mapping[str, Callable]], list[TestResult]]
WrittenGrader = Callable[[str | None], list[TestResult]]
NUMPY_ONLY_TAG = "beyond-numpy"  # a NumPy question whose calls reached another library
GRADER_FAILED = (
    "the grader itself failed on this question (not your code's fault); "
    "your instructor has been told and will grade it by hand"
)


@dataclass
class Grade:
    """Everything the reports need about one graded submission."""

    student: str
    results: list[TestResult]
    # ok, refused, missing-files, unreadable-files, import-error, protocol-error, timeout,
    # crashed, grader-error
    status: str = "ok"
    notes: list[str] = field(default_factory=list)  # submission-level messages for the student
    output: str = ""  # what the student's code printed while importing (truncated)
    digest: str = ""
    sandbox: str = ""  # the containment layer its code ran in (sandbox.LAYERS)

    def scores(self) -> dict[str, float]:
        """Points earned per question id, in contract order."""
        earned = dict.fromkeys(QUESTION_IDS, 0.0)
        for r in self.results:
            earned[r.question] = earned.get(r.question, 0.0) + r.score
        return {q: round(earned[q], 4) for q in QUESTION_IDS}

    @property
    def total(self) -> float:
        return round(sum(self.scores().values()), 4)

    @property
    def max_total(self) -> float:
        return MAX_TOTAL

    @property
    def needs_review(self) -> bool:
        return any("needs-review" in r.tags for r in self.results)


def _default_runner(qid: str, env: Mapping[str, Callable]) -> list[TestResult]:
    from .hidden import run_question

    return run_question(qid, env)


def _load_hidden_tests() -> None:
    """Parse every hidden test file once (cached by ``hidden``); failures surface later."""
    try:
        from .hidden import all_cases

        all_cases()
    except Exception:
        pass


def _default_written(text: str | None) -> list[TestResult]:
    from .written import grade_written

    return grade_written(text)


def _unavailable(qid: str, why: str) -> list[TestResult]:
    """The question's cases at 0 points, each saying why they could not run."""
    try:
        from .hidden import missing_results

        return missing_results(qid, why)
    except Exception:  # hidden tests unavailable: one line for the whole question
        return [TestResult(f"{qid}: not graded", qid, 0.0, POINTS[qid], why)]


def _refused(qid: str, why: str) -> list[TestResult]:
    if qid in CODE_QUESTIONS:
        return _unavailable(qid, why)
    return [TestResult(f"{qid}: written answer", qid, 0.0, POINTS[qid], why)]


_settled = False


def _settle_process() -> None:
    """Once per process, after torch and the hidden tests' modules are imported: one intra-op
    thread (``-j`` grading processes and their workers already share the cores, and the hidden
    tests' tensors are small), and the ~250,000 objects of those imports kept out of the
    garbage collector's full passes, which would otherwise walk them all every few submissions."""
    global _settled
    if not _settled:
        import gc

        import torch

        torch.set_num_threads(1)
        gc.collect()
        gc.freeze()
        _settled = True


def _grader_failure(qids: tuple[str, ...]) -> list[TestResult]:
    return [
        TestResult(f"{q}: not graded", q, 0.0, POINTS[q], GRADER_FAILED, tags=["needs-review"])
        for q in qids
    ]


class Engine:
    """A reusable grader: start once, ``grade`` many submissions, ``close`` at the end."""

    def __init__(
        self,
        limits: Limits | None = None,
        run_question: QuestionRunner | None = None,
        grade_written: WrittenGrader | None = None,
        privileged: bool | None = None,
        require: str | None = None,
        protect: Sequence[Path] = (),
        layers: Sequence[str] | None = None,
        policy: Policy | None = None,
    ):
        """``require``: the weakest sandbox layer allowed (default: $MHA_REQUIRE_SANDBOX, or
        any); ``protect``: paths closed to student code besides the checkout (the output
        folder, the submissions); ``layers``: the layers to try (tests; default all);
        ``policy``: the grading policy (default: points.toml's [policy])."""
        self.limits = limits or Limits()
        self.policy = policy or questions.POLICY  # points.toml's [policy]
        self.run_question = run_question or _default_runner
        self.grade_written = grade_written or _default_written
        self.privileged = privileged  # None: per-worker uids when running as root
        self.require = required_layer(require)
        self.protect = tuple(protect)
        self.layers = layers
        self.layer: LayerInfo | None = None  # the layer in force, once started
        self._zygote: Zygote | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the sandbox in the strongest layer that works (raises LayerUnavailable, one
        line, when none qualifies); after a crash, restart it in the same layer."""
        with self._lock:
            if self._zygote is None or not self._zygote.alive():
                if self._zygote is not None:
                    self._zygote.close()
                layers = (self.layer.name,) if self.layer else self.layers
                zygote = start_zygote(self.require, self.protect, self.privileged, layers)
                self._zygote = zygote
                if self.layer is None:
                    self.layer = zygote.info
                if not zygote.info.per_worker_uid and zygote.info.name != "namespaces":
                    # Workers share this process's uid: keep them out of its memory (the
                    # hidden tests' inputs and expected values), /proc/<pid>/mem included.
                    from .worker.linux import PR_SET_DUMPABLE, prctl

                    prctl(PR_SET_DUMPABLE, 0)

    def wait_idle(self) -> None:
        """Return once every worker of the sessions closed so far is gone."""
        with self._lock:
            zygote = self._zygote
        if zygote is not None and zygote.alive():
            zygote.ping()

    def close(self) -> None:
        with self._lock:
            if self._zygote is not None:
                self._zygote.close()
                self._zygote = None

    def open_session(
        self,
        files: Mapping[str, str],
        missing: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> WorkerSession:
        """A started worker session for module sources (``{"multihead": text, ...}``); use it
        as a context manager. Restarts the zygote once if it died (a grader-side failure)."""
        for attempt in (1, 2):
            self.start()
            session = WorkerSession(self._zygote, files, limits or self.limits, missing)
            try:
                session.start()
                return session
            except SandboxError:
                try:
                    session.close()
                except SandboxError:
                    pass
                if attempt == 2:
                    raise
                log.warning("the sandbox stopped; restarting it", exc_info=True)
                self.close()
            except BaseException:  # never leave a worker running behind an exception
                try:
                    session.close()
                except SandboxError:
                    pass
                raise
        raise AssertionError("unreachable")

    # -- the one place a code question's results are produced ------------------------------

    def question_results(
        self,
        qid: str,
        env: Mapping[str, Callable],
        session: WorkerSession,
        diagnosis: DiagnosisSession | None = None,
    ) -> list[TestResult]:
        """The results of code question ``qid``; ``diagnosis`` is the submission's diagnosis
        session (one is made for this question alone when none is given)."""
        module = CODE_QUESTIONS[qid].removesuffix(".py")
        why = session.available(module, qid)
        if why is not None:
            return _unavailable(qid, f"not graded: {why}.")
        # a failing case gets the diagnosis: the misconception's tag and what it means
        from .diagnose import DiagnosisSession, explain_failures  # imports torch: not before

        _settle_process()
        if diagnosis is None:
            diagnosis = DiagnosisSession(env)
        with carry.policy(self.policy.carry_forward):
            results = self.run_question(qid, env)
        return explain_failures(qid, results, diagnosis)

    def _public_calls(self, session: WorkerSession) -> None:
        """Each function once on the grader's own public input, before any hidden input reaches
        the worker, in one exchange (see shown.Door)."""
        from .diagnose.probes import first_probe  # imports torch: not before the zygote starts

        calls = []
        for qid, file in CODE_QUESTIONS.items():
            probe = first_probe(qid)
            calls.append((file.removesuffix(".py"), qid, probe.args, probe.kwargs))
        try:
            session.probe_public(calls)
        except SandboxError as e:  # the grader's failure: the questions will say so
            session.grader_failure = str(e)

    # -- grading -------------------------------------------------------------------------------

    def grade(self, submission: Submission) -> Grade:
        """Grade one submission. Never raises for anything the student's code does."""
        grade = Grade(submission.student, [], digest=submission.digest())
        grade.notes += submission.notes
        if submission.refused:  # nothing in it is graded: one line per question says why
            why = f"not graded: {submission.refused}."
            grade.results = [r for q in QUESTION_IDS for r in _refused(q, why)]
            grade.status = "refused"
            return grade
        grade.notes += [p.message for p in submission.problems.values()]
        grade.results += self._written(submission.files.get("answers.md"), grade)
        code_results, session_log = self._code(submission, grade)
        grade.results += code_results
        grade.status = self._status(submission, grade, session_log)
        grade.sandbox = self.layer.name if self.layer else ""
        order = {q: i for i, q in enumerate(QUESTION_IDS)}
        grade.results.sort(key=lambda r: order.get(r.question, len(order)))
        return grade

    def _written(self, text: str | None, grade: Grade) -> list[TestResult]:
        try:
            return self.grade_written(text)
        except Exception:
            log.exception("grading the written answers of %s failed", grade.student)
            grade.status = "grader-error"
            return _grader_failure(WRITTEN_QUESTIONS)

    def _code(
        self, submission: Submission, grade: Grade
    ) -> tuple[list[TestResult], SessionLog | None]:
        files, missing = {}, {}
        for module in MODULES:
            name = f"{module}.py"
            if name in submission.files:
                files[module] = submission.files[name]
            else:
                problem = submission.problems.get(name)
                missing[module] = problem.message if problem else f"{name} is missing"
        results: list[TestResult] = []
        if not files:  # nothing to run: no worker needed
            for qid, name in CODE_QUESTIONS.items():
                results += _unavailable(qid, f"not graded: {missing[name.removesuffix('.py')]}.")
            return results, None
        if self.run_question is _default_runner:
            _load_hidden_tests()  # meanwhile a cold zygote is importing torch on another core
        try:
            session = self.open_session(files, missing)
        except Exception:  # SandboxError, or a bug of ours: never the student's fault
            log.exception("the sandbox failed for %s", grade.student)
            grade.status = "grader-error"
            return _grader_failure(tuple(CODE_QUESTIONS)), None
        with session:
            env = session.env()
            self._public_calls(session)
            from .diagnose import DiagnosisSession  # after the zygote started: imports torch

            diagnosis = DiagnosisSession(env)  # shared by the questions: calls made once
            for qid in CODE_QUESTIONS:
                try:
                    question = self.question_results(qid, env, session, diagnosis)
                    if session.grader_failure:  # swallowed by a test: still the grader's fault
                        raise SandboxError(session.grader_failure)
                    results += question
                except SandboxError:
                    log.exception("the sandbox failed for %s on %s", grade.student, qid)
                    grade.status = "grader-error"
                    results += _grader_failure((qid,))
                except Exception:
                    log.exception("the hidden tests of %s failed for %s", qid, grade.student)
                    grade.status = "grader-error"
                    results += _grader_failure((qid,))
        self._numpy_only(results, session.reached)
        slog = session.log
        grade.output = slog.import_output
        if slog.import_output_truncated:
            grade.output += f"\n[... {slog.import_output_truncated} more bytes not shown]"
        grade.notes += list(slog.import_errors.values())
        if slog.timeouts:
            grade.notes.append(
                "ran out of time in: " + ", ".join(dict.fromkeys(slog.timeouts)) + " (limit "
                f"{self.limits.call_timeout:g} s per call); those tests scored 0"
            )
        if slog.budget_exhausted:
            grade.notes.append(
                f"the whole submission used up its time limit ({self.limits.submission_timeout:g}"
                " s); the remaining tests were not run"
            )
        if slog.crashes:
            grade.notes.append(
                "the worker process stopped in: " + ", ".join(dict.fromkeys(slog.crashes))
            )
        if slog.call_output_bytes:
            grade.notes.append(
                "your code printed output during the hidden tests; it is not shown, since it "
                "could reveal the hidden inputs (mha-check shows what it prints on the public "
                "tests: mha-check --show-output)"
            )
        if slog.protocol_violation:
            log.warning("protocol violation by %s: %s", grade.student, slog.protocol_violation)
            grade.notes.append(proxy.PROTOCOL_VIOLATION + "; the remaining tests scored 0")
        return results, slog

    def _numpy_only(self, results: list[TestResult], reached: Mapping[str, set[str]]) -> None:
        """A NumPy question whose calls reached another library is flagged for review, named in
        its feedback, and (policy "zero") earns nothing."""
        for qid in NUMPY_QUESTIONS:
            found = reached.get(qid)
            if not found:
                continue
            zero = self.policy.numpy_only == "zero"
            cost = "it earns no points here, and " if zero else ""
            via = [c for c in questions.CALLEES.get(qid, ()) if found <= reached.get(c, set())]
            through = f" (through your {' and '.join(via)})" if via else ""
            note = (
                f"Your {qid} used {shown.libraries(sorted(found))}{through} during the grader's "
                f"calls: this exercise asks for NumPy and the standard library only, so {cost}a "
                "teacher will look at it."
            )
            for r in results:
                if r.question == qid:
                    r.output = f"{r.output}\n{note}" if r.output else note
                    r.tags += [t for t in ("needs-review", NUMPY_ONLY_TAG) if t not in r.tags]
                    if zero:
                        r.score = 0.0

    def _status(self, submission: Submission, grade: Grade, slog: SessionLog | None) -> str:
        if grade.status == "grader-error":
            return grade.status
        kinds = {p.kind for p in submission.problems.values()}
        if "missing" in kinds:
            return "missing-files"
        if "unreadable" in kinds:
            return "unreadable-files"
        if slog is not None:
            if slog.protocol_violation:
                return "protocol-error"
            if slog.timeouts or slog.budget_exhausted:
                return "timeout"
            if slog.crashes:
                return "crashed"
            if slog.import_errors:
                return "import-error"
        return "ok"
