"""Backends: who computes the primitive array operations.

``learntorch.backends.current`` is the active backend object; every autograd
function calls its primitives (see ``reference.NumpyBackend`` for the contract).

* ``"numba"`` (default): compiled CPU kernels where they beat numpy, numpy
  elsewhere.  Numba itself is imported only when a kernel is first needed, so
  ``import learntorch`` and small operations stay fast.
* ``"numpy"``: the pure-numpy reference backend, the oracle the tests use.

Swap with ``learntorch.backends.set_backend("numpy")`` or temporarily with
``with learntorch.backends.use("numpy"): ...``.  A learner's own backend object
(for example a subclass of ``NumpyBackend`` that replaces one kernel) can be
passed too; every op then calls it.  ``warmup()`` compiles the Numba kernels
ahead of time (see ``numba_cpu/__init__.py`` on the on-disk cache).
"""
import contextlib

from .reference import NumpyBackend
from .numba_cpu import NumbaBackend  # imports only numpy: Numba loads with the first kernel

_registry = {"numpy": NumpyBackend, "numba": NumbaBackend}
current = None

# the primitives every backend must provide: the public methods of the reference
_PRIMITIVES = tuple(name for name in dir(NumpyBackend)
                    if not name.startswith("_") and callable(getattr(NumpyBackend, name)))


def _make(name_or_backend):
    if isinstance(name_or_backend, str):
        try:
            return _registry[name_or_backend]()
        except KeyError:
            raise ValueError(
                f"unknown backend {name_or_backend!r}; choose one of 'numba', 'numpy' "
                "or pass a backend object") from None
    return _checked(name_or_backend)


def _checked(backend):
    """A learner's backend object, after checking that it can serve every op."""
    if isinstance(backend, type):
        raise TypeError(
            f"set_backend() takes a backend object, not the class {backend.__name__}; "
            f"create one first: set_backend({backend.__name__}())")
    missing = [name for name in _PRIMITIVES if not callable(getattr(backend, name, None))]
    if missing:
        raise TypeError(
            f"{type(backend).__name__} is not a backend: it lacks the primitive(s) "
            f"{', '.join(missing)}. Subclass learntorch.backends.NumpyBackend and override only "
            "the ones you want to replace; the others are inherited.")
    return backend


def set_backend(name_or_backend):
    """Make ``name_or_backend`` ('numba', 'numpy' or a backend object) the active backend."""
    global current
    current = _make(name_or_backend)
    return current


def get_backend():
    """The active backend object (``learntorch.backends.current``)."""
    return current


@contextlib.contextmanager
def use(name_or_backend):
    """Run a block with another backend, then restore the previous one (even on error)."""
    global current
    previous = current
    current = _make(name_or_backend)
    try:
        yield current
    finally:
        current = previous


def warmup(dtypes=("float32", "float64"), all_kernels=False):
    """Compile (or load from Numba's on-disk cache) the CPU kernels for ``dtypes`` now.

    Kernels otherwise compile on their first large input, a second or more each
    the first time on a machine.  By default only the kernels the active Numba
    backend would use are warmed (those with a size threshold) with the layers' pooling,
    col2im and cross-entropy kernels and the optimizers' updates; ``all_kernels=True``
    warms every one.  Returns the names of the kernels warmed.
    """
    from .numba_cpu import warmup as warm_numba
    if all_kernels:
        return warm_numba(dtypes)
    backend = current if isinstance(current, NumbaBackend) else NumbaBackend()
    primitives = [op for op, size in backend.min_sizes.items() if size is not None]
    # the layers' own kernels (max pooling, conv's col2im, cross-entropy) serve large inputs
    # whatever the backend's thresholds: warm them too
    return warm_numba(dtypes, primitives + ["max_pool2d", "max_pool2d_backward", "col2im",
                                            "cross_entropy", "cross_entropy_backward",
                                            "sgd", "adam", "rmsprop", "adagrad"])


def default_backend_name():
    """The fast tier's backend: 'numba', or 'numpy' where numba is not installed."""
    import importlib.util
    return "numba" if importlib.util.find_spec("numba") is not None else "numpy"


current = NumpyBackend()  # learntorch.tiers picks the backend of its tier at import
