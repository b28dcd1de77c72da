"""Starting N ranks with MPI's own launcher, and cleaning up after them.

Both ways of starting a job come here: ``python -m learntorch.distributed.run``
(torchrun's role, on the command line) and ``run_ranks`` (from Python, e.g. a
notebook cell).  A ``Job`` runs

    mpiexec -n N  python -m learntorch.distributed._rank_main  <what to run>

where ``mpiexec`` is the launcher of the MPI that mpi4py uses (the mpich wheel
installs it beside this Python).  ``_rank_main`` is the first code of every
rank: it sets torchrun's environment variables, runs the script, module or
function, and when that raises, writes the traceback where the launcher finds it
and aborts the MPI job, so that a failing rank ends every rank at once instead of
leaving the others waiting in a collective forever.

Nothing is left behind: every process of the job carries the job's id in its
environment, and after the job (or on a timeout) the launcher looks for any
process still carrying it and ends it (``processes_of_job``).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

JOB_ID = "LEARNTORCH_JOB_ID"      # every process of a job carries it: how strays are found
JOB_DIR = "LEARNTORCH_JOB_DIR"    # where ranks write tracebacks, outputs and return values
CAPTURE = "LEARNTORCH_CAPTURE_OUTPUT"  # "1": ranks write stdout/stderr to files in JOB_DIR


def mpiexec():
    """The path of MPI's launcher: the one installed beside this Python (the mpich wheel's),
    else the first ``mpiexec`` on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("MPI's launcher `mpiexec` was not found.  Install MPI with pip "
                           "install 'learntorch[distributed]' (the mpich wheel brings mpiexec)")
    return found


def default_threads(nprocs):
    """Threads per rank, so that N ranks do not fight over the cores: torchrun sets
    OMP_NUM_THREADS=1; Numba's parallel kernels get an equal share of the cores."""
    return {"OMP_NUM_THREADS": "1",
            "NUMBA_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // nprocs))}


def error_file(job_dir, rank):
    return Path(job_dir) / f"rank{rank}.error"


def output_files(job_dir, rank):
    return Path(job_dir) / f"rank{rank}.stdout", Path(job_dir) / f"rank{rank}.stderr"


def result_file(job_dir, rank):
    return Path(job_dir) / f"rank{rank}.result"


def processes_of_job(job_id):
    """PIDs of the processes that still carry ``job_id`` in their environment (Linux's /proc;
    elsewhere an empty list)."""
    return processes_with_environment(JOB_ID, job_id)


def processes_with_environment(name, value):
    """PIDs of this user's processes whose environment has ``name=value``."""
    marker = f"{name}={value}".encode() + b"\0"
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone already, or not ours to read
            continue
        if environ.startswith(marker) or b"\0" + marker in environ:  # a whole entry
            found.append(int(entry.name))
    return found


class ChildFailedError(RuntimeError):
    """A rank of a job failed: ``failures`` maps each rank that raised to its traceback.

    (torchrun reports a failed rank with an error of this name too.)
    """

    def __init__(self, nprocs, failures, returncode, launcher_output="", job_id=None):
        self.failures = failures
        self.returncode = returncode
        self.job_id = job_id
        if failures:
            parts = [f"rank {rank} (of {nprocs}) failed:\n{text.rstrip()}"
                     for rank, text in sorted(failures.items())]
            message = "\n\n".join(parts)
        else:
            tail = "\n".join(launcher_output.strip().splitlines()[-15:])
            message = (f"the job of {nprocs} ranks failed (exit code {returncode}) without a "
                       f"Python traceback: a rank was killed or MPI stopped it"
                       + (f".  The launcher said:\n{tail}" if tail else ""))
        super().__init__(message)


class Job:
    """One run of ``nprocs`` ranks of ``rank_argv`` (the arguments of ``_rank_main``)."""

    def __init__(self, nprocs, rank_argv, hostfile=None, env=None, capture=False,
                 timeout=None, per_node=None):
        if not isinstance(nprocs, int) or nprocs < 1:
            raise ValueError(f"the number of processes must be a positive integer, got {nprocs!r}")
        self.nprocs = nprocs
        self.rank_argv = list(rank_argv)
        self.hostfile = hostfile
        self.per_node = per_node
        self.extra_env = dict(env or {})
        self.capture = capture
        self.timeout = timeout
        self.job_id = uuid.uuid4().hex
        self.dir = tempfile.mkdtemp(prefix="learntorch-job-")
        self.returncode = None
        self.timed_out = False
        self.launcher_output = ""

    def command(self):
        cmd = [mpiexec(), "-n", str(self.nprocs)]
        if self.hostfile is not None:
            cmd += ["-f", str(self.hostfile)]
            if self.per_node is not None:
                cmd += ["-ppn", str(self.per_node)]
        return cmd + [sys.executable, "-m", "learntorch.distributed._rank_main"] + self.rank_argv

    def environment(self):
        env = dict(os.environ)
        for name, value in default_threads(self.nprocs).items():
            env.setdefault(name, value)
        # the ranks import what this process imports: its own folders on sys.path (the
        # installed ones -- standard library, site-packages -- each rank's Python has)
        installed = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
        paths = [p for p in [os.getcwd(), *sys.path]
                 if p and os.path.isdir(p) and not os.path.abspath(p).startswith(installed)]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        env.update(self.extra_env)
        env[JOB_ID] = self.job_id
        env[JOB_DIR] = self.dir
        env[CAPTURE] = "1" if self.capture else "0"
        return env

    def run(self):
        """Start the job and wait for it (up to ``timeout`` seconds); returns the exit code."""
        output = subprocess.PIPE if self.capture else None
        process = subprocess.Popen(self.command(), env=self.environment(), stdout=output,
                                   stderr=subprocess.STDOUT if self.capture else None,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            out, _ = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self._stop(process)
            out, _ = process.communicate()
        except BaseException:  # KeyboardInterrupt in a notebook: stop the ranks too
            self._stop(process)
            raise
        finally:
            self.sweep()
        self.launcher_output = (out or b"").decode(errors="replace")
        self.returncode = process.returncode
        return self.returncode

    def _stop(self, process):
        # SIGTERM lets mpiexec end its ranks itself; SIGKILL if it does not within seconds
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def sweep(self, grace=2.0):
        """End every process still carrying this job's id (a rank MPI failed to stop);
        returns how many there were."""
        deadline = time.monotonic() + grace
        left = processes_of_job(self.job_id)
        while left and time.monotonic() < deadline:  # mpiexec may still be ending them
            time.sleep(0.05)
            left = processes_of_job(self.job_id)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(left)

    def failures(self):
        """{rank: traceback text} of the ranks that raised."""
        found = {}
        for rank in range(self.nprocs):
            path = error_file(self.dir, rank)
            if path.exists():
                found[rank] = path.read_text(errors="replace")
        return found

    def outputs(self, rank):
        if not self.capture:
            return "", ""
        return tuple(p.read_text(errors="replace") if p.exists() else ""
                     for p in output_files(self.dir, rank))

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
