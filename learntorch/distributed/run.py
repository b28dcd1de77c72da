"""``python -m learntorch.distributed.run``: torchrun's command, starting the ranks with MPI.

    python -m learntorch.distributed.run --nproc-per-node 2 train.py --epochs 3

starts ``train.py --epochs 3`` on 2 ranks with the MPI launcher (``mpiexec``
from the mpich wheel), each with torchrun's environment variables (RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...), so
the script calls ``dist.init_process_group("mpi")`` and needs no other
set-up.  Flags have torchrun's names (``--nproc-per-node`` or
``--nproc_per_node``, ``-m``/``--module``, ``--no-python``, ``--standalone``,
``--master-addr``, ``--master-port``); several machines are MPI's business: list
them in a hostfile (``--hostfile``, MPICH's format: one ``host[:slots]`` a line)
with ``--nnodes`` set to their number.

When a rank raises, MPI stops every rank, the command prints which rank failed
and its error, and exits with a non-zero code.  No process of the job is left.
"""
import argparse
import os
import sys

from ._launching import ChildFailedError, Job


def _nproc(value):
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise argparse.ArgumentTypeError("--nproc-per-node gpu: learntorch's MPI backend runs "
                                         "on CPUs; give a number of processes")
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--nproc-per-node must be a number, 'auto' or "
                                         f"'cpu', not {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--nproc-per-node must be at least 1, got {n}")
    return n


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m learntorch.distributed.run",
        description="Start a training script on several processes with MPI (torchrun's role).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", type=_nproc,
                   default=1, help="processes per machine: a number, 'auto' or 'cpu' (cores)")
    p.add_argument("--nnodes", type=int, default=1,
                   help="machines; more than 1 needs --hostfile")
    p.add_argument("--hostfile", default=None,
                   help="MPICH hostfile naming the machines (learntorch-only; torchrun uses "
                        "a rendezvous server instead)")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0,
                   help="accepted for torchrun's command lines; MPI numbers the machines")
    p.add_argument("--standalone", action="store_true",
                   help="accepted for torchrun's command lines: a job on this machine")
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default=None,
                   help="MASTER_ADDR for the ranks (default: rank 0's host)")
    p.add_argument("--master-port", "--master_port", dest="master_port", default=None,
                   help="MASTER_PORT for the ranks (default 29500; MPI does not need it)")
    p.add_argument("--max-restarts", "--max_restarts", dest="max_restarts", type=int, default=0,
                   help="only 0: an MPI job is not restarted")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run the target as a program, not with python")
    p.add_argument("training_script", help="the script (or module, or program) to run")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.nnodes > 1 and args.hostfile is None:
        _parser().error(f"--nnodes {args.nnodes}: MPI starts the processes of every machine "
                        "from here, so it needs their names: pass --hostfile FILE")
    if args.max_restarts != 0:
        _parser().error("--max-restarts: an MPI job is not restarted; use 0")
    kind = "exec" if args.no_python else "module" if args.module else "script"
    env = {}
    if args.master_addr:
        env["MASTER_ADDR"] = args.master_addr
    if args.master_port:
        env["MASTER_PORT"] = str(args.master_port)
    job = Job(args.nproc_per_node * args.nnodes,
              [kind, args.training_script, *args.training_script_args],
              hostfile=args.hostfile, env=env, per_node=args.nproc_per_node)
    try:
        returncode = job.run()
        failures = job.failures()
    finally:
        job.cleanup()
    if returncode != 0 or failures:
        error = ChildFailedError(job.nprocs, {r: t.strip().splitlines()[-1]
                                              for r, t in failures.items()}, returncode)
        print(f"learntorch.distributed.run: {error}", file=sys.stderr)
        return returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
