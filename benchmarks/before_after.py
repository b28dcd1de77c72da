"""The same cases, learntorch against PyTorch in pair mode, for two checkouts of learntorch:
the numbers a change is judged by ("no speed lost", "should come down").

    python -m benchmarks.before_after --base ../learntorch-4c92d66 --rounds 2 \\
        --markdown benchmarks/tiers_before_after.md

``--base`` is another checkout (``git worktree add ../learntorch-4c92d66 4c92d66``: the
tree before the two tiers).  Each round starts one process per checkout, taking turns, so
that a slow spell of the machine falls on both; in a process, learntorch and PyTorch take
turns call by call and each case reports the median of the per-call ratios
(learntorch's time / PyTorch's, below 1 learntorch is faster) with its quartiles.  The
measuring code is this file alone (run by path, it imports only learntorch, torch and
numpy), so both checkouts run the very same cases.

``--suite`` also runs, in each round and each checkout, the project's own suite on the four
cases the two-tier issue named (``python -m benchmarks --only ...``: each library timed
over a block of calls, the libraries taking turns block by block) and adds its
learntorch ÷ torch ratios as a second table: each checkout's own suite measures it.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
CALLS = 60  # per case and process, after a warm-up
#: the suite's cases that the "no speed lost" target names (``python -m benchmarks --list``)
SUITE_CASES = ("mlp_step-128", "cnn_step", "chain_mul_add-1000", "softmax_forward-1024")


def _mlp(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def _cnn(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def _train_step(lib, model, x, y):
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    inputs, targets = lib.from_numpy(x), lib.from_numpy(y)

    def step():
        loss = lib.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return step


def _chain(lib, leaves):
    """500 x ``y = y * a + b``, then backward: a, b inputs of the graph, or (``leaves``)
    parameters whose gradients accumulate, as a notebook's do."""
    x = lib.tensor([0.5], requires_grad=not leaves)
    a = lib.tensor([1.0001], requires_grad=True)
    b = lib.tensor([0.0001], requires_grad=True)

    def run():
        a.grad = b.grad = None
        y = x
        for _ in range(500):
            y = y * a + b
        y.backward()
    return run


def _softmax(lib):
    x = lib.from_numpy(np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32))
    return lambda: lib.softmax(x, dim=1)


def measure():
    """Every case's ratios in this process (the learntorch on sys.path): a JSON line."""
    import learntorch
    import torch
    rng = np.random.default_rng(1)
    xm = rng.standard_normal((128, 784)).astype(np.float32)
    xc = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    y = np.random.default_rng(2).integers(0, 10, 128, dtype=np.int64)
    cases = {
        "MLP 784-256-128-10 train step, batch 128": lambda lib: _train_step(lib, _mlp(lib), xm, y),
        "CNN train step, 32x1x28x28": lambda lib: _train_step(lib, _cnn(lib), xc, y[:32]),
        "1,000-op chain y*a+b, fwd+bwd": lambda lib: _chain(lib, leaves=False),
        "1,000-op chain y*w+b, leaves accumulate": lambda lib: _chain(lib, leaves=True),
        "softmax 1024x1024, forward": _softmax,
    }
    results = {}
    for name, make in cases.items():
        ours, theirs = make(learntorch), make(torch)
        for _ in range(5):
            ours(), theirs()
        ratios = []
        for _ in range(CALLS):
            start = time.perf_counter()
            ours()
            middle = time.perf_counter()
            theirs()
            ratios.append((middle - start) / (time.perf_counter() - middle))
        results[name] = ratios
    print(json.dumps({"commit": _commit(Path(learntorch.__file__).parent.parent),
                      "ratios": results, "layer": _threading_layer()}))


def _threading_layer():
    """The threading layer Numba's parallel kernels ran on in this process ("none" if none
    ran): trees that choose differently meet torch's threads differently."""
    import numba
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel kernel was launched
        return "none"


def _commit(tree):
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _run_in(tree):
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(Path(tree) / ".numba_cache"))
    out = subprocess.run([sys.executable, str(HERE), "--measure"], env=env, cwd=str(tree),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _suite_in(tree):
    """{case name: learntorch ÷ torch} from the tree's own suite on ``SUITE_CASES``."""
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(Path(tree) / ".numba_cache"))
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "run.json"
        only = [arg for case in SUITE_CASES for arg in ("--only", case)]
        subprocess.run([sys.executable, "-m", "benchmarks", *only, "--json", str(out)],
                       env=env, cwd=str(tree), capture_output=True, text=True, check=True)
        rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    return {row["name"]: row["ratios"]["vs_torch"] for row in rows}


