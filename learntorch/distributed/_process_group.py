"""The default process group: which processes take part, and this one's rank among them.

``init_process_group("mpi")`` joins the MPI job this process was started in
(by ``python -m learntorch.distributed.run``, ``run_ranks`` or any ``mpiexec``);
without a launcher it is a job of one.  MPI itself numbers the processes, so
``rank`` and ``world_size`` need not be passed: when they are, they must agree
with MPI's.  The group talks on its own duplicate of ``MPI.COMM_WORLD``, so its
messages never mix with those of other MPI code in the same program.

MPI can be started only once per process, and ``destroy_process_group`` frees
the group's communicator but leaves MPI running (it stops when Python exits):
a later ``init_process_group`` joins the same job again.
"""
import os

_BACKENDS_TORCH_HAS = {"gloo": "Gloo", "nccl": "NCCL", "ucc": "UCC", "xccl": "XCCL"}

_default = None  # the ProcessGroup made by init_process_group, or None


class ProcessGroup:
    """A set of ranks that run collectives together (here: always the whole MPI job)."""

    def __init__(self, comm):
        self._comm = comm

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return "mpi"

    def __repr__(self):
        return f"ProcessGroup(backend='mpi', rank={self.rank()}, size={self.size()})"


class _HasWorld(type):
    """Gives a class the attribute WORLD: the default group once ``init_process_group`` has
    run, else None (torch's ``dist.group.WORLD``)."""

    @property
    def WORLD(cls):
        return _default


class group(metaclass=_HasWorld):
    """``dist.group.WORLD``, the group of every rank (the only group here)."""


class GroupMember(metaclass=_HasWorld):
    """``dist.GroupMember.WORLD`` (the same as ``dist.group.WORLD``)."""
    NON_GROUP_MEMBER = -100


def is_available():
    """True: learntorch's distributed package is always there (MPI itself comes with the
    ``distributed`` extra; ``is_mpi_available`` says whether it is installed)."""
    return True


def is_mpi_available():
    """True when mpi4py is installed (``pip install 'learntorch[distributed]'``)."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available():
    return False


def is_nccl_available():
    return False


def is_initialized():
    return _default is not None


def is_torchelastic_launched():
    """True inside a job started by ``python -m learntorch.distributed.run`` (torchrun's
    equivalent), which sets TORCHELASTIC_RUN_ID as torchrun does."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def default_group():
    """The default group, or torch's ValueError when ``init_process_group`` has not run."""
    if _default is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.  (In a script: "
                         "dist.init_process_group(backend=\"mpi\") before the first collective.)")
    return _default


def resolve(group):
    """The group a collective runs on: ``group=None`` (or ``group.WORLD``) means the default."""
    pg = default_group()
    if group is None or group is pg:
        return pg
    raise ValueError(f"learntorch.distributed has one process group, the default one; pass "
                     f"group=None (got {group!r})")


def _check_backend(backend):
    if backend is None:
        return
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string such as \"mpi\", got {backend!r}")
    # torch also takes "cpu:gloo,cuda:nccl": every part must name mpi here
    for part in backend.lower().split(","):
        name = part.split(":")[-1].strip()
        if name == "mpi":
            continue
        if name in _BACKENDS_TORCH_HAS:
            raise RuntimeError(
                f"Distributed package doesn't have {_BACKENDS_TORCH_HAS[name]} built in: "
                f"learntorch runs its collectives on MPI only.  Use backend=\"mpi\" (on real "
                f"PyTorch, backend=\"{name}\" works as you wrote it).")
        raise ValueError(f"Invalid backend: '{backend}'.  learntorch.distributed has one "
                         "backend, \"mpi\": init_process_group(backend=\"mpi\")")


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        raise RuntimeError(
            "Distributed package doesn't have MPI built in: mpi4py is not installed.  "
            "Install MPI with pip install 'learntorch[distributed]' (mpi4py and the mpich "
            "wheel, which brings its own mpiexec)") from None
    return MPI


def _check_agrees(name, given, actual, source):
    """``world_size``/``rank``, when given, must be what MPI's launcher made this process."""
    if given is None or int(given) < 0 or int(given) == actual:
        return
    raise ValueError(
        f"{source} says {name}={given}, but MPI started this process with {name}={actual}.  "
        "With MPI the launcher decides how many ranks there are and which is which: start "
        "N ranks with python -m learntorch.distributed.run --nproc-per-node N script.py (or "
        "run_ranks(fn, nprocs=N)), and leave world_size and rank out")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's processes into the default group (torch's ``init_process_group``).

    ``backend`` must be ``"mpi"`` (or None).  ``init_method`` (``"env://"``, the
    default torchrun's scripts use, or a URL) and ``store`` are accepted and not
    needed: MPI's launcher has already connected the processes.  ``world_size``
    and ``rank``, given or read from WORLD_SIZE and RANK as ``env://`` does, must
    agree with MPI's.  ``timeout`` is kept for ``get_backend``-style queries only:
    MPI's collectives do not time out.
    """
    global _default
    if _default is not None:
        raise ValueError("trying to initialize the default process group twice!  Call "
                         "destroy_process_group() first, or check dist.is_initialized()")
    _check_backend(backend)
    MPI = _mpi()
    world = MPI.COMM_WORLD
    actual_size, actual_rank = world.Get_size(), world.Get_rank()
    for name, given, actual, variable in (("world_size", world_size, actual_size, "WORLD_SIZE"),
                                          ("rank", rank, actual_rank, "RANK")):
        if given not in (None, -1):
            _check_agrees(name, given, actual, f"init_process_group({name}={given})")
        elif init_method in (None, "env://"):
            # env:// reads the environment, as torch does: it must agree with MPI too
            _check_agrees(name, os.environ.get(variable), actual,
                          f"the environment variable {variable}")
    comm = world.Dup()
    # errors come back as Python exceptions (mpi4py's default for COMM_WORLD; made explicit)
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    if actual_size > 1:
        _abort_on_uncaught_exception(MPI)
    _default = ProcessGroup(comm)


def _pause_for_mpiexec_to_forward_output():
    """mpiexec copies each rank's output from a pipe; an abort stops that copying at once,
    and the end of a traceback written just before could be lost.  A moment first."""
    import time
    time.sleep(0.2)


def _abort_on_uncaught_exception(MPI):
    """An exception no code catches ends the whole job, not only this rank: the others would
    wait for it in their next collective forever.  (Under learntorch's launcher, the rank's
    first code does this already; this covers a plain ``mpiexec -n N python train.py``.)"""
    import sys
    previous = sys.excepthook
    if getattr(previous, "_aborts_mpi", False):
        return

    def print_then_abort(kind, value, traceback):
        previous(kind, value, traceback)
        sys.stderr.flush()
        _pause_for_mpiexec_to_forward_output()
        MPI.COMM_WORLD.Abort(1)
    print_then_abort._aborts_mpi = True
    sys.excepthook = print_then_abort


def destroy_process_group(group=None):
    """Leave the default group (MPI keeps running until Python exits; see the module doc)."""
    global _default
    pg = resolve(group)
    pg._comm.Free()
    _default = None


def get_rank(group=None):
    return resolve(group).rank()


def get_world_size(group=None):
    return resolve(group).size()


def get_backend(group=None):
    return resolve(group).name()
