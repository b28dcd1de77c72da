"""The first code every rank runs (``python -m learntorch.distributed._rank_main``).

The launcher (``_launching.Job``) starts N copies of this module under mpiexec.
Each one

1. starts MPI at once, so that the MPI launcher knows every rank from the start
   and can end them all when one fails;
2. sets the environment variables torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE,
   LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, ...), so scripts
   written for torchrun read them unchanged;
3. runs what it was asked to: ``script PATH ARGS``, ``module NAME ARGS`` or
   ``function`` (``run_ranks``: the function and its arguments are in the job's
   folder) -- or, for ``exec PROGRAM ARGS`` (torchrun's --no-python), becomes
   that program, with the variables read from mpiexec's own and MPI not started
   (the program may start it);
4. if that raises: writes the traceback to the job's folder (the launcher shows
   it with the rank), prints it, and aborts the whole MPI job.
"""
import os
import pickle
import runpy
import sys
import traceback

from . import _launching
from ._process_group import _pause_for_mpiexec_to_forward_output


def _set_torchrun_environment(rank, size, local_rank, local_size, group_rank, group_size,
                              master):
    env = {
        "RANK": rank, "WORLD_SIZE": size, "LOCAL_RANK": local_rank,
        "LOCAL_WORLD_SIZE": local_size, "GROUP_RANK": group_rank,
        "GROUP_WORLD_SIZE": group_size, "ROLE_RANK": rank, "ROLE_WORLD_SIZE": size,
        "ROLE_NAME": "default", "MASTER_ADDR": os.environ.get("MASTER_ADDR", master),
        "MASTER_PORT": os.environ.get("MASTER_PORT", "29500"),
        "TORCHELASTIC_RUN_ID": os.environ.get(_launching.JOB_ID, "none"),
        "TORCHELASTIC_RESTART_COUNT": 0, "TORCHELASTIC_MAX_RESTARTS": 0,
    }
    os.environ.update({k: str(v) for k, v in env.items()})


def _environment_from_the_launcher():
    """torchrun's variables from what mpiexec itself sets (MPICH's Hydra, or Open MPI), for
    a program that must not find MPI started (``--no-python``: it may start MPI itself)."""
    e = os.environ
    rank = int(e.get("PMI_RANK", e.get("OMPI_COMM_WORLD_RANK", 0)))
    size = int(e.get("PMI_SIZE", e.get("OMPI_COMM_WORLD_SIZE", 1)))
    local_rank = int(e.get("MPI_LOCALRANKID", e.get("OMPI_COMM_WORLD_LOCAL_RANK", rank)))
    local_size = int(e.get("MPI_LOCALNRANKS", e.get("OMPI_COMM_WORLD_LOCAL_SIZE", size)))
    node = rank // local_size if local_size else 0  # mpiexec fills machines in turn (-ppn)
    _set_torchrun_environment(rank, size, local_rank, local_size, node,
                              max(1, size // max(1, local_size)), "127.0.0.1")


def _torchrun_environment(MPI):
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    # the ranks on this machine share memory: that split numbers them locally
    local = world.Split_type(MPI.COMM_TYPE_SHARED, key=rank)
    local_rank, local_size = local.Get_rank(), local.Get_size()
    node_first_rank = local.allreduce(rank, op=MPI.MIN)
    local.Free()
    leaders = world.allgather(local_rank == 0)
    master = world.bcast(MPI.Get_processor_name() if rank == 0 else None, root=0)
    _set_torchrun_environment(rank, size, local_rank, local_size, sum(leaders[:node_first_rank]),
                              sum(leaders), master)
    return rank


def _capture_output(job_dir, rank):
    """Send this process's stdout and stderr (Python's and C's alike) to the job's files."""
    stdout_path, stderr_path = _launching.output_files(job_dir, rank)
    for stream, path in ((sys.stdout, stdout_path), (sys.stderr, stderr_path)):
        stream.flush()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, stream.fileno())
        os.close(fd)
    sys.stdout.reconfigure(line_buffering=True)


def _load_function(job_dir):
    """The function ``run_ranks`` was given, with its arguments (a function of a notebook
    or of the script being run is rebuilt as it is unpickled: see ``_shipping``)."""
    with open(os.path.join(job_dir, "function.pkl"), "rb") as f:
        spec = pickle.load(f)  # written by run_ranks in this job's private folder
    return spec["function"], spec["args"], spec["kwargs"]


def _run(kind, target, args, job_dir, rank):
    if kind == "script":
        sys.argv = [target, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        runpy.run_path(target, run_name="__main__")
    elif kind == "module":
        sys.argv = [target, *args]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    elif kind == "function":
        fn, fn_args, fn_kwargs = _load_function(job_dir)
        value = fn(*fn_args, **fn_kwargs)
        with open(_launching.result_file(job_dir, rank), "wb") as f:
            pickle.dump(value, f)
    else:
        raise ValueError(f"unknown kind of target {kind!r}")


def _user_traceback(error):
    """The traceback from the learner's code on: the frames of this module and of runpy,
    which started it, say nothing about the error."""
    ours = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}
    tb = error.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")
                              or os.path.abspath(tb.tb_frame.f_code.co_filename) in ours):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _fail(job_dir, rank, text, code, MPI):
    if job_dir:
        _launching.error_file(job_dir, rank).write_text(text)
    if os.environ.get(_launching.CAPTURE) != "1":  # (run_ranks marks the lines itself)
        text = f"[rank {rank}] " + text.rstrip().replace("\n", f"\n[rank {rank}] ")
    # one write: the ranks share the terminal, and print's separate writes could interleave
    sys.stderr.write(text.rstrip() + "\n")
    sys.stderr.flush()
    sys.stdout.flush()
    _pause_for_mpiexec_to_forward_output()
    MPI.COMM_WORLD.Abort(code)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    kind, target, args = argv[0], (argv[1] if len(argv) > 1 else None), argv[2:]
    if kind == "exec":
        # another program takes this process over: MPI must not be started here, or the
        # program would leave it without finishing it (mpiexec then drops its output)
        _environment_from_the_launcher()
        os.execvp(target, [target, *args])
    from mpi4py import MPI  # starts MPI: from here on, one rank's failure ends the job
    rank = _torchrun_environment(MPI)
    job_dir = os.environ.get(_launching.JOB_DIR)
    if job_dir and os.environ.get(_launching.CAPTURE) == "1":
        _capture_output(job_dir, rank)
    try:
        _run(kind, target, args, job_dir, rank)
    except SystemExit as exit:
        if exit.code not in (None, 0):
            _fail(job_dir, rank, f"SystemExit: the program exited with code {exit.code}\n",
                  exit.code if isinstance(exit.code, int) else 1, MPI)
    except BaseException as error:
        _fail(job_dir, rank, _user_traceback(error), 1, MPI)
    sys.stdout.flush()
    sys.stderr.flush()


if __name__ == "__main__":
    main()
