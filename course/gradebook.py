"""What grading writes: the gradebook (CSV and JSON, the same rows) and one feedback
file per submission.

``DIR/gradebook.csv`` and ``DIR/gradebook.json`` have one row per exercise of each
submission's chapter, with the columns ``submission, chapter, exercise, points,
max_points, status, message``.  ``status`` is one of

- ``passed``      every check and hidden check passed: full points;
- ``failed``      a check failed (the message says which, and how);
- ``missing``     the submission has no solution cell for the exercise;
- ``duplicated``  it has more than one;
- ``timeout``     the exercise's code ran past ``--timeout`` seconds in one cell;
- ``crashed``     it killed the kernel (``os._exit``, a segfault);
- ``not-run``     an earlier cell outside the exercises stopped the notebook;
- ``error``       the submission could not be graded at all (unreadable, unknown
                  chapter); one row with an empty exercise.

``message`` is for the instructor and may quote hidden checks.  ``DIR/feedback/NAME.md``
is for the learner: the same verdicts, but a failed hidden check shows only its
exception type and the first line of its message.
"""
import csv
import json
from pathlib import Path

COLUMNS = ("submission", "chapter", "exercise", "points", "max_points", "status", "message")


def feedback_path(out_dir, submission_name):
    """``alice/02_autograd.ipynb`` -> ``OUT/feedback/alice__02_autograd.md``."""
    stem = submission_name[:-len(".ipynb")] if submission_name.endswith(".ipynb") \
        else submission_name
    return Path(out_dir) / "feedback" / (stem.replace("/", "__") + ".md")


def _number(value):
    return int(value) if float(value).is_integer() else value


def feedback_text(rows):
    """The learner's feedback for one submission (its rows), as Markdown."""
    first = rows[0]
    total = sum(row.points for row in rows)
    possible = sum(row.max_points for row in rows)
    lines = [f"# Feedback on {first.submission}", ""]
    if first.chapter:
        lines += [f"Chapter {first.chapter}: {_number(total)} of {_number(possible)} points.", ""]
    for row in rows:
        title = f"exercise {row.exercise}" if row.exercise else "submission"
        lines += [f"## {title}: {row.status} ({_number(row.points)}/{_number(row.max_points)})",
                  "", "```text", row.feedback.rstrip(), "```", ""]
    return "\n".join(lines)


def write(rows, out_dir):
    """Write gradebook.csv, gradebook.json and the feedback files; returns their paths."""
    out_dir = Path(out_dir)
    (out_dir / "feedback").mkdir(parents=True, exist_ok=True)
    table = [row.gradebook() for row in rows]
    for entry in table:
        entry["points"], entry["max_points"] = (_number(entry["points"]),
                                                _number(entry["max_points"]))
    with open(out_dir / "gradebook.csv", "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(table)
    (out_dir / "gradebook.json").write_text(
        json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written = [out_dir / "gradebook.csv", out_dir / "gradebook.json"]
    by_submission = {}
    for row in rows:
        by_submission.setdefault(row.submission, []).append(row)
    for name, submission_rows in by_submission.items():
        path = feedback_path(out_dir, name)
        path.write_text(feedback_text(submission_rows), encoding="utf-8")
        written.append(path)
    return written
