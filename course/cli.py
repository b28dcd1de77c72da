"""``learntorch-course``: release learner copies of the chapters, grade submissions."""
import argparse
import sys
from pathlib import Path

from . import gradebook
from .grade import DEFAULT_TIMEOUT, grade
from .grading.sandbox import Limits
from .notebook import SourceError
from .release import release

DESCRIPTION = """\
The instructor's tool for the learntorch course.

The chapters are written once, as instructor sources (course/solutions/NN_topic.ipynb)
that contain the solutions and hidden checks. Exercise cells are marked in their cell
metadata: {"learntorch": {"exercise": "02.1", "role": "solution" | "check" |
"hidden-check", "points": 2, "hint": "..."}}; a solution cell holds its answer between
the lines "### BEGIN SOLUTION" and "### END SOLUTION".

  release  writes the learner copies (what chapters/ holds)
  grade    runs submitted copies against the sources and writes a gradebook
  verify   tells whether a gradebook folder changed since grading wrote it

Run "learntorch-course release --help", "... grade --help" or "... verify --help".
"""

RELEASE_HELP = """\
Write the learner copy of every chapter source NN_topic.ipynb in SOURCE_DIR into
OUT_DIR: each solution region becomes a stub that raises NotImplementedError with the
exercise id and its hint, hidden-check cells are removed, check cells are locked,
outputs and execution counts are cleared, cell ids are kept. The result is
deterministic (the same bytes every time). A source with an unmatched BEGIN/END
marker, a solution cell without an exercise id, or an exercise without checks is
refused, naming the notebook and the cell, and nothing is written.

The course's own chapters: learntorch-course release course/solutions chapters
"""

GRADE_HELP = """\
Grade submitted notebooks. Each submission is matched to its chapter source in
--source (by the notebook's metadata, else by its file name NN_...).

The instructor's source runs once per chapter, and its checks record what they
compare. Each submission then runs in its own sandbox: its own kernel, as a dedicated
unprivileged user when you are root, in a bubblewrap sandbox that sees neither the
sources nor --out nor the other submissions, under limits on time, memory, CPU,
processes, open files and output. Its cells are the source's with only the solution
cells swapped in (matched by exercise id), so edited or deleted check cells change
nothing; its checks only report what they saw, and the grader compares that with the
instructor's run in its own process. An exercise earns its points when all of its
checks and hidden checks agree. The first line of the output says how strong the
isolation is on this machine, and why when it is not full.

A cell that runs longer than --timeout seconds, kills the kernel or hits a limit
costs the exercise it belongs to; the notebook is then run again without that
solution, so the other exercises are still graded. All the runs of one submission
together get --notebook-timeout seconds. A missing or duplicated solution cell costs
that exercise; a file that is not a notebook gets one error row.

Writes OUT/gradebook.csv and OUT/gradebook.json (one row per exercise: submission,
student, chapter, exercise, points, max_points, student_points, student_max_points,
status, message), OUT/feedback/NAME.md for each submission (never a hidden check),
and OUT/SHA256SUMS; the digest printed at the end lets "learntorch-course verify"
tell later whether anything in OUT was changed.

Example: learntorch-course grade --source course/solutions submissions/*/*.ipynb
         --out grades --jobs 4
"""

VERIFY_HELP = """\
Check a folder written by "learntorch-course grade": every file still has the
SHA-256 listed in SHA256SUMS, none was added, and (with --digest) SHA256SUMS is the
one whose digest grading printed. Exit status 0 when nothing changed, 1 otherwise.
"""


