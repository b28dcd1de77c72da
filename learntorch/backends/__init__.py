"""Backends: who computes the primitive array operations.

``learntorch.backends.current`` is the active backend object; every autograd
function calls its primitives (see ``reference.NumpyBackend`` for the contract).

* ``"numba"`` (default): compiled CPU kernels where they beat numpy, numpy
  elsewhere.  Numba itself is imported only when a kernel is first needed, so
  ``import learntorch`` and small operations stay fast.
* ``"numpy"``: the pure-numpy reference backend, the oracle the tests use.

Swap with ``learntorch.backends.set_backend("numpy")`` or temporarily with
``with learntorch.backends.use("numpy"): ...``.  A learner's own backend object
(for example a subclass that replaces one kernel) can be passed too.
"""
import contextlib

from .reference import NumpyBackend

_registry = {"numpy": NumpyBackend}
current = None


def _make(name_or_backend):
    if not isinstance(name_or_backend, str):
        return name_or_backend
    if name_or_backend == "numba" and "numba" not in _registry:
        from .numba_cpu import NumbaBackend
        _registry["numba"] = NumbaBackend
    try:
        return _registry[name_or_backend]()
    except KeyError:
        raise ValueError(
            f"unknown backend {name_or_backend!r}; choose one of 'numba', 'numpy' "
            "or pass a backend object") from None


def set_backend(name_or_backend):
    """Make ``name_or_backend`` ('numba', 'numpy' or an object) the active backend."""
    global current
    current = _make(name_or_backend)
    return current


def get_backend():
    return current


@contextlib.contextmanager
def use(name_or_backend):
    """Run a block with another backend, then restore the previous one."""
    global current
    previous = current
    current = _make(name_or_backend)
    try:
        yield current
    finally:
        current = previous


def _default():
    try:
        return _make("numba")
    except ImportError:  # numba missing: the reference backend still runs everything
        return NumpyBackend()


current = _default()
