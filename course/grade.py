"""Grading submissions: each in a sandbox, judged against the instructor's own run.

``grade(source_dir, submissions)`` grades notebooks a class handed in.  It assumes a
hostile submission -- one written to earn points it did not earn, to read the
instructor's sources, to rewrite the gradebook, or to take the batch down -- and
draws a boundary between the submission's code and everything that decides a grade
(the threat model is in the README's instructor section):

1. each chapter source is read once (``course/grading/plan.py``): every check call is
   numbered, and for each the expected arguments that the submission's copy of the
   cell will not contain are known;
2. the instructor's source runs once per chapter (the *trusted* run): its checks pass,
   and what they compared is recorded in the grader's memory -- never on disk;
3. each submission runs in its own kernel in its own sandbox
   (``course/grading/sandbox.py``): the source's cells with only the solution cells
   swapped in (matched by exercise id; check cells always come from the source, with
   their expected values withheld).  Its checks only report what they observed, as
   plain data, through a pipe only the grader reads (``course/grading/kernel.py``);
4. the grader compares, in its own process (``course/grading/judge.py``): an exercise
   earns its points when every check call of the instructor's run has its twin in the
   submission's run and the two agree.

A cell that runs past ``timeout`` seconds, kills its kernel or hits a limit costs the
exercise it belongs to (or, outside the exercises, the last solution before it), and
the notebook runs again with that solution replaced by the release stub, so the
other exercises are still graded.  All the runs of one submission together get
``notebook_timeout`` seconds.  A submission that is not a notebook at all gets one
``error`` row.  Nothing a submission does stops the batch.
"""
import concurrent.futures
import dataclasses
import itertools
import math
import os
import queue
import shutil
import tempfile
import threading
import time
import traceback
from pathlib import Path

from .grading import judge, sandbox, submission as submitted
from .grading.kernel import Kernel, KernelError
from .grading.plan import Plan
from .notebook import SourceError, chapter_sources
from .release import stub_solution

DEFAULT_TIMEOUT = 60
_TRUSTED_DEADLINE = 3600   # seconds for the instructor's run of one chapter


@dataclasses.dataclass
class Row:
    """One line of the gradebook: one exercise of one submission."""
    submission: str
    chapter: str
    exercise: str
    points: float
    max_points: float
    status: str      # passed, failed, missing, duplicated, timeout, crashed, not-run,
                     # memory-limit, cpu-limit, output-limit, process-limit, file-limit, error
    message: str     # for the instructor: everything known
    feedback: str = ""  # for the learner: never a hidden check

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
    outcome: str = None   # passed, failed, or None: never reached
    error: str = ""       # "ExceptionType: message" of a failed cell


@dataclasses.dataclass
class Trusted:
    """What the instructor's run of one chapter recorded."""
    records: dict          # cell index -> the check records of that cell
    rng: dict              # cell index -> RNG states before that cell (opaque text)
    seconds: float
    record_bytes: int
    output_bytes: int


class Submission:
    """One submitted notebook on its way through grading."""

    def __init__(self, path, name, plans):
        self.path, self.name = Path(path), name
        self.chapter, self.rows, self.cells = "", [], []
        self.plan, self.notes = None, []
        self.stubbed = {}    # exercise id -> (status, message): graded without it
        self.limits_hit = {}  # exercise id -> (status, words): a limit hit in its cells
        self.runs = 0
        self.solutions, self.problems = {}, {}
        try:
            self.notebook = submitted.read(path)
        except submitted.SubmissionError as error:
            self.fail("error", f"cannot grade {self.path.name}: {error}")
            return
        plan, note = submitted.chapter_of(self.notebook, self.path, plans)
        if plan is None:
            self.fail("error", f"cannot tell which chapter {self.path.name} is: its metadata "
                               f"has no learntorch chapter and its name does not start with the "
                               f"NN_ of a chapter ({', '.join(sorted(plans))})")
            return
        self.plan, self.chapter = plan, plan.chapter
        if note:
            self.notes.append(note)
        self.solutions, self.problems, note = submitted.solutions_of(self.notebook, plan)
        if note:
            self.notes.append(note)

    def fail(self, status, message):
        self.rows = [Row(self.name, self.chapter, "", 0, 0, status, message, message)]

    @property
    def done(self):
        return bool(self.rows)

    def code(self, index):
        """What this submission's run sends for code cell ``index`` of the source."""
        exercise = self.plan.solution_of.get(index)
        if exercise is None:
            return self.plan.sandbox_source(index)
        if exercise.id in self.solutions and exercise.id not in self.stubbed:
            return self.solutions[exercise.id]
        return stub_solution(self.plan.cells[index]["source"], exercise.id, exercise.hint)


