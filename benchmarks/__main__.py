"""python -m benchmarks [--quick] [--profile] [--only NAME] [--isolated] [--json out.json] [--markdown BENCHMARKS.md]

Runs every case (or those whose group, name or key contains NAME), prints one
row per case as it goes, and optionally saves the run as JSON and as the
BENCHMARKS.md page.  Run it from the repository root on a quiet machine.

By default every library is timed in this one process, taking turns ("pair mode"):
what a notebook comparing learntorch with PyTorch does, PyTorch's threads and all.
``--isolated`` times each library in a worker process of its own instead.
"""
import argparse
import json
import sys

from . import report
from .runner import run_suite
from .suite import all_cases
from .timing import FULL, QUICK


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
    parser.add_argument("--isolated", action="store_true",
                        help="time each library in a worker process of its own instead of all "
                             "in this one (the default, 'pair mode', is what a notebook that "
                             "compares learntorch with PyTorch does: both in one process)")
    parser.add_argument("--in-process", action="store_true",
                        help="the default (kept for old command lines): every library in this "
                             "process, taking turns")
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
                    isolated=args.isolated,
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
