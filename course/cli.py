"""``learntorch-course``: release learner copies of the chapters, grade submissions."""
import argparse
import sys
from pathlib import Path

from . import gradebook
from .grade import DEFAULT_TIMEOUT, grade
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

Run "learntorch-course release --help" or "learntorch-course grade --help" for details.
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
--source (by the notebook's metadata, else by its file name NN_...). The source is
run with nbval, in this Python environment, with only the submission's solution
cells swapped in (matched by exercise id): checks and hidden checks always come from
the source, so edited or deleted check cells change nothing. An exercise earns its
points when all of its checks and hidden checks pass.

A cell that runs longer than --timeout seconds, or kills the kernel, costs the
exercise it belongs to; the notebook is then run again without that solution, so
the other exercises are still graded. A missing or duplicated solution cell costs
that exercise.

Writes OUT/gradebook.csv and OUT/gradebook.json (one row per exercise: submission,
chapter, exercise, points, max_points, status, message) and OUT/feedback/NAME.md
for each submission, which never shows hidden checks' code or inputs.

Example: learntorch-course grade --source course/solutions submissions/*/*.ipynb
         --out grades --jobs 4
"""


def _parser():
    parser = argparse.ArgumentParser(prog="learntorch-course", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="{release,grade}")
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
    gra.add_argument("--jobs", type=int, default=1, metavar="N",
                     help="notebooks run in N parallel processes (default 1)")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.command == "release":
            written = release(args.source_dir, args.out_dir)
            print(f"wrote {len(written)} learner copies into {args.out_dir}")
            return 0
        missing = [str(p) for p in args.submissions if not p.is_file()]
        if missing:
            print(f"learntorch-course grade: no such file: {', '.join(missing)}",
                  file=sys.stderr)
            return 2
        graded = grade(args.source, args.submissions, timeout=args.timeout, jobs=args.jobs)
        rows = [row for submission in graded for row in submission.rows]
        gradebook.write(rows, args.out)
        total = sum(r.points for r in rows)
        print(f"graded {len(graded)} submissions ({sum(r.status == 'passed' for r in rows)} of "
              f"{len(rows)} exercises passed, {total:g} points); gradebook in "
              f"{args.out / 'gradebook.csv'}")
        return 0
    except (SourceError, FileNotFoundError) as error:
        print(f"learntorch-course {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
