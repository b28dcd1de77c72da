"""``run_ranks``: start N ranks from Python -- a notebook cell -- and get back what each did.

learntorch-only.  torch starts ranks from a terminal (``torchrun``) or with
``torch.multiprocessing.spawn``, which cannot run a function defined in a
notebook; this one can, because it sends the function's *source* to the ranks
when the function lives in a notebook, and a reference to it otherwise (a
function of a script's ``__main__`` is found, as with multiprocessing, by
running the script as ``__mp_main__`` on each rank).  A function sent as source
is rebuilt alone: it must import what it uses inside its body.

Each rank runs the code a torchrun script would (``dist.init_process_group
("mpi")``, ``dist.get_rank()``...); ``run_ranks`` collects each rank's return
value, stdout and stderr, shows the outputs (``show_output``), and raises
``ChildFailedError`` naming the rank and its traceback if one raises -- the MPI
job is then stopped, and no process is left behind.
"""
import inspect
import os
import pickle
import sys
import textwrap
from dataclasses import dataclass

from ._launching import ChildFailedError, Job, result_file


@dataclass
class RankResult:
    """What one rank did: its return value, and what it printed."""
    rank: int
    value: object
    stdout: str
    stderr: str


def _main_script():
    """The path of the script running as __main__, or None in a notebook or a REPL."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path and os.path.isfile(path) and "ipykernel" not in path:
        return os.path.abspath(path)
    return None


def _function_spec(fn, args, kwargs):
    if not inspect.isfunction(fn) or fn.__name__ == "<lambda>":
        raise TypeError("run_ranks needs a function defined with `def` (or a script path); "
                        f"got {fn!r}")
    module = fn.__module__
    spec = {"args": args, "kwargs": kwargs, "name": fn.__qualname__}
    if module not in ("__main__", "__mp_main__"):
        return {**spec, "kind": "reference", "function": fn}
    if fn.__code__.co_freevars or "<locals>" in fn.__qualname__:
        raise TypeError(f"{fn.__name__} is defined inside another function; define it at the "
                        "top level and pass what it needs as args=")
    script = _main_script()
    if script is not None:
        # as multiprocessing's spawn: each rank runs the script as __mp_main__ (its
        # `if __name__ == "__main__":` part does not run) and takes the function from it
        return {**spec, "kind": "script", "path": script}
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as error:
        raise TypeError(f"the source of {fn.__name__} cannot be read ({error}); put the "
                        "function in a file and import it") from None
    # a notebook: the function's own source, at its own line numbers (for tracebacks)
    source = "\n" * (first_line - 1) + textwrap.dedent("".join(lines))
    return {**spec, "kind": "source", "source": source,
            "filename": fn.__code__.co_filename}


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
        spec = _function_spec(target, tuple(args), kwargs)
    else:
        raise TypeError(f"run_ranks runs a function or a script path, got {target!r}")
    job = Job(nprocs, rank_argv, capture=True, timeout=timeout)
    try:
        if spec is not None:
            with open(f"{job.dir}/function.pkl", "wb") as f:
                pickle.dump(spec, f)
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
