"""Grading submissions with nbval: per exercise, with points, timeouts and tamper-proof checks.

For each submitted notebook ``grade``:

1. finds its chapter source: by the notebook metadata that ``release`` wrote
   (``{"learntorch": {"chapter": "02_autograd"}}``), else by the file name's ``NN_``;
2. builds the notebook to run: the *instructor source*, cell for cell, with only the
   ``solution`` cells swapped for the submission's (matched by exercise id in the cell
   metadata, never by cell id or position).  Check and hidden-check cells always come
   from the source, so editing or deleting them in a submission changes nothing.  An
   exercise whose solution cell is missing or duplicated in the submission gets the
   release stub instead (and 0 points, with a message);
3. runs it with nbval (``python -m pytest --nbval-lax --nbval-current-env``, one
   kernel per notebook, cells in order) and reads each cell's outcome through the
   ``course._nbval_report`` plugin;
4. when a cell timed out (``--nbval-cell-timeout``) or the kernel died in it
   (``os._exit``, a segfault), the exercise that cell belongs to gets 0 points
   ("timeout" / "crashed") and the notebook runs again with that exercise's
   solution replaced by the release stub, so the rest is graded as if it had not
   been attempted.  Each exercise can be stubbed once, so this ends.  ``sys.exit()``
   in a cell is only an exception in IPython: that cell fails, the rest runs on;
5. awards an exercise its points when all of its checks and hidden checks passed.

Exercises run in one kernel, in order, as the learner ran them: a broken earlier
solution can make a later check fail when that check uses it.  Chapter authors keep
each exercise's checks independent of other exercises' solutions where they can.

What the learner is told about a failed hidden check is its exception type and the
first line of its message only (``hidden check failed: ExerciseCheckFailed:
relu: wrong values``): the later lines of a check's message show the inputs and the
expected values, and the hidden checks' inputs stay secret.  Never the source or a
traceback.  The instructor's gradebook has the whole message.

Limits: the kernel is shared by the learner's code and the checks, so a solution
that deliberately patches the checking code (``course.checks``, builtins) could fool
the checks in that run; such solutions are flagged "review" in the gradebook message.
"""
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .notebook import marks, read_notebook, read_source, chapter_sources, write_notebook
from .release import cleared, stub_solution

DEFAULT_TIMEOUT = 60
# words in a solution cell that suggest it reaches into the checking machinery
_SUSPICIOUS = re.compile(r"course\.checks|ExerciseCheckFailed|sys\.modules|builtins|"
                         r"__import__|importlib|check_(close|equal|shape|raises|function)\s*=")


@dataclasses.dataclass
class Row:
    """One line of the gradebook: one exercise of one submission."""
    submission: str
    chapter: str
    exercise: str
    points: float
    max_points: float
    status: str      # passed, failed, missing, duplicated, timeout, crashed, not-run, error
    message: str     # for the instructor: everything known
    feedback: str = ""  # for the learner: never the source or details of a hidden check

    def gradebook(self):
        return {key: getattr(self, key) for key in
                ("submission", "chapter", "exercise", "points", "max_points", "status",
                 "message")}


@dataclasses.dataclass
class CellResult:
    """What happened to one code cell in the final run."""
    index: int            # position in the source notebook's cells
    exercise: str = None
    role: str = None
    outcome: str = None   # passed, failed, skipped, or None: never reached
    error: str = ""       # "ExceptionType: message" of a failed cell


class Submission:
    """One submitted notebook on its way through grading."""

    def __init__(self, path, name, sources):
        self.path, self.name = Path(path), name
        self.chapter, self.rows, self.cells = "", [], []
        self.stubbed = {}    # exercise id -> (status, message): graded without it
        self.runs = 0
        self.timeout = DEFAULT_TIMEOUT
        try:
            self.notebook = read_notebook(path)
        except ValueError as error:
            self.fail("error", f"cannot read the submission: {error}")
            return
        source = _find_source(self.notebook, self.path, sources)
        if source is None:
            self.fail("error", f"cannot tell which chapter {self.path.name} is: its metadata "
                               f"has no learntorch chapter and its name does not start with the "
                               f"NN_ of a chapter ({', '.join(p.name for p in sources)})")
            return
        self.chapter = source.stem
        self.source, self.exercises = read_source(source)
        self.solutions, self.problems = _submitted_solutions(self.notebook, self.exercises)

    def fail(self, status, message):
        self.rows = [Row(self.name, self.chapter, "", 0, 0, status, message, message)]

    @property
    def done(self):
        return bool(self.rows)

    def build(self):
        """The notebook to run, and for each of its code cells the source cell's index."""
        cells, code_cells = [], []
        for index, cell in enumerate(self.source["cells"]):
            mark = marks(cell)
            cell = cleared(cell) if mark else dict(cell)
            if mark.get("role") == "solution":
                exercise = next(e for e in self.exercises if e.id == mark["exercise"])
                if exercise.id in self.solutions and exercise.id not in self.stubbed:
                    cell["source"] = self.solutions[exercise.id]
                else:
                    cell["source"] = stub_solution(cell["source"], exercise.id, exercise.hint)
            if cell.get("cell_type") == "code":
                code_cells.append(index)
            cells.append(cell)
        return dict(self.source, cells=cells), code_cells


