"""Distances and similarities between vectors: ``cosine_similarity``, ``pairwise_distance``,
``normalize``.

Each is a composition of tensor ops, as in torch (so the graph records those ops, and
every derivative, of any order, comes from them):

* ``normalize(x, p, dim)`` = x / max(||x||_p, eps) along ``dim``;
* ``pairwise_distance(x1, x2, p)`` = ||x1 - x2 + eps||_p along the last dim (``eps``
  keeps the gradient finite where x1 == x2);
* ``cosine_similarity(x1, x2, dim)`` = sum(x1 / ||x1|| * x2 / ||x2||) along ``dim``, each
  norm at least ``eps``.  Dividing by the norms *before* the product keeps the result
  in [-1, 1]; the floor ``eps`` is applied without being recorded (torch's
  ``clamp_min_`` under ``no_grad``), so the gradient is that of the plain quotient.
"""
from ... import _dtypes
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.broadcast import _broadcast_tuple


def _require_tensors(name, **named):
    for position, (arg, value) in enumerate(named.items(), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``)."""
    if not isinstance(input, Tensor):  # torch's error: it calls input.norm(...) first
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'norm': "
                             "normalize() takes a Tensor; wrap it with torch.tensor(...)")
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported by learntorch; use the "
                                  "returned tensor")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim (the inputs broadcast)."""
    _require_tensors("pairwise_distance", x1=x1, x2=x2)
    innermost = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, innermost, keepdim=keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (they broadcast)."""
    _require_tensors("cosine_similarity", x1=x1, x2=x2)
    common = _dtypes.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_long_name(common)} (x1: {x1.dtype}, x2: {x2.dtype}); convert "
                           "them first, e.g. x1.float()")
    x1 = x1 if x1.dtype.is_floating_point else x1.to(common)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(common)
    shape = _broadcast_tuple(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():  # the floor is not part of the derivative (as torch)
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _long_name(dtype):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dtype.name, dtype.name)
