"""Verdicts: a submission's run against the instructor's, in the grader's process.

For each exercise, ``judge`` looks at the cells of its checks and hidden checks, in
notebook order.  Each check call of the instructor's run (identified by its *site*,
the number grading gave the call, and how many times that site had reported in the
cell so far) must have its twin in the submission's run, and the two must compare
equal the way the check compares (``course/observation.py``):

- a *trusted* call: the submission's value against the instructor's expected value;
- a *relational* call (both sides come from the learner's code, see taint.py): the
  submission's value against the submission's own reference value.

The instructor's run also fixes the comparison's options (``atol``, ``rtol``).  A call
the submission never reported, one it reported that the instructor's run did not
make, a malformed report or a check cell that raised all fail the exercise.

What the learner is told (``feedback``) never shows a hidden check: only the
exercise and a fixed sentence.  A visible check's message is the one the learner's
own kernel would have shown, cut to ``VISIBLE_LIMIT`` characters.
"""
import dataclasses
import re

from .. import observation

VISIBLE_LIMIT = 1500
HIDDEN_FEEDBACK = ("a hidden check failed: the solution does not give the right result on "
                   "all of the grader's own inputs, which are not shown")
# limits hit inside a cell, recognised by the message of the error the kernel reported
_LIMIT_MESSAGES = {
    "file-limit": re.compile(r"\[Errno 24\]"),
    "process-limit": re.compile(r"\[Errno 11\]|can't start new thread"),
    "output-limit": re.compile(r"\[Errno 27\]|\[Errno 28\]|\[Errno 122\]"),
}


@dataclasses.dataclass
class Problem:
    """Why an exercise failed, for the instructor and for the learner."""
    status: str
    message: str
    feedback: str


def limit_hit(run, limits):
    """The limit a cell's failure shows it hit, as ``(status, words)``, or None."""
    if run is None or run.status != "error":
        return None
    name, value = run.ename, run.evalue
    if "MemoryError" in name:
        return "memory-limit", f"ran out of its {limits.memory_mb} MB of memory ({name})"
    if _LIMIT_MESSAGES["file-limit"].search(value):
        return "file-limit", f"opened more than {limits.open_files} files at once"
    if _LIMIT_MESSAGES["process-limit"].search(value):
        return "process-limit", (f"started more than {limits.processes} processes or "
                                 f"threads")
    if _LIMIT_MESSAGES["output-limit"].search(value):
        return "output-limit", (f"wrote more than its files may hold ({limits.file_size_mb} "
                                f"MB for one file, {limits.disk_mb} MB in all)")
    return None


def error_text(run):
    return f"{run.ename}: {run.evalue}".rstrip(": ") if run.ename else "the cell failed"


def _keyed(records):
    """{(site, occurrence): record} in the order the records came."""
    counts, keyed = {}, {}
    for record in records:
        if "malformed" in record:
            keyed[("malformed", len(keyed))] = record
            continue
        check = record["check"]
        site = check["site"]
        counts[site] = counts.get(site, 0) + 1
        keyed[(site, counts[site])] = check
    return keyed


def _raised(actual, expected_kind):
    """The exception a call raised where the learner's kernel would have let it
    through (``check_function``'s value cases; the stub's NotImplementedError in
    ``check_raises``), as the cell's error would read, else None."""
    raised = actual.get("raised") if isinstance(actual, dict) else None
    if raised is None:
        return None
    if expected_kind == "raises":
        if "builtins.NotImplementedError" not in raised["types"]:
            return None
    return f"{raised['name']}: {raised['message']}"


def compare_call(trusted, student, relational):
    """``(what, text)`` for a check call that failed -- "wrong" with the check's
    message, or "error" with the exception the learner's code raised -- or None."""
    kind = trusted["kind"]
    actual = student["actual"]
    is_outcome = isinstance(actual, dict) and ("returned" in actual or "raised" in actual)
    expected = student.get("expected") if relational else trusted["expected"]
    raised = _raised(actual, kind)
    if raised and not (kind == "raises" and expected and
                       "builtins.NotImplementedError" in expected.get("raises", [])):
        return "error", raised
    if kind == "raises" and not is_outcome:
        return "wrong", f"{trusted['name']}: the submission did not report what the call did"
    if kind != "raises" and is_outcome:
        actual = actual["returned"]
    if expected is None:
        return "wrong", (f"{trusted['name']}: the submission's run did not report its "
                         f"reference value")
    inputs = student.get("inputs", "") if relational else trusted.get("inputs", "")
    try:
        failure = observation.compare(kind, actual, expected, trusted.get("options"))
    except (TypeError, ValueError, KeyError) as error:
        return "wrong", f"{trusted['name']}: cannot compare ({error})"
    return None if failure is None else ("wrong", failure.message(trusted["name"], inputs))


def check_cell(index, trusted_records, run, relational_sites):
    """The first failure in check cell ``index`` of the submission's run, or None."""
    expected = _keyed(trusted_records)
    got = _keyed(run.records) if run is not None else {}
    for key, trusted in expected.items():
        student = got.get(key)
        if student is None:
            if run is not None and run.status == "error":
                return "error", error_text(run)
            return "missing", (f"{trusted['name']}: the check did not run to the end "
                               f"(the submission reported no result for it)")
        failure = compare_call(trusted, student, key[0] in relational_sites)
        if failure is not None:
            return failure
    extra = [key for key in got if key not in expected]
    if extra:
        return "extra", ("the check cell reported more results than the instructor's run "
                         "(its checks ran on other values, or the submission reported "
                         "results of its own)")
    if run is not None and run.status == "error":
        return "error", error_text(run)
    return None


def exercise_problem(plan, exercise, trusted, runs):
    """Why ``exercise`` failed in a finished run (``runs``: {cell index: CellRun}), or
    None when every check passed."""
    relational = {s.number for s in plan.sites.values() if s.relational}
    for index in exercise.checks + exercise.hidden_checks:
        run = runs.get(index)
        hidden = index in exercise.hidden_checks
        place = plan.place(index)
        if run is None:
            return Problem("not-run", f"{place} was not run: an earlier cell stopped the "
                                      f"notebook", f"{'hidden check' if hidden else 'check'} "
                                      f"not run: an earlier cell stopped the notebook")
        found = check_cell(index, trusted.records.get(index, []), run, relational)
        if found is None:
            continue
        what, text = found
        if what == "wrong":
            text = f"ExerciseCheckFailed: {exercise.id} {text}"
        message = f"{place} failed: {text}"
        if hidden:
            feedback = f"exercise {exercise.id}: {HIDDEN_FEEDBACK}"
        else:
            feedback = observation.cap(f"check failed: {text}", VISIBLE_LIMIT)
        return Problem("failed", message, feedback)
    return None
