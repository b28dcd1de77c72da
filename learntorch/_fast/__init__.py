"""The fast tier: everything in learntorch that exists only for speed.

The reference tier -- ``Tensor``, ``autograd/function.py``, ``autograd/engine.py``, the
ops and the numpy backend -- is the engine as a learner reads it.  This package holds
the pieces that make the same computations faster, each naming the reference code it
replaces and proven equal to it by ``tests/tiers/``:

* ``apply.py`` -- ``Function.apply`` with cheap node construction (``FAST_FORWARD``
  and ``ARRAYS_ONLY`` for the hottest forwards, filled by ``arithmetic.py``,
  ``matmul.py``, ``linear.py`` and ``cross_entropy.py``);
* ``operators.py`` -- ``Tensor``'s ``*`` and ``+`` in one call when recorded on plain operands;
* ``leaf_edges.py`` -- a leaf's ``(AccumulateGrad, 0)`` edge made once, not at every use;
* ``cast.py`` -- ``x.to(dtype)`` between floating dtypes in one call (autocast's casts);
* ``engine.py`` -- the raw-array backward engine for plain ``backward()``, with
  ``array_backward.ARRAY_BACKWARD`` and gradient-buffer adoption;
* ``matmul.py`` -- ``Mm``'s forward, and ``a @ b`` of two matrices the tape does not record;
* ``linear.py`` -- ``Linear``'s forward (``F.linear``, ``nn.Linear``) in two numpy calls;
* ``cross_entropy.py`` -- ``F.cross_entropy``'s forward for a classifier's (N, C) logits;
* ``float_errors.py`` -- numpy's float-error switch without ``np.errstate``;
* ``choose_qparams.py`` -- a dynamic quantized Linear's per-batch scale and zero point
  in Python floats where that is exact.

Fused Numba kernels are the other half of speed; they live with the backend they
serve (``backends/numba_cpu``), behind the backend contract.

``install()`` puts the fast pieces in place (``learntorch`` does it at import unless
``LEARNTORCH_REFERENCE=1``); ``uninstall()`` puts the reference back.  Learners switch
with ``learntorch.tiers.set_tier("reference")`` (see ``learntorch/tiers.py``).
"""
from ..amp import autocast_mode as _autocast_mode
from ..ao.nn.quantized.dynamic import _linear_dynamic
from ..autograd import engine as _reference_engine
from ..autograd.function import Function as _Function
from .._tensor import Tensor as _Tensor
from ..ops import activations as _activations, shape as _shape, unary as _unary
from . import apply as _apply, arithmetic as _arithmetic, engine as _engine  # noqa: F401
from . import choose_qparams as _choose_qparams, linear as _linear, matmul as _matmul
from . import cross_entropy as _cross_entropy  # noqa: F401
from . import cast as _cast, operators as _operators
from .array_backward import ARRAY_BACKWARD  # noqa: F401

# forwards that compute on arrays alone, besides the FAST_FORWARD ones (grad mode need
# not be switched off around them: no tensor op inside)
_apply.ARRAYS_ONLY.update({_unary.Neg, _unary.Exp, _unary.Log, _activations.Tanh,
                           _activations.Sigmoid, _activations.Relu, _shape.ToDtype})

#: (owner, attribute, fast version): what ``install`` replaces, and with what
REPLACEMENTS = (
    (_Function, "apply", _apply.FAST_APPLY),
    (_Tensor, "__matmul__", _matmul.tensor_matmul),
    (_reference_engine, "run_backward", _engine.run_backward),
    (_linear_dynamic, "choose_qparams", _choose_qparams.choose_qparams),
    (_Tensor, "__mul__", _operators.mul), (_Tensor, "__rmul__", _operators.mul),
    (_Tensor, "__add__", _operators.add), (_Tensor, "__radd__", _operators.add),
    (_shape, "to_dtype", _cast.to_dtype), (_autocast_mode, "to_dtype", _cast.to_dtype),
)
_originals = {}


def install():
    """Put the fast pieces in place of the reference code they replace."""
    for owner, name, fast in REPLACEMENTS:
        _originals.setdefault((owner, name), vars(owner)[name])
        setattr(owner, name, fast)


def uninstall():
    """Put the reference code back: the engine runs exactly what a learner reads."""
    for owner, name, _ in REPLACEMENTS:
        original = _originals.get((owner, name))
        if original is not None:
            setattr(owner, name, original)


def installed():
    return all(vars(owner)[name] is fast for owner, name, fast in REPLACEMENTS)