def _parser():
    parser = argparse.ArgumentParser(prog="learntorch-course", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="{release,grade,verify}")
    commands.required = True
    rel = commands.add_parser("release", help="write the learner copies of the chapter sources",
                              description=RELEASE_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    rel.add_argument("source_dir", metavar="SOURCE_DIR", type=Path,
                     help="folder of instructor sources (NN_topic.ipynb)")
    rel.add_argument("out_dir", metavar="OUT_DIR", type=Path,
                     help="folder to write the learner copies into (created if needed)")
    gra = commands.add_parser("grade", help="grade submitted notebooks into a gradebook",
                              description=GRADE_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    gra.add_argument("--source", required=True, type=Path, metavar="SOURCE_DIR",
                     help="folder of instructor sources (with solutions and hidden checks)")
    gra.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION.ipynb",
                     help="the submitted notebooks")
    gra.add_argument("--out", required=True, type=Path, metavar="DIR",
                     help="folder for gradebook.csv, gradebook.json and feedback/")
    gra.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                     help=f"time limit for one cell (default {DEFAULT_TIMEOUT})")
    gra.add_argument("--notebook-timeout", type=float, default=None, metavar="SECONDS",
                     help="time limit for all the runs of one submission together (default: "
                          "3 x --timeout + 4 x the instructor's run + 60)")
    gra.add_argument("--jobs", type=int, default=1, metavar="N",
                     help="notebooks run in N parallel sandboxes (default 1)")
    defaults = Limits()
    gra.add_argument("--memory", type=int, default=defaults.memory_mb, metavar="MB",
                     help=f"address space of a submission's kernel (default "
                          f"{defaults.memory_mb})")
    gra.add_argument("--output-limit", type=int, default=defaults.output_mb, metavar="MB",
                     help=f"what a submission may print and display (default "
                          f"{defaults.output_mb})")
    gra.add_argument("--isolation", choices=("namespaces", "reduced"), default=None,
                     help="a weaker sandbox on purpose (what a grader that is not root "
                          "gets); by default the strongest this machine allows")
    ver = commands.add_parser("verify", help="tell whether a gradebook folder changed",
                              description=VERIFY_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    ver.add_argument("out_dir", metavar="DIR", type=Path, help="the folder grade wrote")
    ver.add_argument("--digest", default=None, help="the digest grade printed (sha256:...)")
    return parser


def _verify(args):
    problems = gradebook.verify(args.out_dir, args.digest)
    if problems:
        print(f"learntorch-course verify: {args.out_dir} changed since grading:",
              file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"{args.out_dir}: unchanged since grading" + (" (digest matches)" if args.digest
                                                         else ""))
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.command == "release":
            written = release(args.source_dir, args.out_dir)
            print(f"wrote {len(written)} learner copies into {args.out_dir}")
            return 0
        if args.command == "verify":
            return _verify(args)
        missing = [str(p) for p in args.submissions if not p.exists()]
        if missing:
            print(f"learntorch-course grade: no such file: {', '.join(missing)}",
                  file=sys.stderr)
            return 2
        limits = Limits(memory_mb=args.memory, output_mb=args.output_limit)
        graded = grade(args.source, args.submissions, timeout=args.timeout, jobs=args.jobs,
                       notebook_timeout=args.notebook_timeout, limits=limits,
                       isolation=args.isolation, protect=[args.out.resolve()],
                       report=lambda text: print(text, flush=True))
        # every submission's sandbox is gone by now: only then is the gradebook written
        rows = [row for submission in graded for row in submission.rows]
        _, digest = gradebook.write(rows, args.out, extra_paths=[
            args.source, *{p.resolve().parent for p in args.submissions}])
        total = sum(r.points for r in rows)
        print(f"graded {len(graded)} submissions ({sum(r.status == 'passed' for r in rows)} of "
              f"{len(rows)} exercises passed, {total:g} points); gradebook in "
              f"{args.out / 'gradebook.csv'}")
        print(f"gradebook digest: {digest} (check later: learntorch-course verify "
              f"{args.out} --digest {digest})")
        return 0
    except RuntimeError as error:   # the machine cannot sandbox as asked: say how to fix it
        print(f"learntorch-course {args.command}: {error}", file=sys.stderr)
        return 2
    except (SourceError, FileNotFoundError) as error:
        print(f"learntorch-course {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
