"""The output folder of a grading run (docs/contract.md §5): the one class that knows its layout.

``mha-grade one``, ``batch``, ``merge``, ``review`` and ``export`` and the Gradescope runner are
its clients: none of them spells out a file name of the folder. Every file but the plots is
written atomically (``write_atomic``: a temporary file beside it, then ``os.replace``), and a
run first clears the temporary files an interrupted run left (``clear_leftovers``).

The seal (``students/<id>/grade.json``) is what makes a batch resumable and a review possible
without grading again: the grade-sheet row, the key it was graded under, the grade itself and
what a person's review would judge (``Seal``).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..outcomes import Grade, TestResult
from . import reports

CODE_FILES = ("multihead.py", "crosscheck.py")  # what sources.json keeps, for similarity
_TMP_SUFFIX = ".tmp"


def write_atomic(path: str | os.PathLike, data: str | bytes, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.
    ``durable``: its content is on disk before it takes the name (``fsync``); without, a crash
    may leave the name on an empty or older file (for files whose loss costs only work again:
    a student's seal)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _leftover(path: Path) -> bool:
    """A temporary file of ``write_atomic`` (``.<name>.<random>.tmp``) of a run that died."""
    name = path.name
    return name.startswith(".") and name.endswith(_TMP_SUFFIX) and name.count(".") >= 3


def grade_to_dict(grade: Grade) -> dict:
    """A grade as plain JSON data (kept in its seal, so that reports can be written again
    without grading again, e.g. when a person's review decision changes a score)."""
    return dataclasses.asdict(grade)


def grade_from_dict(data: Mapping) -> Grade:
    """The grade ``grade_to_dict`` wrote; raises ValueError for anything else."""
    try:
        known = {f.name for f in dataclasses.fields(TestResult)}
        results = [
            TestResult(**{k: v for k, v in r.items() if k in known}) for r in data["results"]
        ]
        fields = {f.name for f in dataclasses.fields(Grade)} - {"results"}
        return Grade(results=results, **{k: v for k, v in data.items() if k in fields})
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"not a saved grade ({e})") from None


