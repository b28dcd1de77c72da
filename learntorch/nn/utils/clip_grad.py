"""Gradient clipping: keep one bad batch from throwing the parameters far away.

* ``clip_grad_norm_(parameters, max_norm)`` -- if the gradients, seen as one long
  vector, have a norm above ``max_norm``, scale them all down by the same factor
  ``max_norm / (norm + 1e-6)``.  The direction of the step is kept; only its
  length is capped.  Returns that total norm (before clipping) as a tensor,
  which is worth logging: spikes show where training goes unstable.
* ``clip_grad_value_(parameters, clip_value)`` -- clamp every gradient element
  into ``[-clip_value, clip_value]`` (this changes the direction).

``get_total_norm`` and ``clip_grads_with_norm_`` are the two halves of
``clip_grad_norm_``.  Everything runs under ``no_grad`` and changes ``p.grad``
in place.  Parameters whose ``.grad`` is None are skipped.

The total norm is the p-norm of the per-tensor p-norms, which equals the norm
of all gradients concatenated: the backend's ``norm_of_arrays``, which accumulates
each norm in float64 and rounds it to the gradients' dtype, so a float32 result is
the correctly rounded value (torch's agrees to within its last bit or two).  The
scaling and the clamping are in-place tensor ops.
"""
import math
import types
import warnings

from ... import backends
from ..._dtypes import promote_types
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...factories import tensor as _tensor


def _as_list(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together, as a 0-dim tensor."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _tensor(0.0)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote_types(dtype, t.dtype)
    total = backends.current.norm_of_arrays([t._data for t in tensors], norm_type)
    total = _tensor(total, dtype=dtype, device=tensors[0].device)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every ``p.grad`` by ``min(max_norm / (total_norm + 1e-6), 1)``, in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    with no_grad():
        # in total_norm's dtype, as torch's tensor arithmetic; a nan or inf total scales by
        # nan or 0 (and inf * 0 is nan), as in torch, quietly
        clip_coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients so that their total norm is at most ``max_norm``; return the norm."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated spelling of ``clip_grad_norm_`` (it does change the gradients in place)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
