"""Turning a kernel's source into something callable, once per source text.

Compiling a kernel with Numba takes about half a second; a kernel is needed again
whenever the same group of ops shows up (a second cache entry, another layer of the
same width, ``learntorch.compiler.reset()`` followed by a new compile, the next
session).  So kernels are kept by the text of their source, at two levels:

* **in memory** -- a dict from the source text to the compiled function: within one
  process, a second kernel with the same source is free (the *canonical* source,
  codegen.py: positional names, so that two layers doing the same thing share one);
* **on disk** -- each source is written once to ``<cache dir>/lt_<hash>.py`` and
  imported from there, so Numba's own cache (``@njit(cache=True)``, which needs a file)
  keeps the machine code, in ``__pycache__`` beside the file or in ``NUMBA_CACHE_DIR``.
  A new Python process compiling the same model finds the file and loads the machine
  code in milliseconds.  The directory is ``$LEARNTORCH_COMPILE_CACHE``, or
  ``learntorch_compile_<user>`` in the temporary directory (torch's Inductor keeps its
  cache in ``/tmp/torchinductor_<user>`` the same way); open the files to read the
  kernels.

The source is the key, and it holds no sizes (the loop bounds are arguments), so one
compiled kernel serves every size of the same group.

``backend="reference"`` runs the same source *without* Numba: ``njit`` does nothing,
``prange`` is ``range``, and ``math``'s functions are numpy's (Python's ``math.log(0)``
raises where Numba and numpy give ``-inf``).  Slow -- one Python step per element --
but a debugger can stop inside the loop.  Numba itself is imported only when a kernel
is first compiled (``import learntorch`` never pays for it).
"""
import functools
import getpass
import hashlib
import importlib.util
import os
import sys
import tempfile
import types

import numpy as np

from .codegen import CANONICAL_NAME, HEADER

_compiled = {}   # (source text, backend) -> callable


def cache_dir():
    """Where kernel sources are written (created on first use).

    ``$LEARNTORCH_COMPILE_CACHE`` when it names a folder this process may write to; else
    the temporary directory's -- a read-only folder (a grading sandbox sees the host's
    folders read-only) must not stop a compile."""
    path = os.environ.get("LEARNTORCH_COMPILE_CACHE")
    if path:
        try:
            os.makedirs(path, exist_ok=True)
            if os.access(path, os.W_OK):
                return path
        except OSError:
            pass
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001  (no user name in some containers)
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    path = os.path.join(tempfile.gettempdir(), f"learntorch_compile_{user}")
    os.makedirs(path, exist_ok=True)
    return path


def load(source, backend="numba"):
    """The callable kernel of ``source`` (a KernelSource), compiled once per source text
    (its canonical text for Numba: codegen.py's "shared kernels")."""
    key = (source.canonical if backend == "numba" else source.text, backend)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = (_load_numba(source) if backend == "numba"
                               else _load_reference(source))
    return fn


def clear_memory():
    """Forget the kernels loaded in this process (the files on disk stay)."""
    _compiled.clear()


def path_of(source):
    """The file the kernel's canonical source is (or will be) written to.

    The name hashes the source *and* the files of the scalar helpers it imports
    (``fast_gelu`` and what it calls): Numba's cache checks only the kernel's own file, so
    a helper edited since would otherwise keep running from the old machine code."""
    digest = hashlib.sha256(source.canonical.encode() + _helper_files_digest()).hexdigest()[:20]
    return os.path.join(cache_dir(), f"lt_{digest}.py")


@functools.cache   # once per process
def _helper_files_digest():
    from ..backends.numba_cpu import fast_erf, fast_exp, fast_gelu, per_float_type
    h = hashlib.sha256()
    for module in (fast_gelu, fast_erf, fast_exp, per_float_type):
        with open(module.__file__, "rb") as f:
            h.update(f.read())
    return h.digest()


def _load_numba(source):
    from ..backends.numba_cpu import loader
    # what the Numba backend does before its first kernel: sleeping idle threads, and no
    # more threads than the CPUs this process may use (loader.py says why)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("NUMBA_NUM_THREADS", str(loader.usable_cpus()))
    loader.choose_threading_layer()  # a parallel kernel must not run on PyTorch's OpenMP
    path = path_of(source)
    if not os.path.exists(path):
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(source.canonical)
        os.replace(temporary, path)  # whole or not at all, even with two processes at once
    name = "learntorch_kernels." + os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Numba's cache locates a function through its module
    spec.loader.exec_module(module)
    return getattr(module, CANONICAL_NAME)


def _load_reference(source):
    # fast_gelu (the Numba kernels' gelu, within 8 float32 ulp) is the textbook formula
    # here: the reference backend is the readable one
    namespace = {"np": np, "math": REFERENCE_MATH, "fast_gelu": REFERENCE_MATH.gelu,
                 "njit": _no_jit, "prange": range}
    code = compile(source.text[len(HEADER):], f"<learntorch kernel {source.name}>", "exec")
    exec(code, namespace)  # noqa: S102  (our own generated source)
    return _quietly(namespace[source.name])


def _no_jit(*args, **kwargs):
    """``@njit(...)`` in the reference backend: the function stays plain Python."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def _quietly(kernel):
    """numpy scalars warn on 1/0 where Numba's kernels give inf silently: no warnings."""
    def run(*args):
        with np.errstate(all="ignore"):
            return kernel(*args)
    run.__name__ = kernel.__name__
    run.__wrapped__ = kernel
    return run


def _numpy_math():
    """``math`` for the reference backend: each function numpy's, on numpy scalars."""
    names = {"exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10,
             "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin, "cos": np.cos,
             "tanh": np.tanh, "sqrt": np.sqrt, "isinf": np.isinf, "isfinite": np.isfinite}
    namespace = types.SimpleNamespace(**names)
    import math
    erf = np.frompyfunc(math.erf, 1, 1)
    namespace.erf = lambda v: np.float64(erf(np.float64(v)))
    # gelu(v) = v * Phi(v), in float64 and rounded once to v's dtype
    namespace.gelu = lambda v: type(v)(0.5 * np.float64(v) * (1 + namespace.erf(
        np.float64(v) * np.sqrt(0.5))))
    return namespace


REFERENCE_MATH = _numpy_math()