def submission_names(paths):
    """Short unique names for the submissions: paths relative to their common folder."""
    resolved = [Path(p).resolve() for p in paths]
    if not resolved:
        return []
    common = Path(os.path.commonpath([p.parent for p in resolved]))
    return [p.relative_to(common).as_posix() for p in resolved]


# --- running a notebook in a kernel --------------------------------------------------

_PRELUDE = """\
import course.grading.in_kernel as __learntorch_grading__
__learntorch_grading__.begin({mode!r}, {channel})
from course.checks import _at_site as __learntorch_site__, _WITHHELD as __learntorch_withheld__
"""


def _run(plan, kernel, code_of, timeout, rng):
    """Run a submission's code cells in ``kernel``, in order, each non-solution cell
    starting from the instructor's run's RNG states; returns ``(runs, stop)``: each
    cell's CellRun by index, and the index of the cell that ended the run early
    (timeout, dead kernel, limit, time used up) or None."""
    prelude = kernel.execute(_PRELUDE.format(mode="sandbox", channel=kernel.channel),
                             timeout, silent=True)
    if prelude.status != "ok":
        raise KernelError(f"the grading kernel refused its set-up ({prelude.status}: "
                          f"{prelude.ename} {prelude.evalue})")
    runs = {}
    for index in plan.code:
        if index not in plan.solution_of:
            if rng and index in rng:
                step = kernel.execute(f"__learntorch_grading__.restore_rng({rng[index]!r})",
                                      timeout, silent=True)
                if step.status not in ("ok", "error"):
                    runs[index] = step
                    return runs, index
        run = kernel.execute(code_of(index), timeout)
        runs[index] = run
        if run.status not in ("ok", "error"):
            return runs, index
    return runs, None


