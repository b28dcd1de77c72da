import fcntl
import pickle

import pytest

from learntorch.distributed import is_mpi_available, run_ranks


@pytest.fixture(scope="session")
def mpi():
    """The multi-rank tests need MPI, which `make test` installs (the `distributed` extra);
    without it they fail and say so -- they never skip."""
    assert is_mpi_available(), ("mpi4py is not installed: pip install 'learntorch[distributed]' "
                                "(make test installs it)")


@pytest.fixture(scope="session")
def job_results(mpi, tmp_path_factory, worker_id):
    """``job_results(program, nprocs)``: each rank's return value of ``program``, run once per
    test session even when several pytest-xdist workers need it.

    The workers of one session share the parent of their temporary folders: the first
    worker to ask runs the job and leaves the results there (under a lock), the others
    read them.  A job costs seconds of both cores; running it once per worker would
    double that.
    """
    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent

    def run(program, nprocs):
        stem = f"job-{program.__module__}-{program.__name__}-{nprocs}"
        with open(root / f"{stem}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = root / f"{stem}.pkl"
            if done.exists():
                return pickle.loads(done.read_bytes())
            values = [r.value for r in run_ranks(program, nprocs=nprocs, timeout=120,
                                                 show_output=False)]
            done.write_bytes(pickle.dumps(values))
            return values
    return run
