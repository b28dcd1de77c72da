"""What grading writes: the gradebook (CSV and JSON, the same rows), one feedback
file per submission, and a digest of them all.

``DIR/gradebook.csv`` and ``DIR/gradebook.json`` have one row per exercise of each
submission's chapter, with the columns ``submission, student, chapter, exercise,
points, max_points, student_points, student_max_points, status, message``.
``student`` is the submission's folder (``alice`` for ``alice/02_autograd.ipynb``;
the file name's stem for a file at the top), and ``student_points`` /
``student_max_points`` that student's total over all their submissions.  ``status``
is one of

- ``passed``        every check and hidden check passed: full points;
- ``failed``        a check failed (the message says which, and how);
- ``missing``       the submission has no solution cell for the exercise;
- ``duplicated``    it has more than one;
- ``timeout``       its code ran past ``--timeout`` seconds in one cell, or the whole
                    notebook ran past ``--notebook-timeout``;
- ``crashed``       it killed the kernel (``os._exit``, a segfault);
- ``memory-limit``, ``cpu-limit``, ``output-limit``, ``process-limit``, ``file-limit``
                    it hit that limit of the sandbox (the message gives the number);
- ``not-run``       an earlier cell outside the exercises stopped the notebook;
- ``error``         the submission could not be graded at all (not a notebook, unknown
                    chapter); one row with an empty exercise.

``message`` is for the instructor and may quote hidden checks.
``DIR/feedback/alice/02_autograd.md`` is for the learner: the same verdicts, but a
failed hidden check says only which exercise it was.  No path of the grading machine
appears in either (``scrub``).

``DIR/SHA256SUMS`` lists the SHA-256 of every file written; ``write`` returns the
digest of that list, which the command prints: ``learntorch-course verify DIR
--digest ...`` later tells whether anything was changed since.
"""
import csv
import hashlib
import json
import os
import sys
from pathlib import Path

COLUMNS = ("submission", "student", "chapter", "exercise", "points", "max_points",
           "student_points", "student_max_points", "status", "message")
SUMS = "SHA256SUMS"


def student_of(submission_name):
    """``alice/02_autograd.ipynb`` -> ``alice``; ``02_autograd.ipynb`` -> ``02_autograd``."""
    parts = submission_name.split("/")
    if len(parts) > 1:
        return parts[0]
    return parts[0][:-len(".ipynb")] if parts[0].endswith(".ipynb") else parts[0]


def feedback_paths(out_dir, submission_names):
    """``{name: path}``: ``alice/02_autograd.ipynb`` -> ``OUT/feedback/alice/02_autograd.md``.

    Paths mirror the submissions' folders, so two submissions never share one; names
    that would still meet (``x.ipynb`` and ``x``, or ``A.ipynb`` and ``a.ipynb`` on a
    case-insensitive disk) get `` (2)``, `` (3)``, ... in the order given."""
    taken, paths = set(), {}
    for name in submission_names:
        stem = name[:-len(".ipynb")] if name.endswith(".ipynb") else name
        candidate, number = stem, 1
        while (candidate + ".md").lower() in taken:
            number += 1
            candidate = f"{stem} ({number})"
        taken.add((candidate + ".md").lower())
        paths[name] = Path(out_dir) / "feedback" / (candidate + ".md")
    return paths


def feedback_path(out_dir, submission_name):
    """The feedback file of one submission (when it is the only one)."""
    return feedback_paths(out_dir, [submission_name])[submission_name]


def _number(value):
    return int(value) if float(value).is_integer() else value