class _Batch:
    """The shared state of one call of ``grade``."""

    def __init__(self, isolation, limits, timeout, notebook_timeout, jobs, hidden, base,
                 report):
        self.isolation, self.limits, self.timeout = isolation, limits, timeout
        self.notebook_timeout, self.hidden, self.base = notebook_timeout, hidden, base
        self.report = report
        self.accounts = queue.Queue()
        self.held = sandbox.Accounts(jobs, isolation)
        self.all_accounts = self.held.held
        for account in self.all_accounts:
            sandbox.check_account(isolation, account)
            self.accounts.put(account)
        self.numbers = itertools.count(1)
        self.lock = threading.Lock()
        self.numba = os.path.join(base, "numba")
        os.makedirs(self.numba)
        seed = os.environ.get("NUMBA_CACHE_DIR")
        if seed and os.path.isdir(seed):
            shutil.copytree(seed, self.numba, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("*.lock"))
        self.trusted = {}

    def kernel(self, account, deadline, limits):
        with self.lock:
            name = f"run-{next(self.numbers)}"
        return Kernel(self.isolation, account, limits, self.base, name, self.hidden,
                      self.numba, deadline)

    def with_account(self, work, *args):
        account = self.accounts.get()
        try:
            return work(account, *args)
        finally:
            self.accounts.put(account)

    # --- the instructor's run --------------------------------------------------

    def prepare_trusted(self, account, plan):
        """Run the instructor's source; returns its Trusted record, or raises SourceError
        when the source does not pass its own checks under grading."""
        start = time.monotonic()
        rng = {}
        limits = dataclasses.replace(self.limits, cpu_seconds=_TRUSTED_DEADLINE,
                                     output_mb=max(self.limits.output_mb, 1024))
        kernel = self.kernel(account, start + _TRUSTED_DEADLINE, limits)
        try:
            prelude = kernel.execute(_PRELUDE.format(mode="trusted", channel=kernel.channel),
                                     max(self.timeout, 300), silent=True)
            if prelude.status != "ok":
                raise KernelError(f"the grading kernel refused its set-up: {prelude.ename} "
                                  f"{prelude.evalue}")
            runs, stop = {}, None
            for index in plan.code:
                if index not in plan.solution_of:
                    snapshot = kernel.execute("__learntorch_grading__.snapshot_rng()",
                                              max(self.timeout, 300), silent=True)
                    if snapshot.rng:
                        rng[index] = snapshot.rng
                run = kernel.execute(plan.trusted_source(index), max(self.timeout, 300))
                runs[index] = run
                if run.status not in ("ok", "error"):
                    stop = index
                    break
            record_bytes, output_bytes = kernel.record_bytes, kernel.output_bytes
            with self.lock:   # what it compiled, every submission's run can start with
                shutil.copytree(kernel.numba, self.numba, dirs_exist_ok=True)
        finally:
            kernel.stop()
            kernel.remove()
        problems = []
        if stop is not None:
            problems.append(f"cell {stop + 1} did not finish ({runs[stop].status})")
        for index, run in runs.items():
            if index not in plan.role_of:
                continue   # a teaching cell may show a failing check on purpose
            if run.status == "error":
                problems.append(f"cell {index + 1} raised {judge.error_text(run)}")
            for record in run.records:
                if "malformed" in record or record["check"].get("failure"):
                    problems.append(f"cell {index + 1}: " + (
                        record["check"]["failure"] if "check" in record else "bad record"))
        if problems:
            raise SourceError(f"{plan.path}: the instructor source fails its own checks "
                              f"under grading: " + "; ".join(problems[:5]))
        records = {index: [r for r in run.records if "check" in r]
                   for index, run in runs.items()}
        return Trusted(records, rng, time.monotonic() - start, record_bytes, output_bytes)

    # --- a submission -----------------------------------------------------------

    def grade_one(self, account, graded):
        try:
            self._grade(account, graded)
        except KernelError as error:
            graded.fail("error", f"the grading kernel failed on this machine: {error}")
        except Exception as error:   # a bug of the grader: one row, and the batch goes on
            self.report(f"learntorch-course grade: internal error on {graded.name}:\n"
                        + traceback.format_exc())
            graded.fail("error", f"internal error of the grader ({type(error).__name__}: "
                                 f"{error}); the batch went on")
        return graded

    def _grade(self, account, graded):
        plan, trusted = graded.plan, self.trusted[graded.plan.chapter]
        budget = self.notebook_timeout or (3 * self.timeout + 4 * trusted.seconds + 60)
        # a chapter that draws a lot may print more than the limit: twice its own output
        output_mb = max(self.limits.output_mb, math.ceil(2 * trusted.output_bytes / 2 ** 20))
        limits = dataclasses.replace(
            self.limits, cpu_seconds=self.limits.cpu_seconds or int(math.ceil(budget)) + 60,
            output_mb=output_mb)
        deadline = time.monotonic() + budget
        while True:
            kernel = self.kernel(account, deadline, limits)
            kernel.record_limit = 4 * trusted.record_bytes + 16 * 1024 * 1024
            try:
                runs, stop = _run(plan, kernel, graded.code, self.timeout, trusted.rng)
                signal_number = kernel.exit_status() if stop is not None else None
            finally:
                kernel.stop()
                kernel.remove()
            graded.runs += 1
            if stop is None or not self._stub_culprit(graded, runs, stop, signal_number,
                                                      limits):
                break
        self._finish(graded, runs, stop, budget)

    def _stub_culprit(self, graded, runs, stop, signal_number, limits):
        """Blame the exercise whose code stopped the run; True: run again without it."""
        plan = graded.plan
        run = runs[stop]
        if run.status == "out-of-time" or graded.runs > len(plan.exercises) + 1:
            return False
        role = plan.role_of.get(stop)
        place = {"solution": "the solution cell", "check": "a check cell",
                 "hidden-check": "a hidden check"}.get(role, "a cell after it")
        culprit = plan.exercise_of.get(stop)
        if culprit is None or culprit in graded.stubbed:
            earlier = [e for e in plan.exercises
                       if e.solution < stop and e.id not in graded.stubbed]
            culprit = earlier[-1].id if earlier else None
        if culprit is None:
            return False
        if run.status == "timeout":
            status, what = "timeout", f"ran longer than the {self.timeout:g} s limit for one cell"
        elif run.status == "output":
            status, what = "output-limit", (f"printed, displayed or reported more than its "
                                            f"output limit ({limits.output_mb} MB)")
        elif signal_number == 24:   # SIGXCPU
            status, what = "cpu-limit", (f"used more than its {limits.cpu_seconds} s of CPU "
                                         f"time")
        elif signal_number == 25:   # SIGXFSZ
            status, what = "output-limit", (f"wrote a file larger than "
                                            f"{limits.file_size_mb} MB")
        else:
            status, what = "crashed", "killed the kernel"
        graded.stubbed[culprit] = (status, (
            f"exercise {culprit} {what} (in {place}); the rest of the notebook was graded "
            f"again without this solution"))
        return any(c > stop for e in plan.exercises if e.id not in graded.stubbed
                   for c in e.checks + e.hidden_checks)

    def _finish(self, graded, runs, stop, budget):
        plan = graded.plan
        out_of_time = stop is not None and runs[stop].status == "out-of-time"
        graded.cells = []
        for index in plan.code:
            run = runs.get(index)
            if run is not None and run.status not in ("ok", "error"):
                run = None   # it never finished
            outcome = None if run is None else ("passed" if run.status == "ok" else "failed")
            graded.cells.append(CellResult(index, plan.exercise_of.get(index),
                                           plan.role_of.get(index), outcome,
                                           judge.error_text(run) if outcome == "failed"
                                           else ""))
        trusted = self.trusted[plan.chapter]
        for exercise in plan.exercises:
            def row(points, status, message, feedback=None):
                notes = "".join(f"\n(note: {note})" for note in graded.notes)
                graded.rows.append(Row(graded.name, graded.chapter, exercise.id, points,
                                       exercise.points, status, message + notes,
                                       message if feedback is None else feedback))
            if exercise.id in graded.problems:
                row(0, *graded.problems[exercise.id])
                continue
            if exercise.id in graded.stubbed:
                row(0, *graded.stubbed[exercise.id])
                continue
            cells = [exercise.solution] + exercise.checks + exercise.hidden_checks
            if out_of_time and max(cells) >= stop:
                during = min(cells) <= stop
                row(0, "timeout" if during else "not-run", (
                    f"the whole notebook ran past its {budget:.0f} s limit (all its runs "
                    f"together) " + ("while this exercise's cells ran" if during
                                     else "before this exercise's cells ran")))
                continue
            problem = judge.exercise_problem(plan, exercise, trusted, runs)
            solution = runs.get(exercise.solution)
            note = (f"\n(your solution cell raised "
                    f"{judge.error_text(solution).splitlines()[0][:300]})"
                    if solution is not None and solution.status == "error" else "")
            if problem is None:
                row(exercise.points, "passed", "all checks passed")
                continue
            limit = next((judge.limit_hit(runs.get(c), self.limits) for c in cells
                          if judge.limit_hit(runs.get(c), self.limits)), None)
            if limit is not None:
                status, words = limit
                row(0, status, f"exercise {exercise.id} {words}; {problem.message}",
                    f"exercise {exercise.id} {words}")
                continue
            status = "not-run" if problem.status == "not-run" else "failed"
            row(0, status, problem.message + note, problem.feedback + note)


