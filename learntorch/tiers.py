"""Which tier runs: the reference engine a learner reads, or the same engine made fast.

learntorch has one engine in two tiers (see ``learntorch/_fast/__init__.py``):

* ``"reference"`` -- ``Function.apply`` and the backward engine exactly as written in
  ``learntorch/autograd``, every array operation on the numpy backend.  What you read
  is what runs: use it to follow an operation line by line, in a debugger or with
  ``learntorch.utils.code_walk``;
* ``"fast"`` (the default) -- the fast tier's replacements for the bookkeeping
  (``learntorch/_fast``) and the Numba backend's compiled kernels.  Same results: the
  tests prove each fast piece equal to the reference it replaces.

Pick one for the whole process with the environment variable ``LEARNTORCH_REFERENCE=1``
(read at ``import learntorch``), or at run time::

    learntorch.tiers.set_tier("reference")
    with learntorch.tiers.use("reference"):
        ...

These names are learntorch's own (torch has no such switch).
"""
import contextlib
import os

from . import _fast, backends

_TIERS = ("reference", "fast")
_current = "fast"


def get_tier():
    """The tier that runs now: ``"reference"`` or ``"fast"``."""
    return _current


def set_tier(tier):
    """Run the ``"reference"`` or the ``"fast"`` tier from now on (engine and backend)."""
    global _current
    if tier not in _TIERS:
        raise ValueError(f"unknown tier {tier!r}; choose 'reference' (the engine as written, "
                         "numpy backend) or 'fast' (the default)")
    if tier == "reference":
        _fast.uninstall()
        backends.set_backend("numpy")
    else:
        _fast.install()
        backends.set_backend(backends.default_backend_name())
    _current = tier


@contextlib.contextmanager
def use(tier):
    """Run a block in ``tier``, then go back to the tier (and backend) of before."""
    previous, previous_backend = _current, backends.current
    set_tier(tier)
    try:
        yield
    finally:
        set_tier(previous)
        backends.current = previous_backend


def _from_environment():
    """The tier ``LEARNTORCH_REFERENCE`` asks for at import: reference when set to 1."""
    set_tier("reference" if os.environ.get("LEARNTORCH_REFERENCE", "") not in ("", "0")
             else "fast")