def suite_report(suites, base, this):
    """The second table: one column per run of each tree's suite, and each tree's median."""
    names = list(suites[this][0])
    rounds = len(suites[this])
    lines = ["", "The project's suite on the same two trees (`python -m benchmarks --only "
             + " --only ".join(SUITE_CASES) + "` run by each tree, in the same rounds; each "
             "library timed over blocks of calls, taking turns block by block): "
             "learntorch's time ÷ PyTorch's.", "",
             "| case | " + " | ".join(f"before, run {k + 1}" for k in range(rounds)) + " | "
             "before, median | " + " | ".join(f"after, run {k + 1}" for k in range(rounds))
             + " | after, median |", "|---|" + "---|" * (2 * rounds + 2)]
    for name in names:
        cells = []
        for tree in (base, this):
            values = [run.get(name) for run in suites[tree]]
            cells += ["—" if v is None else f"{v:.2f}×" for v in values]
            known = [v for v in values if v is not None]
            cells.append(f"**{float(np.median(known)):.2f}×**" if known else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _summary(ratios):
    return (float(np.median(ratios)), float(np.percentile(ratios, 25)),
            float(np.percentile(ratios, 75)))


def report(runs, base, this, rounds, command):
    names = list(runs[this][0]["ratios"])
    lines = ["## Two tiers: before and after", "",
             f"learntorch's time ÷ PyTorch's in pair mode (one process, taking turns call by "
             f"call; median of {CALLS} calls per process, quartiles in brackets), for the tree "
             f"before the two tiers ({runs[base][0]['commit']}) and this one "
             f"({runs[this][0]['commit']}), {rounds} processes each, alternating.  Measured with "
             f"`{command}` (benchmarks/before_after.py).", "",
             "| case | " + " | ".join(f"before, run {k + 1}" for k in range(rounds)) + " | "
             + " | ".join(f"after, run {k + 1}" for k in range(rounds)) + " |",
             "|---|" + "---|" * (2 * rounds)]
    for name in names:
        cells = []
        for tree in (base, this):
            for run in runs[tree]:
                median, low, high = _summary(run["ratios"][name])
                cells.append(f"{median:.2f}× ({low:.2f}–{high:.2f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    layers = {tree: sorted({run.get("layer", "?") for run in runs[tree]}) for tree in (base, this)}
    lines += ["", f"Numba's threading layer: before {', '.join(layers[base])}; after "
                  f"{', '.join(layers[this])}."]
    if layers[base] != layers[this]:
        lines[-1] += ("  The layers differ: `learntorch/backends/numba_cpu/loader.py` says what "
                      "each costs a kernel called right after a PyTorch op, as here.")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load:
        lines += ["", f"Load average at the end: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
                      f"(2 logical cores: other work on the machine widens the quartiles)."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.before_after", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the other checkout of learntorch (the 'before')")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--markdown", metavar="PATH", help="write the table, e.g. "
                        "benchmarks/tiers_before_after.md (BENCHMARKS.md's section is updated too)")
    parser.add_argument("--suite", action="store_true", help="also run each tree's own suite "
                        "on the four named cases, in the same rounds (a second table)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        return measure()
    if not args.base:
        parser.error("--base: a checkout of the tree to compare with")
    base, this = Path(args.base).resolve(), HERE.parent.parent
    runs, suites = {base: [], this: []}, {base: [], this: []}
    for _ in range(args.rounds):
        for tree in (base, this):
            runs[tree].append(_run_in(tree))
            if args.suite:
                suites[tree].append(_suite_in(tree))
    command = "python -m benchmarks.before_after --base <checkout of " + \
        f"{runs[base][0]['commit']}> --rounds {args.rounds}" + (" --suite" if args.suite else "")
    text = report(runs, base, this, args.rounds, command)
    if args.suite:
        text += suite_report(suites, base, this)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
        page = HERE.parent.parent / "BENCHMARKS.md"
        if page.exists():  # the page's copy of the table, as the suite would write it
            from benchmarks.report import splice_tiers_section
            splice_tiers_section(page, text)


if __name__ == "__main__":
    main()