# --- the whole batch ---------------------------------------------------------------

def _base_folder(workdir):
    """A folder for the runs' sockets and caches.  Unix socket paths are short (about
    100 bytes), so it is a short path in the system's temporary folder unless
    ``workdir`` is short too."""
    parent = str(workdir) if workdir and len(str(workdir)) < 60 else tempfile.gettempdir()
    base = tempfile.mkdtemp(prefix="ltg-", dir=parent)
    os.chmod(base, 0o711)
    return base


def grade(source_dir, submissions, *, timeout=DEFAULT_TIMEOUT, jobs=1, workdir=None,
          notebook_timeout=None, limits=None, isolation=None, protect=(), report=None):
    """Grade ``submissions`` (notebook paths) against the chapter sources of
    ``source_dir``; returns the Submission objects, each with ``rows`` (one per
    exercise of its chapter) and ``cells`` (the final run's per-cell results).

    ``isolation`` forces a weaker sandbox ("namespaces" or "reduced"); ``protect``
    lists more paths no submission may see (the gradebook's folder); ``report``
    receives what the instructor should read (the isolation level, warnings)."""
    report = report or (lambda text: None)
    sources = chapter_sources(source_dir)
    if not sources:
        raise FileNotFoundError(f"{source_dir}: no chapter sources (NN_topic.ipynb files)")
    plans = {}
    for source in sources:   # a bad source stops everything, before any grading
        plan = Plan(source)
        plans[plan.chapter] = plan
    unique = list(dict.fromkeys(Path(p).resolve() for p in submissions))
    graded = [Submission(path, name, plans)
              for path, name in zip(unique, submission_names(unique))]
    for one in graded:
        for note in one.notes:
            report(f"warning: {one.name}: {note}")
    pending = [s for s in graded if not s.done]
    if not pending:
        return graded
    chosen = sandbox.detect(isolation)
    report(chosen.describe())
    limits = limits or sandbox.Limits()
    jobs = max(1, jobs)
    base = _base_folder(workdir)
    hidden = [str(Path(source_dir).resolve()), base] + [str(p) for p in protect] + \
        sorted({str(p.parent) for p in unique}) + ([str(workdir)] if workdir else [])
    batch = None
    try:
        batch = _Batch(chosen, limits, timeout, notebook_timeout, jobs, hidden, base, report)
        needed = sorted({s.plan.chapter for s in pending})
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        try:
            done = {chapter: pool.submit(batch.with_account, batch.prepare_trusted,
                                         plans[chapter]) for chapter in needed}
            for chapter, future in done.items():
                batch.trusted[chapter] = future.result()
            if chosen.dedicated:   # the compiled-kernel cache is now the instructor's alone
                for root, dirs, files in os.walk(batch.numba):
                    for entry in [root] + [os.path.join(root, f) for f in dirs + files]:
                        os.chown(entry, 0, 0)
                        os.chmod(entry, 0o755 if os.path.isdir(entry) else 0o644)
            list(pool.map(lambda one: batch.with_account(batch.grade_one, one), pending))
        finally:   # on an error or Ctrl-C, what has not started yet never starts
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        if batch is not None:
            for account in batch.all_accounts if chosen.dedicated else []:
                sandbox.sweep(account)   # nothing a submission started outlives grading
            batch.held.release()
        shutil.rmtree(base, ignore_errors=True)
    return graded
