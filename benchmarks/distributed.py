"""python -m benchmarks.distributed [--repeats N] [--quick]: learntorch.distributed's figures.

Two measurements, each repeated (every repeat is a new MPI job) and reported
as the median with the spread (min and max over the repeats):

* **all_reduce of 1e6 float32 between 2 local ranks**, learntorch's
  ``dist.all_reduce(tensor)`` against mpi4py's own ``comm.Allreduce`` on a
  numpy buffer of the same size.  The two take turns inside one job, so both see
  the same machine at the same moment; a block's time is the slowest rank's.
  Target: learntorch within 3x of mpi4py.
* **a DDP training step on 2 ranks against one process on the same total
  batch** (the digits MLP, float32, SGD): the 2 ranks each take half the batch
  with one Numba thread each (what the launcher gives 2 ranks on 2 cores); the
  one process takes the whole batch with every core.  Target: DDP at most 1.3x
  the single process's step time, on a 2-core machine.

These figures do not fit the suite's model (``python -m benchmarks``), whose
contenders are learntorch, numpy and PyTorch timed one process each: here the
contenders are whole MPI jobs.  No test asserts them.
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

import numpy as np

from learntorch.distributed import run_ranks

FIGURES = "benchmarks/distributed_figures.md"   # the last full run's table, for BENCHMARKS.md


# ---------------------------------------------------------------- what the ranks run
def allreduce_job(numel, iterations, rounds):
    """Per-op seconds of learntorch's all_reduce and of mpi4py's Allreduce, in turns."""
    from mpi4py import MPI
    import learntorch as torch
    import learntorch.distributed as dist
    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD
    tensor = torch.ones(numel, dtype=torch.float32)
    array = np.ones(numel, dtype=np.float32)

    def timed(step):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(iterations):
            step()
        elapsed = (time.perf_counter() - start) / iterations
        return comm.allreduce(elapsed, op=MPI.MAX)  # the slowest rank's time

    learntorch_times, mpi4py_times = [], []
    timed(lambda: dist.all_reduce(tensor))  # warm-up of both
    timed(lambda: comm.Allreduce(MPI.IN_PLACE, array, op=MPI.SUM))
    for _ in range(rounds):
        learntorch_times.append(timed(lambda: dist.all_reduce(tensor)))
        mpi4py_times.append(timed(lambda: comm.Allreduce(MPI.IN_PLACE, array, op=MPI.SUM)))
    dist.destroy_process_group()
    return learntorch_times, mpi4py_times


def _mlp_and_batch(batch, hidden):
    import learntorch as torch
    images, labels = torch.datasets.load_digits()
    index = np.arange(batch) % images.shape[0]
    x, y = images.flatten(1)[torch.from_numpy(index)], labels[torch.from_numpy(index)]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 10))
    return model, x, y


def _step_seconds(model, x, y, steps):
    import learntorch as torch
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    for _ in range(3):  # warm-up: kernels, caches
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps


def single_job(batch, hidden, steps):
    """Seconds per step of one process on the whole batch (a job of one rank)."""
    model, x, y = _mlp_and_batch(batch, hidden)
    return _step_seconds(model, x, y, steps)


def ddp_job(batch, hidden, steps):
    """Seconds per DDP step, each rank on its half of the batch (the slowest rank's)."""
    from mpi4py import MPI
    import learntorch.distributed as dist
    from learntorch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    model, x, y = _mlp_and_batch(batch, hidden)
    shard = slice(rank * batch // size, (rank + 1) * batch // size)
    seconds = _step_seconds(DDP(model), x[shard], y[shard], steps)
    seconds = MPI.COMM_WORLD.allreduce(seconds, op=MPI.MAX)
    dist.destroy_process_group()
    return seconds


# ---------------------------------------------------------------- the measurements
def spread(values):
    return statistics.median(values), min(values), max(values)


def measure_allreduce(numel, repeats, iterations):
    ratios, ours, theirs = [], [], []
    for _ in range(repeats):
        learntorch_times, mpi4py_times = run_ranks(allreduce_job, nprocs=2,
                                                   args=(numel, iterations, 3),
                                                   show_output=False)[0].value
        # each job: the median of its rounds; the ratio from the same rounds
        ours.append(statistics.median(learntorch_times))
        theirs.append(statistics.median(mpi4py_times))
        ratios.append(statistics.median(a / b for a, b in zip(learntorch_times, mpi4py_times)))
    return spread(ours), spread(theirs), spread(ratios)


def measure_ddp(batch, hidden, steps, repeats):
    """DDP on 2 ranks, one process with every core, one process with one thread: in turns."""
    times = {"ddp": [], "single": [], "single, 1 thread": []}
    for _ in range(repeats):
        times["ddp"].append(run_ranks(ddp_job, nprocs=2, args=(batch, hidden, steps),
                                      show_output=False)[0].value)
        times["single"].append(run_ranks(single_job, nprocs=1, args=(batch, hidden, steps),
                                         show_output=False)[0].value)
        with _environment(NUMBA_NUM_THREADS="1"):
            times["single, 1 thread"].append(run_ranks(
                single_job, nprocs=1, args=(batch, hidden, steps), show_output=False)[0].value)
    ratios = [d / s for d, s in zip(times["ddp"], times["single"])]
    return {k: spread(v) for k, v in times.items()}, spread(ratios)


@contextlib.contextmanager
def _environment(**values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _fmt(values, scale, unit):
    median, low, high = values
    return f"{median * scale:.3g} {unit} ({low * scale:.3g}–{high * scale:.3g})"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.distributed",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="MPI jobs per measurement")
    parser.add_argument("--quick", action="store_true", help="small sizes: a sanity run")
    parser.add_argument("--markdown", metavar="PATH",
                        help=f"also write the table there (the page BENCHMARKS.md embeds "
                             f"{FIGURES}: python -m benchmarks.report puts it in)")
    args = parser.parse_args(argv)
    numel, iterations = (10_000, 5) if args.quick else (1_000_000, 50)
    sizes = [(64, 32, 3)] if args.quick else [(256, 256, 30), (2048, 256, 10)]
    lines = []

    def say(line=""):
        print(line)
        sys.stdout.flush()
        lines.append(line)

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    say(f"learntorch.distributed, 2 local ranks; median (min–max) over {args.repeats} "
        f"MPI jobs; {os.cpu_count()} cores, load average {load} at the start")
    say()
    say("| measurement | learntorch | reference | ratio | target |")
    say("| --- | --- | --- | --- | --- |")
    ours, theirs, ratio = measure_allreduce(numel, args.repeats, iterations)
    say(f"| all_reduce of {numel:g} float32 | {_fmt(ours, 1e3, 'ms')} | mpi4py Allreduce "
        f"{_fmt(theirs, 1e3, 'ms')} | {_fmt(ratio, 1, '×')} | ≤ 3× "
        f"{'met' if ratio[0] <= 3 else 'NOT met'} |")
    for batch, hidden, steps in sizes:
        times, ratio = measure_ddp(batch, hidden, steps, args.repeats)
        say(f"| DDP step, MLP 64-{hidden}-{hidden}-10, batch {batch} (2 × {batch // 2}) | "
            f"{_fmt(times['ddp'], 1e3, 'ms')} | one process {_fmt(times['single'], 1e3, 'ms')}"
            f"; with 1 thread {_fmt(times['single, 1 thread'], 1e3, 'ms')} | "
            f"{_fmt(ratio, 1, '×')} | ≤ 1.3× {'met' if ratio[0] <= 1.3 else 'NOT met'} |")
    if args.markdown:
        command = "python -m benchmarks.distributed " + " ".join(argv if argv is not None
                                                                  else sys.argv[1:])
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with "
                    f"`{command.strip()}`.\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