@dataclass
class Seal:
    """What grading kept of one student (``students/<id>/grade.json``)."""

    student: str
    key: str  # the grading key: the grader's fingerprint and the submission's digest
    row: dict[str, str]  # the grade-sheet row as graded (before any review decision)
    source: str = ""  # where the submission was read from
    grade: Grade | None = None  # None: a seal of an older grader, which did not keep it
    hashes: dict[str, str] = dataclasses.field(default_factory=dict)  # what a review judges
    answers: dict[str, str | None] = dataclasses.field(default_factory=dict)

    def to_json(self) -> str:
        seal = {"key": self.key, "row": self.row, "source": self.source}
        if self.grade is not None:
            seal["grade"] = grade_to_dict(self.grade)
        seal["judged"] = {"hashes": self.hashes, "answers": self.answers}
        return json.dumps(seal) + "\n"

    @classmethod
    def from_json(cls, student: str, text: str) -> Seal | None:
        """The seal in ``text``, or None when it is not one (broken, or of another student)."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or not isinstance(data.get("row"), dict):
                return None
            seal = cls(student, str(data.get("key", "")), data["row"], str(data.get("source", "")))
            try:
                grade = grade_from_dict(data["grade"])
                judged = data["judged"]
                seal.hashes, seal.answers = dict(judged["hashes"]), dict(judged["answers"])
            except (ValueError, KeyError, TypeError):
                return seal  # a row without the grade: resumable, not reviewable
            seal.grade = grade if grade.student == student else None
            return seal
        except (ValueError, TypeError):
            return None


def as_folder(out: OutputFolder | str | os.PathLike) -> OutputFolder:
    """``out`` as an OutputFolder (the commands and tests name it by its path)."""
    return out if isinstance(out, OutputFolder) else OutputFolder(out)


class OutputFolder:
    """The layout of ``OUT`` (docs/contract.md §5); the only code that names its files."""

    GRADES = "grades.csv"
    SUMMARY = "summary.md"
    PLOTS = "plots"
    HISTOGRAM = "plots/score_histogram.png"
    QUESTION_MEANS = "plots/question_means.png"
    RUN = "batch.json"
    SOURCES = "sources.json"
    SIMILARITY = "similarity.json"
    SIMILARITY_HTML = "similarity.html"
    REVIEWS = "reviews.toml"
    QUEUE = ".review-queue.json"  # where the review queue's skipped items are remembered
    LOCK = ".reviews.lock"  # held while reviews.toml and the reports under it change
    STUDENTS = "students"
    RESULTS = "results.json"
    FEEDBACK = "feedback.md"
    SEAL = "grade.json"

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"OutputFolder({str(self.root)!r})"

    # -- where things are ----------------------------------------------------------------

    @property
    def grades_csv(self) -> Path:
        return self.root / self.GRADES

    @property
    def summary_md(self) -> Path:
        return self.root / self.SUMMARY

    @property
    def plots(self) -> Path:
        return self.root / self.PLOTS

    @property
    def histogram_png(self) -> Path:
        return self.root / self.HISTOGRAM

    @property
    def question_means_png(self) -> Path:
        return self.root / self.QUESTION_MEANS

    @property
    def run_json(self) -> Path:
        return self.root / self.RUN

    @property
    def sources_json(self) -> Path:
        return self.root / self.SOURCES

    @property
    def similarity_json(self) -> Path:
        return self.root / self.SIMILARITY

    @property
    def similarity_html(self) -> Path:
        return self.root / self.SIMILARITY_HTML

    @property
    def reviews_toml(self) -> Path:
        return self.root / self.REVIEWS

    @property
    def queue_state(self) -> Path:
        return self.root / self.QUEUE

    @property
    def review_lock(self) -> Path:
        return self.root / self.LOCK

    @property
    def students_dir(self) -> Path:
        return self.root / self.STUDENTS

    def student(self, sid: str) -> Path:
        return self.students_dir / sid

    def results_json(self, sid: str) -> Path:
        return self.student(sid) / self.RESULTS

    def feedback_md(self, sid: str) -> Path:
        return self.student(sid) / self.FEEDBACK

    def seal_path(self, sid: str) -> Path:
        return self.student(sid) / self.SEAL

    def feedback_pattern(self) -> str:
        """Where each student's feedback is, for a person to read."""
        return f"{self.students_dir}/<student>/{self.FEEDBACK}"

    # -- upkeep --------------------------------------------------------------------------

    def make(self) -> OutputFolder:
        """Create the folder, and clear what an interrupted run left in it."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.clear_leftovers()
        return self

    def clear_leftovers(self) -> list[Path]:
        """Remove the temporary files of writes that never finished (a run killed mid-write);
        returns what was removed."""
        removed = []
        folders = [self.root, self.plots]
        if self.students_dir.is_dir():
            folders += [p for p in self.students_dir.iterdir() if p.is_dir()]
        for folder in folders:
            try:
                entries = list(folder.iterdir())
            except OSError:
                continue
            for path in entries:
                if _leftover(path) and path.is_file() and not path.is_symlink():
                    try:
                        path.unlink()
                        removed.append(path)
                    except OSError:
                        pass
        return removed

    # -- the grade sheet -------------------------------------------------------------------

    def read_grades(self) -> list[dict[str, str]]:
        """The rows of grades.csv; none when there is no readable sheet yet."""
        try:
            with open(self.grades_csv, newline="") as f:
                rows = list(csv.DictReader(f))
        except (OSError, csv.Error):
            return []
        return [
            {k: reports.csv_value(v) if isinstance(v, str) else v for k, v in r.items()}
            for r in rows
        ]

    def write_grades(self, rows: Iterable[Mapping[str, str]]) -> Path:
        write_atomic(self.grades_csv, reports.grades_csv(rows))
        return self.grades_csv

    # -- one student -----------------------------------------------------------------------

    def has_student(self, sid: str) -> bool:
        return self.student(sid).is_dir()

    def write_reports(self, grade: Grade, *, if_changed: bool = False) -> Path:
        """Write the student's results.json and feedback.md; returns their folder.
        ``if_changed``: leave a file that already says the same as it is (no write, no sync)."""
        data = reports.results_json(grade)
        path = self.results_json(grade.student)
        if not (if_changed and _holds(path, data)):
            write_atomic(path, json.dumps(data, indent=2) + "\n")
        text = reports.feedback_md(grade)
        path = self.feedback_md(grade.student)
        if not (if_changed and _holds(path, text)):
            write_atomic(path, text)
        return self.student(grade.student)

    def read_results(self, sid: str) -> dict | None:
        """The student's results.json as data (None: none, or unreadable)."""
        try:
            data = json.loads(self.results_json(sid).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def read_results_text(self, sid: str) -> str | None:
        try:
            return self.results_json(sid).read_text()
        except OSError:
            return None

    def write_seal(self, seal: Seal) -> None:
        """Written after the reports, which are synced to disk before: a seal never stands for
        reports a crash can lose. The seal itself is not synced (one fsync a student less, of
        three): a crash may lose it or leave it empty or cut, which ``read_seal`` reads as no
        seal, and the student is graded again by the next run; never a seal without its
        reports."""
        write_atomic(self.seal_path(seal.student), seal.to_json(), durable=False)

    def read_seal(self, sid: str) -> Seal | None:
        try:
            text = self.seal_path(sid).read_text()
        except OSError:
            return None
        return Seal.from_json(sid, text)

    def drop_seal(self, sid: str) -> None:
        """Forget a grade that no longer describes the submission (the next run grades it)."""
        self.seal_path(sid).unlink(missing_ok=True)

    def sealed_students(self) -> list[str]:
        if not self.students_dir.is_dir():
            return []
        return sorted(p.parent.name for p in self.students_dir.glob(f"*/{self.SEAL}"))

    def copy_student(self, other: OutputFolder, sid: str) -> bool:
        """Copy a student's reports and seal from ``other``; False when it has none."""
        src = other.student(sid)
        if not src.is_dir():
            return False
        shutil.copytree(src, self.student(sid), dirs_exist_ok=True)
        return True

    # -- the run's record ------------------------------------------------------------------

    def write_run(self, info: dict) -> None:
        write_atomic(self.run_json, json.dumps(info, indent=2, sort_keys=True) + "\n")

    def read_run(self) -> dict | None:
        """The run's record, or None when the folder holds none (not a batch output)."""
        try:
            info = json.loads(self.run_json.read_text())
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def write_sources(self, sources: dict[str, dict[str, str]]) -> None:
        """Student id -> {code file name: text}."""
        write_atomic(self.sources_json, json.dumps(sources, sort_keys=True))

    def read_sources(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.sources_json.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            str(sid): {n: t for n, t in files.items() if n in CODE_FILES and isinstance(t, str)}
            for sid, files in data.items()
            if isinstance(files, dict)
        }

    def remove_similarity(self) -> None:
        for path in (self.similarity_json, self.similarity_html):
            path.unlink(missing_ok=True)


def _holds(path: Path, content: str | dict) -> bool:
    """Whether the file holds ``content`` (text, or the data of a JSON file)."""
    try:
        text = path.read_text(encoding="utf-8")
        return (json.loads(text) if isinstance(content, dict) else text) == content
    except (OSError, ValueError):
        return False
