"""Grade one submission: hidden tests in this (trusted) process, student code in the sandbox.

``Engine`` owns one running zygote and is reused across submissions; ``grade`` may be called
from several threads at once (each call has its own worker). A question's results are produced
in exactly one place, ``Engine.question_results``.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from mha_check.questions import (
    CALLEES,
    CODE_QUESTIONS,
    QUESTION_IDS,
    WRITTEN_QUESTIONS,
)

from .. import written
from ..diagnose import DiagnosisSession, explain_failures
from ..diagnose.probes import first_probe
from ..outcomes import Grade, Status, TestResult
from ..points import POINTS, POLICY, Policy
from ..sandbox import LayerInfo, Limits, SandboxError, Zygote, required_layer, start_zygote
from ..sandbox.worker.linux import PR_SET_DUMPABLE, prctl
from . import carry, hidden, replies
from .session import MODULES, SessionLog, WorkerSession
from .submission import Submission

log = logging.getLogger(__name__)

QuestionRunner = Callable[[str, Mapping[str, Callable]], list[TestResult]]
WrittenGrader = Callable[[str | None], list[TestResult]]


def _load_hidden_tests() -> None:
    """Parse every hidden test file once (cached by ``hidden``); failures surface later."""
    try:
        hidden.all_cases()
    except Exception:
        pass


def _unavailable(qid: str, why: str) -> list[TestResult]:
    """One line for the whole question, at 0 points: why none of its cases could run (its file
    is missing or could not be loaded, or the submission was refused)."""
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
        import torch  # here, not at the top: the zygote boots while this process reads files

        torch.set_num_threads(1)
        gc.collect()
        gc.freeze()
        _settled = True


def _grader_failure(qids: tuple[str, ...]) -> list[TestResult]:
    return [TestResult.grader_failure(q) for q in qids]


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
        collapse: bool = False,
    ):
        """``require``: the weakest sandbox layer allowed (default: $MHA_REQUIRE_SANDBOX, or
        any); ``protect``: paths closed to student code besides the checkout (the output
        folder, the submissions); ``layers``: the layers to try (tests; default all);
        ``policy``: the grading policy (default: points.toml's [policy]); ``collapse``: the
        sandbox makes its forks cheaper for hundreds of submissions (a large batch's)."""
        self.limits = limits or Limits()
        self.policy = policy or POLICY  # points.toml's [policy]
        self._hidden = run_question is None  # the hidden tests, graded under self.policy
        self.run_question = run_question or self._run_hidden
        self.grade_written = grade_written or written.grade_written
        self.privileged = privileged  # None: per-worker uids when running as root
        self.require = required_layer(require)
        self.protect = tuple(protect)
        self.layers = layers
        self.collapse = collapse
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
                zygote = start_zygote(
                    self.require, self.protect, self.privileged, layers, collapse=self.collapse
                )
                self._zygote = zygote
                if self.layer is None:
                    self.layer = zygote.info
                if not zygote.info.per_worker_uid and zygote.info.name != "namespaces":
                    # Workers share this process's uid: keep them out of its memory (the
                    # hidden tests' inputs and expected values), /proc/<pid>/mem included.
                    prctl(PR_SET_DUMPABLE, 0)

    def warm(self) -> None:
        """The grading side's one-time work, done before the first submission arrives (the
        hidden tests parsed, torch imported, the rubrics and hand-outs read) and the sandbox
        ready: the first grade then costs what every other does."""
        _load_hidden_tests()
        _settle_process()
        try:
            written.warm()
        except Exception:  # the first answer sheet meets the same failure, and reports it
            log.exception("warming up the written grading failed")
        with self._lock:
            zygote = self._zygote
        if zygote is not None and zygote.alive():
            zygote.ping()

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

    def _run_hidden(self, qid: str, env: Mapping[str, Callable]) -> list[TestResult]:
        return hidden.run_question(qid, env, self.policy.carry_forward)

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
        for callee in CALLEES.get(qid, ()):  # a callee in a file that did not load (mha-check
            other = CODE_QUESTIONS[callee]  # says the same: mha_check/cli.py)
            if other != CODE_QUESTIONS[qid] and other.removesuffix(".py") in session.broken:
                return _unavailable(
                    qid,
                    f"not graded: {qid} calls {callee} from {other}, which could not be "
                    "loaded (see above).",
                )
        _settle_process()
        if diagnosis is None:  # in workers no hidden input reaches
            diagnosis = DiagnosisSession(session.diagnosis_env())
        results = self.run_question(qid, env)
        # a failing case gets the diagnosis: the misconception's tag and what it means
        return explain_failures(qid, results, diagnosis)

    def _public_calls(self, session: WorkerSession) -> None:
        """Each function once on the grader's own public input, before any hidden input reaches
        the worker, in one exchange (see shown.Door)."""

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
            grade.status = Status.REFUSED
            return grade
        grade.notes += [p.message for p in submission.problems.values()]
        grade.results += self._written(submission.files.get("answers.md"), grade)
        code_results, session_log = self._code(submission, grade)
        grade.results += code_results
        grade.status = status_of(submission, grade, session_log)
        grade.sandbox = self.layer.name if self.layer else ""
        order = {q: i for i, q in enumerate(QUESTION_IDS)}
        grade.results.sort(key=lambda r: order.get(r.question, len(order)))
        return grade

    def _written(self, text: str | None, grade: Grade) -> list[TestResult]:
        try:
            return self.grade_written(text)
        except Exception:
            log.exception("grading the written answers of %s failed", grade.student)
            grade.status = Status.GRADER_ERROR
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
        if self._hidden:
            _load_hidden_tests()  # meanwhile a cold zygote is importing torch on another core
        try:
            session = self.open_session(files, missing)
        except Exception:  # SandboxError, or a bug of ours: never the student's fault
            log.exception("the sandbox failed for %s", grade.student)
            grade.status = Status.GRADER_ERROR
            return _grader_failure(tuple(CODE_QUESTIONS)), None
        with session:
            self._public_calls(session)
            # shared by the questions (calls made once), in workers no hidden input reaches
            diagnosis = DiagnosisSession(session.diagnosis_env())
            for qid in CODE_QUESTIONS:
                try:
                    own = session.env(qid)  # its callees as it meets them
                    question = self.question_results(qid, own, session, diagnosis)
                    if session.grader_failure:  # swallowed by a test: still the grader's fault
                        raise SandboxError(session.grader_failure)
                    results += question
                except SandboxError:
                    log.exception("the sandbox failed for %s on %s", grade.student, qid)
                    grade.status = Status.GRADER_ERROR
                    results += _grader_failure((qid,))
                except Exception:
                    log.exception("the hidden tests of %s failed for %s", qid, grade.student)
                    grade.status = Status.GRADER_ERROR
                    results += _grader_failure((qid,))
        carry.charge_uncharged(results, tuple(CODE_QUESTIONS))
        slog = session.log
        grade.output = slog.import_output
        if slog.import_output_truncated:
            grade.output += f"\n[... {slog.import_output_truncated} more bytes not shown]"
        grade.notes += session_notes(slog, self.limits)
        if slog.protocol_violation:
            log.warning("protocol violation by %s: %s", grade.student, slog.protocol_violation)
        return results, slog


def session_notes(slog: SessionLog, limits: Limits) -> list[str]:
    """What happened to the student's code as a whole, for the top of the reports."""
    notes = list(slog.import_errors.values())
    if slog.timeouts:
        notes.append(
            "ran out of time in: " + ", ".join(dict.fromkeys(slog.timeouts)) + " (limit "
            f"{limits.call_timeout:g} s per call); those tests scored 0"
        )
    if slog.budget_exhausted:
        notes.append(
            f"the whole submission used up its time limit ({limits.submission_timeout:g}"
            " s); the remaining tests were not run"
        )
    if slog.crashes:
        notes.append("the worker process stopped in: " + ", ".join(dict.fromkeys(slog.crashes)))
    if slog.warned:
        notes.append(
            "NumPy or Python warned while your code ran the hidden tests (for example of an "
            "overflow in exp, or an invalid value in a division): the warnings are not shown, "
            "but they usually mean numbers grew too large or became nan somewhere"
        )
    if slog.call_output_bytes:
        notes.append(
            "your code printed output during the hidden tests; it is not shown, since it "
            "could reveal the hidden inputs (mha-check shows what it prints on the public "
            "tests: mha-check --show-output)"
        )
    if slog.protocol_violation:
        notes.append(replies.PROTOCOL_VIOLATION + "; the remaining tests scored 0")
    return notes


def status_of(submission: Submission, grade: Grade, slog: SessionLog | None) -> Status:
    """The submission's one status word (docs/contract.md §5): the first that applies."""
    if grade.status == Status.GRADER_ERROR:
        return Status.GRADER_ERROR
    kinds = {p.kind for p in submission.problems.values()}
    if "missing" in kinds:
        return Status.MISSING_FILES
    if "unreadable" in kinds:
        return Status.UNREADABLE_FILES
    if slog is not None:
        if slog.protocol_violation:
            return Status.PROTOCOL_ERROR
        if slog.timeouts or slog.budget_exhausted:
            return Status.TIMEOUT
        if slog.crashes:
            return Status.CRASHED
        if slog.import_errors:
            return Status.IMPORT_ERROR
    return Status.OK
