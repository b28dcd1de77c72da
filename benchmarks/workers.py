"""One worker process per library: no library is timed next to another's thread pool.

Why: importing PyTorch loads its OpenMP runtime, and in the same process Numba's
``omp`` threading layer then slows learntorch's parallel kernels down badly (a
1e6-element relu measured 0.3 ms alone and 20-28 ms after ``import torch``, on
a busy 2-core machine).  OpenBLAS's spinning threads disturb their neighbours
too.  A learner runs learntorch *or* PyTorch, so each library is timed alone:
the worker for library L runs with ``BENCHMARKS_LIBRARY=L``, and suite.py
imports PyTorch only in the torch worker.  The workers take turns (one case,
one library at a time), so they never compete with each other.

Protocol, one JSON object per line: the parent writes
``{"key", "library", "settings", "tiny"}`` to a worker's stdin, the worker answers
with ``runner.time_one``'s dict, or ``{"error", "traceback"}``.
"""
import json
import os
import subprocess
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class WorkerError(RuntimeError):
    """A case failed inside a worker; ``worker_traceback`` is the worker's traceback."""

    def __init__(self, message, worker_traceback):
        super().__init__(message)
        self.worker_traceback = worker_traceback


class Worker:
    """``python -m benchmarks.workers LIBRARY``, kept running for the whole suite."""

    def __init__(self, library):
        self.library = library
        env = dict(os.environ, BENCHMARKS_LIBRARY=library)
        self.process = subprocess.Popen(
            [sys.executable, "-m", f"{__package__}.workers", library], cwd=_ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def time(self, case, settings, tiny):
        request = {"key": case.key, "library": self.library, "tiny": tiny,
                   "settings": settings.__dict__}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.library} worker died (exit code "
                               f"{self.process.wait()}); its error is above")
        reply = json.loads(line)
        if "error" in reply:
            raise WorkerError(f"{self.library}: {reply['error']}", reply["traceback"])
        return reply

    def close(self):
        self.process.stdin.close()
        self.process.wait()


class Workers:
    """The workers of one run, started on first use: ``workers.time(case, library, ...)``."""

    def __init__(self):
        self.running = {}

    def time(self, case, library, settings, tiny):
        if library not in self.running:
            self.running[library] = Worker(library)
        return self.running[library].time(case, settings, tiny)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for worker in self.running.values():
            worker.close()


def serve(library):
    """The worker's loop: answer requests until stdin closes."""
    import gc
    import traceback
    from .runner import time_one
    from .suite import all_cases
    from .timing import Settings

    replies = sys.stdout
    sys.stdout = sys.stderr  # whatever a case prints must not corrupt the protocol
    cases = {c.key: c for c in all_cases()}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = time_one(cases[request["key"]], library, Settings(**request["settings"]),
                             request["tiny"])
        except Exception as error:  # noqa: BLE001  (sent back; the parent makes it a row)
            reply = {"error": f"{type(error).__name__}: {error}".splitlines()[0],
                     "traceback": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
        gc.collect()


if __name__ == "__main__":
    serve(sys.argv[1])