def _find_source(notebook, path, sources):
    by_stem = {source.stem: source for source in sources}
    chapter = notebook.get("metadata", {}).get("learntorch", {})
    chapter = chapter.get("chapter") if isinstance(chapter, dict) else None
    if chapter in by_stem:
        return by_stem[chapter]
    number = re.match(r"(\d\d)(_|$)", str(chapter)) or re.match(r"(\d\d)_", path.name)
    matches = [s for s in sources if number and s.name.startswith(number.group(1) + "_")]
    return matches[0] if len(matches) == 1 else None


def _submitted_solutions(notebook, exercises):
    """The submission's solution cell source per exercise id, and the problems
    (missing or duplicated solution cells) per exercise id."""
    found = {}
    for cell in notebook["cells"]:
        mark = marks(cell)
        if mark.get("role") == "solution" and cell.get("cell_type") == "code":
            found.setdefault(mark.get("exercise"), []).append(cell["source"])
    solutions, problems = {}, {}
    for exercise in exercises:
        copies = found.get(exercise.id, [])
        if len(copies) == 1:
            solutions[exercise.id] = copies[0]
        elif not copies:
            problems[exercise.id] = (
                "missing", f"no solution cell for exercise {exercise.id} in the submission "
                           f"(deleted, or its metadata changed); graded as not attempted")
        else:
            problems[exercise.id] = (
                "duplicated", f"{len(copies)} solution cells for exercise {exercise.id} in the "
                              f"submission; keep exactly one (copying the cell copies its "
                              f"metadata); graded as not attempted")
    return solutions, problems


# --- running notebooks with nbval ------------------------------------------------

def _pytest_command(notebooks, report, timeout, ini):
    return [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(ini.parent),
            "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "course._nbval_report",
            "--learntorch-report", str(report), "--nbval-lax", "--nbval-current-env",
            "--nbval-cell-timeout", str(timeout), "-q", "--tb=no", "--no-header",
            "-o", "addopts=", *map(str, notebooks)]