def _machine_paths(extra=()):
    """Folders of this machine that a message may mention, longest first, with what
    replaces them."""
    places = [(p, "<python>") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
    for name in ("learntorch", "widgets", "course"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            places.append((str(Path(module.__file__).resolve().parent.parent), "<course>"))
    places += [(str(Path(p).resolve()), "<grader>") for p in extra]
    places += [(os.getcwd(), "<grader>"), (os.path.expanduser("~"), "<home>")]
    found = [(str(path), label) for path, label in places if path and len(str(path)) > 1]
    return sorted(set(found), key=lambda item: -len(item[0]))


def scrub(text, extra=()):
    """``text`` without the folders of the grading machine (see ``_machine_paths``)."""
    for path, label in _machine_paths(extra):
        text = text.replace(path, label)
    return text


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
                  "", "```text", row.feedback.rstrip().replace("```", "'''"), "```", ""]
    return "\n".join(lines)


def table(rows, extra_paths=()):
    """The gradebook's rows as dicts (``COLUMNS``), with each student's totals."""
    totals = {}
    for row in rows:
        points, most = totals.get(student_of(row.submission), (0, 0))
        totals[student_of(row.submission)] = (points + row.points, most + row.max_points)
    out = []
    for row in rows:
        entry = row.gradebook()
        student = student_of(row.submission)
        entry.update(student=student, points=_number(row.points),
                     max_points=_number(row.max_points),
                     student_points=_number(totals[student][0]),
                     student_max_points=_number(totals[student][1]),
                     message=scrub(row.message, extra_paths))
        out.append({key: entry[key] for key in COLUMNS})
    return out


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _remove_previous(out_dir):
    """The files an earlier grading wrote into ``out_dir`` (read-only, listed in its
    SHA256SUMS) go, so that nothing stale sits beside the new ones."""
    sums = out_dir / SUMS
    if not sums.is_file():
        return
    for line in sums.read_text(encoding="utf-8", errors="replace").splitlines():
        name = line.partition("  ")[2]
        path = (out_dir / name).resolve()
        if name and out_dir.resolve() in path.parents and path.is_file():
            path.unlink()
    sums.unlink()


def write(rows, out_dir, extra_paths=()):
    """Write gradebook.csv, gradebook.json, the feedback files and SHA256SUMS; returns
    ``(paths written, digest)``.  ``extra_paths``: more folders to keep out of the text
    (the sources, the submissions)."""
    out_dir = Path(out_dir)
    _remove_previous(out_dir)
    (out_dir / "feedback").mkdir(parents=True, exist_ok=True)
    entries = table(rows, extra_paths)
    with open(out_dir / "gradebook.csv", "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(entries)
    (out_dir / "gradebook.json").write_text(
        json.dumps(entries, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written = [out_dir / "gradebook.csv", out_dir / "gradebook.json"]
    by_submission = {}
    for row in rows:
        by_submission.setdefault(row.submission, []).append(row)
    paths = feedback_paths(out_dir, list(by_submission))
    for name, submission_rows in by_submission.items():
        path = paths[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scrub(feedback_text(submission_rows), extra_paths), encoding="utf-8")
        written.append(path)
    lines = [f"{_sha256(path)}  {path.relative_to(out_dir).as_posix()}\n" for path in written]
    (out_dir / SUMS).write_text("".join(lines), encoding="utf-8")
    for path in written + [out_dir / SUMS]:
        os.chmod(path, 0o444)   # a later change has to mean it
    return written, "sha256:" + _sha256(out_dir / SUMS)


def verify(out_dir, digest=None):
    """The problems of a graded folder (an empty list when nothing changed): files
    whose content no longer matches SHA256SUMS, and SHA256SUMS itself against the
    ``digest`` the command printed when given."""
    out_dir = Path(out_dir)
    sums = out_dir / SUMS
    if not sums.is_file():
        return [f"{sums} is missing"]
    problems = []
    if digest is not None and "sha256:" + _sha256(sums) != digest.strip():
        problems.append(f"{SUMS} is not the one grading wrote (its digest is not {digest})")
    listed = set()
    for line in sums.read_text(encoding="utf-8").splitlines():
        expected, _, name = line.partition("  ")
        listed.add(name)
        path = out_dir / name
        if not path.is_file():
            problems.append(f"{name} is missing")
        elif _sha256(path) != expected:
            problems.append(f"{name} was changed after grading")
    for path in sorted(out_dir.rglob("*")):
        name = path.relative_to(out_dir).as_posix()
        if path.is_file() and name != SUMS and name not in listed:
            problems.append(f"{name} was added after grading")
    return problems
