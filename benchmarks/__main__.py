"""python -m benchmarks [--quick] [--profile] [--only NAME] [--json out.json] [--markdown BENCHMARKS.md]

Runs every case (or those whose group, name or key contains NAME), prints one
row per case as it goes, and optionally saves the run as JSON and as the
BENCHMARKS.md page.  Run it from the repository root on a quiet machine.
"""
import argparse
import json
import os
import sys

if "--profile" in sys.argv[1:]:
    # --profile runs learntorch in this process, where the suite's `import torch` has
    # already started an OpenMP runtime; with its default (spinning) wait policy
    # Numba's parallel loops ran ~15x slower beside it.  Ask for sleeping threads
    # before anything loads that runtime.  (The timed runs use one process per library.)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import report  # noqa: E402
from .runner import run_suite  # noqa: E402
from .suite import all_cases  # noqa: E402
from .timing import FULL, QUICK  # noqa: E402


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help=f"shorter measurements ({QUICK.repeats} × ~{QUICK.seconds} s "
                             f"instead of {FULL.repeats} × ~{FULL.seconds} s): a sanity run")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only cases whose group, name or key contains NAME "
                             "(case-insensitive; may be repeated)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--in-process", action="store_true",
                        help="time every library in this one process instead of one worker "
                             "process each (faster to start; but PyTorch's OpenMP runtime, once "
                             "loaded, slows Numba's threads: see benchmarks/workers.py)")
    parser.add_argument("--profile", action="store_true",
                        help="print learntorch.profiler tables of the MLP and CNN training "
                             "steps (which ops take the time) instead of running the cases")
    parser.add_argument("--json", metavar="PATH", help="save the run (every figure) as JSON")
    parser.add_argument("--markdown", metavar="PATH", help="write the report, e.g. BENCHMARKS.md")
    return parser.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    if args.profile:
        from .profile_steps import profile_tables
        print(profile_tables(steps=5 if args.quick else 20))
        return 0
    cases = all_cases()
    if args.only:
        cases = [c for c in cases if any(c.matches(pattern) for pattern in args.only)]
    if args.list:
        for c in cases:
            print(f"{c.key:<60} {c.name}")
        return 0
    if not cases:
        print(f"no case matches {args.only}; see python -m benchmarks --list", file=sys.stderr)
        return 2
    command = " ".join(["python -m benchmarks", *argv])
    print(f"{len(cases)} cases; ratios are learntorch time / other time (below 1: learntorch is faster)")
    run = run_suite(cases, QUICK if args.quick else FULL, command=command,
                    isolated=not args.in_process,
                    progress=lambda row: print(report.console_line(row), flush=True))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(run, f, indent=1, ensure_ascii=False)
    if args.markdown:
        report.write(run, args.markdown)
    errors = [row for row in run["rows"] if row.get("error")]
    for row in errors:
        print(f"\n{row['key']} failed:\n{row['traceback']}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
