"""The long differential fuzz run, by hand: ``make fuzz`` (``make fuzz FUZZ_EXAMPLES=5000``).

    python tests/fuzz/campaign.py --examples 2000 [--area autograd] [--seed 1]
                                  [--minutes 30] [--out file.md]

Generates ``--examples`` programs per area (``fuzz_programs.py``), runs each in
learntorch and torch (``fuzz_runner.py``) and prints the summary: cases run per area,
then the mismatches by class (area, class, the op where the two first differed), with
one example each.  Exits 1 when a silent wrong value (a ``value`` / ``grad`` mismatch)
was found: every mismatch class is either fixed or documented as a known difference
(docs/api.md, "Known differences"), and the known ones are not generated.

The programs come in batches of ``BATCH``, each drawn from its own seed (``--seed`` times
1000 plus the batch's number), so a run is the same on every machine and a longer run
extends a shorter one.  The areas take turns batch by batch; ``--minutes`` stops the run
after the batch that passes it (every area then has about as many cases), and ``--out``
is rewritten after every batch, so a run cut short still leaves its summary.
"""
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings  # noqa: E402

from fuzz_programs import AREAS, program  # noqa: E402
from fuzz_runner import Summary, run  # noqa: E402

BATCH = 100


def run_batch(summary, area, examples, seed):
    """Run ``examples`` programs of ``area`` drawn from ``seed`` into ``summary``."""
    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(program(area))
    def one(p):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            summary.record(p, run(p))
    one()


def campaign(examples, areas, seed=0, minutes=None, out=None):
    summary = Summary()
    started = time.perf_counter()
    batches = -(-examples // BATCH)
    for b in range(batches):
        for area in areas:
            run_batch(summary, area, min(BATCH, examples - b * BATCH), seed * 1000 + b)
        elapsed = time.perf_counter() - started
        print(f"batch {b + 1}/{batches}: " + ", ".join(f"{a} {summary.cases[a]}" for a in areas)
              + f" cases in {elapsed:.0f} s", file=sys.stderr, flush=True)
        if out:
            write(out, summary)
        if minutes is not None and elapsed > 60 * minutes:
            print(f"stopped after {minutes} minutes", file=sys.stderr)
            break
    return summary


def write(path, summary):
    with open(path, "w") as f:
        f.write(summary.table() + f"\n\nsilent wrong values: {summary.silent_wrong_values()}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int,
                        default=int(os.environ.get("FUZZ_EXAMPLES", "2000")))
    parser.add_argument("--area", action="append", choices=sorted(AREAS))
    parser.add_argument("--seed", type=int, default=0, help="another run: another seed")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after the batch that passes this many minutes")
    parser.add_argument("--out", help="also write the summary (markdown) to this file")
    args = parser.parse_args(argv)
    summary = campaign(args.examples, args.area or sorted(AREAS), args.seed, args.minutes,
                       args.out)
    print(summary.table())
    wrong = summary.silent_wrong_values()
    print(f"\nsilent wrong values: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