def run_notebooks(notebooks, workdir, timeout, jobs):
    """Run ``notebooks`` with nbval in ``jobs`` parallel pytest processes; returns
    ``{notebook path: {code cell number: record}}`` (records as written by
    course._nbval_report; a cell that started but never finished has only "event": "start")."""
    workdir = Path(workdir)
    ini = workdir / "pytest.ini"
    ini.write_text("[pytest]\n")   # keeps pytest from reading any project's settings
    chunks = [notebooks[i::jobs] for i in range(jobs) if notebooks[i::jobs]]
    processes = []
    for number, chunk in enumerate(chunks):
        report = workdir / f"report-{number}-{time.monotonic_ns()}.jsonl"
        cells = sum(_code_cells(nb) for nb in chunk)
        # a backstop only: nbval's own cell timeout normally ends every cell in time
        limit = len(chunk) * 120 + cells * (timeout + 15)
        process = subprocess.Popen(_pytest_command(chunk, report, timeout, ini), cwd=workdir,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        processes.append((process, report, time.monotonic() + limit))
    for process, report, deadline in processes:
        try:
            process.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
    results = {str(nb): {} for nb in notebooks}
    for _, report, _ in processes:
        if not report.exists():
            continue
        for line in report.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            cells = results.setdefault(record["notebook"], {})
            if record["event"] == "done" or record["cell"] not in cells:
                cells[record["cell"]] = record
    return results


def _code_cells(path):
    return sum(cell.get("cell_type") == "code" for cell in read_notebook(path)["cells"])


# --- judging a run ---------------------------------------------------------------

def _error(record):
    if record.get("ename"):
        return f"{record['ename']}: {record.get('evalue') or ''}".rstrip()
    return record.get("message", "")


def _disruption(records, code_cells):
    """The first code cell (number) that timed out, killed the kernel, or never
    finished; None when the notebook ran to the end."""
    for number in range(len(code_cells)):
        record = records.get(number)
        if record is None:
            return number if records else 0
        if record["event"] == "start" or record["timed_out"] or record["kernel_died"]:
            return number
    return None


def _judge(submission, records, code_cells):
    """Either stub the exercise that disrupted the run (and return True: run again)
    or record the final per-cell results (and return False)."""
    cell_of = {index: number for number, index in enumerate(code_cells)}
    number = _disruption(records, code_cells)
    if number is not None and submission.runs <= len(submission.exercises) + 1:
        record = records.get(number, {})
        index = code_cells[number]
        died = record.get("kernel_died") or record.get("event") == "start"
        what = ("killed the kernel" if died else
                f"ran longer than the {submission.timeout:g} s limit for one cell")
        role = marks(submission.source["cells"][index]).get("role")
        place = {"solution": "the solution cell", "check": "a check cell",
                 "hidden-check": "a hidden check"}.get(role, "a cell after it")
        culprit = marks(submission.source["cells"][index]).get("exercise")
        if culprit is None or culprit in submission.stubbed:
            # a cell outside the exercises: blame the latest solution that ran before it
            earlier = [e for e in submission.exercises
                       if e.solution < index and e.id not in submission.stubbed]
            culprit = earlier[-1].id if earlier else None
        if culprit is not None and record:
            status = "crashed" if died else "timeout"
            submission.stubbed[culprit] = (status, (
                f"exercise {culprit} {what} (in {place}); the rest of the notebook was "
                f"graded again without this solution"))
            later_checks = any(c > index for e in submission.exercises
                               if e.id not in submission.stubbed
                               for c in e.checks + e.hidden_checks)
            if later_checks:
                return True
    submission.cells = []
    for index in code_cells:
        record = records.get(cell_of[index], {})
        mark = marks(submission.source["cells"][index])
        outcome = record.get("outcome") if record.get("event") == "done" else None
        submission.cells.append(CellResult(index, mark.get("exercise"), mark.get("role"),
                                           outcome, _error(record) if outcome == "failed"
                                           else ""))
    _award(submission)
    return False


def _award(submission):
    by_index = {cell.index: cell for cell in submission.cells}
    for exercise in submission.exercises:
        def row(points, status, message, feedback=None):
            submission.rows.append(Row(submission.name, submission.chapter, exercise.id,
                                       points, exercise.points, status, message,
                                       message if feedback is None else feedback))
        if exercise.id in submission.problems:
            row(0, *submission.problems[exercise.id])
            continue
        if exercise.id in submission.stubbed:
            row(0, *submission.stubbed[exercise.id])
            continue
        failure = None
        for index in exercise.checks + exercise.hidden_checks:
            cell = by_index[index]
            if cell.outcome == "passed":
                continue
            hidden = index in exercise.hidden_checks
            kind = "hidden check" if hidden else "check"
            if cell.outcome is None:
                error = "not run: an earlier cell stopped the notebook"
            elif cell.outcome == "skipped":
                error = "skipped"
            else:
                error = cell.error
            first_line = error.split("\n", 1)[0]
            failure = (f"{kind} (cell {index + 1}) failed: {error}",
                       f"{kind} failed: {first_line if hidden else error}")
            break
        solution = by_index[exercise.solution]
        note = (f"\n(your solution cell raised {solution.error.splitlines()[0]})"
                if solution.outcome == "failed" and solution.error else "")
        review = _SUSPICIOUS.search(submission.solutions.get(exercise.id, ""))
        flag = (f"\nreview: the solution cell mentions {review.group(0)!r}, which can reach "
                f"into the checking code" if review else "")
        if failure is None:
            row(exercise.points, "passed", "all checks passed" + flag, "all checks passed")
        else:
            status = "not-run" if "not run:" in failure[0] else "failed"
            row(0, status, failure[0] + note + flag, failure[1] + note)


# --- the whole batch ---------------------------------------------------------------

def submission_names(paths):
    """Short unique names for the submissions: paths relative to their common folder."""
    resolved = [Path(p).resolve() for p in paths]
    if not resolved:
        return []
    common = Path(os.path.commonpath([p.parent for p in resolved]))
    return [p.relative_to(common).as_posix() for p in resolved]


def grade(source_dir, submissions, *, timeout=DEFAULT_TIMEOUT, jobs=1, workdir=None):
    """Grade ``submissions`` (notebook paths) against the chapter sources of
    ``source_dir``; returns the Submission objects, each with ``rows`` (one per
    exercise of its chapter) and ``cells`` (the final run's per-cell results)."""
    sources = chapter_sources(source_dir)
    if not sources:
        raise FileNotFoundError(f"{source_dir}: no chapter sources (NN_topic.ipynb files)")
    for source in sources:
        read_source(source)  # a bad source stops everything, before any grading
    unique = list(dict.fromkeys(Path(p).resolve() for p in submissions))
    graded = [Submission(path, name, sources)
              for path, name in zip(unique, submission_names(unique))]
    for submission in graded:
        submission.timeout = timeout
    with tempfile.TemporaryDirectory(prefix="learntorch-grade-", dir=workdir) as work:
        pending = [s for s in graded if not s.done]
        while pending:
            built = {}
            for number, submission in enumerate(pending):
                folder = Path(work) / f"{graded.index(submission)}-{submission.runs}"
                folder.mkdir()
                notebook, code_cells = submission.build()
                path = folder / f"{submission.chapter}.ipynb"
                write_notebook(notebook, path)
                built[str(path)] = (submission, code_cells)
                submission.runs += 1
            results = run_notebooks(list(built), work, timeout, max(1, jobs))
            pending = [submission for path, (submission, code_cells) in built.items()
                       if _judge(submission, results.get(path, {}), code_cells)]
    return graded
