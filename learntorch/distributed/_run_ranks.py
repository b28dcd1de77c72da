"""``run_ranks``: start N ranks from Python -- a notebook cell -- and get back what each did.

learntorch-only.  torch starts ranks from a terminal (``torchrun``) or with
``torch.multiprocessing.spawn``, which cannot run a function defined in a
notebook; this one can.  The function and its arguments are pickled for the
ranks, and a function that has no importable module travels as a way to
rebuild it there (``_shipping.py``):

* a function of a notebook goes as its *source*, with what it uses of the
  notebook: the modules, functions and classes the notebook imported (``torch``,
  ``dist``, ``F``, ``DataLoader``...) are imported again on each rank, and the
  notebook's own functions it calls go as their source too.  Anything else it
  needs -- data, numbers, a class defined in the notebook -- goes in ``args=``;
* a function of a script's ``__main__`` is found, as with multiprocessing, by
  running the script as ``__mp_main__`` on each rank;
* a function of an importable module goes by reference, as pickle sends it.

The same holds for functions passed in ``args``/``kwargs``: a check can hand a
learner's notebook function to the ranks.

Each rank runs the code a torchrun script would (``dist.init_process_group()``,
``dist.get_rank()``...); ``run_ranks`` collects each rank's return value,
stdout and stderr, shows the outputs (``show_output``), and raises
``ChildFailedError`` naming the rank and its traceback if one raises -- the MPI
job is then stopped, and no process is left behind.
"""
import pickle
import sys
from dataclasses import dataclass

from . import _shipping
from ._launching import ChildFailedError, Job, result_file


@dataclass
class RankResult:
    """What one rank did: its return value, and what it printed."""
    rank: int
    value: object
    stdout: str
    stderr: str


def run_ranks(target, nprocs=2, args=(), kwargs=None, timeout=300, show_output=True):
    """Run ``target`` on ``nprocs`` ranks under MPI and return ``[RankResult]`` in rank order.

    ``target`` is a function (called as ``target(*args, **kwargs)`` on every rank)
    or the path of a script (run with ``args`` as its command line; its value is None).
    ``timeout`` seconds after the start the job is stopped and TimeoutError raised.
    ``show_output`` prints what each rank printed, marked ``[rank r]``, when the
    job ends.  A rank that raises makes the whole job fail: ``ChildFailedError``
    (a RuntimeError) says which rank and shows its traceback.
    """
    kwargs = dict(kwargs or {})
    if isinstance(target, str):
        rank_argv = ["script", target, *[str(a) for a in args]]
        spec = None
    elif callable(target):
        rank_argv = ["function"]
        spec = {"function": target, "args": tuple(args), "kwargs": kwargs}
        _shipping.check_target(target)
    else:
        raise TypeError(f"run_ranks runs a function or a script path, got {target!r}")
    job = Job(nprocs, rank_argv, capture=True, timeout=timeout)
    try:
        if spec is not None:
            with open(f"{job.dir}/function.pkl", "wb") as f:
                _shipping.dump(spec, f)
        returncode = job.run()
        outputs = [job.outputs(rank) for rank in range(nprocs)]
        if show_output:
            _show(outputs)
        if job.timed_out:
            raise TimeoutError(f"the job of {nprocs} ranks did not finish within {timeout} s "
                               "and was stopped (a rank waiting in a collective that another "
                               "rank never called hangs like this)")
        failures = job.failures()
        if returncode != 0 or failures:
            raise ChildFailedError(nprocs, failures, returncode, job.launcher_output,
                                   job.job_id)
        results = []
        for rank in range(nprocs):
            value, path = None, result_file(job.dir, rank)
            if spec is not None and path.exists():  # absent after a sys.exit(0) in the function
                with open(path, "rb") as f:
                    value = pickle.load(f)  # written by our own rank, in our private folder
            results.append(RankResult(rank, value, *outputs[rank]))
        return results
    finally:
        job.cleanup()


def _show(outputs):
    for rank, (out, err) in enumerate(outputs):
        for text, stream in ((out, sys.stdout), (err, sys.stderr)):
            for line in text.splitlines():
                print(f"[rank {rank}] {line}", file=stream)
