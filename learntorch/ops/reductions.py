"""Reductions: sum, mean, prod, max/min, var/std, logsumexp, norm, all/any, cumsum.

Every reduction takes ``dim`` (None, an int or a tuple of ints) and
``keepdim``.  Backward of a reduction *broadcasts* the gradient back over the
reduced dimensions (``ExpandBack``): each input element contributed to one
output element, so it receives that element's gradient (times its local
derivative).

Node names follow torch: a reduction of everything and one along dims are
different nodes there (``SumBackward0`` / ``SumBackward1``), so the ``...All``
subclasses below only rename; the rule is the same.
"""
import math
import builtins
import collections
import warnings

import numpy as np

from .. import _dtypes
from .. import backends
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Function
from . import comparison
from ._helpers import as_array, require_tensors, wrap


class ExpandBack(Function):
    """A reduction's backward: every element that went into an output gets that output's
    gradient -- ``grad`` broadcast back over the reduced ``dims`` (torch's expand).
    Its own backward sums them again: sum and expand are each other's backward."""

    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dims, keepdim):
        ctx.dims, ctx.keepdim = dims, keepdim
        g = grad._data if keepdim else grad._data.reshape(  # put back the reduced dims, as 1s
            [1 if d in dims else n for d, n in enumerate(shape)])
        return Tensor._wrap(backends.current.broadcast_to(g, shape))

    @staticmethod
    def backward(ctx, gg):
        return gg.sum(dim=ctx.dims, keepdim=ctx.keepdim), None, None, None


class Sum(Function):
    """sum over the given dims; every input element receives its output's gradient."""
    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim = x._data.shape, dims, keepdim
        # torch sums bool and integer tensors as int64, unless a dtype is asked for (and keeps
        # the dtype asked for, where numpy would widen an int32 sum to int64 by itself)
        dtype = dtype or (x._dtype if x._dtype.is_floating_point else _dtypes.int64)
        a = x._data if x._data.dtype == dtype.np else backends.current.cast(x._data, dtype.np)
        return wrap(as_array(backends.current.sum(a, dims, keepdim), dtype=dtype.np))

    @staticmethod
    def backward(ctx, grad):
        return ExpandBack.apply(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class SumToSize(Function):
    """Broadcasting's backward: ``grad`` summed down to the ``shape`` of an input that was
    broadcast to ``grad``'s shape.  That input was used once per copy, so it receives the
    **sum over the broadcast dimensions** -- those it lacked (in front) and those where it
    had size 1.  The engine applies it to every gradient an op sends back with a larger
    shape than its input's, so each backward is written as if nothing was broadcast.
    (torch's ``Tensor.sum_to_size``.)"""

    node_name = "SumBackward1"  # what torch records for sum_to_size

    @staticmethod
    def forward(ctx, x, shape):
        a = x._data
        lead = a.ndim - len(shape)  # the dims ``shape`` lacks, in front
        if lead < 0 or builtins.any(n != 1 and n != m for n, m in zip(shape, a.shape[lead:])):
            raise RuntimeError(f"size {list(shape)} is not expandable to size {list(a.shape)}: "
                               "sum_to_size sums a tensor down to a shape it was broadcast from")
        ctx.shape, ctx.dims = a.shape, tuple(range(lead)) + tuple(
            lead + d for d, n in enumerate(shape) if n == 1 and a.shape[lead + d] != 1)
        summed = backends.current.sum(a, ctx.dims, True)  # (numpy widens small integers:
        return Tensor._wrap(as_array(summed, a.dtype).reshape(shape))  # back to a's dtype)

    @staticmethod
    def backward(ctx, grad):
        return ExpandBack.apply(grad, ctx.shape, ctx.dims, False), None


class SumAll(Sum):
    node_name = "SumBackward0"  # torch names the sum of everything (no dim) differently


class Mean(Function):
    """mean = sum / count: each element receives 1/count of its output's gradient."""
    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        a = x._data if dtype is None else backends.current.cast(x._data, dtype.np)
        ctx.shape, ctx.dims, ctx.keepdim = x._data.shape, dims, keepdim
        ctx.count = math.prod([x.shape[d] for d in dims]) if dims else 1
        return wrap(backends.current.mean(a, dims, keepdim))  # (mean of nothing: nan, as torch)

    @staticmethod
    def backward(ctx, grad):
        return (ExpandBack.apply(grad / ctx.count, ctx.shape, ctx.dims, ctx.keepdim),
                None, None, None)


class MeanAll(Mean):
    node_name = "MeanBackward0"


class Prod(Function):
    """prod along one dim; ``ProdAll`` is the product of everything."""
    node_name = "ProdBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        if dtype is None:  # like sum, integer products are int64 unless a dtype is asked for
            dtype = x._dtype if x._dtype.is_floating_point else _dtypes.int64
        a = x._data.astype(dtype.np, copy=False)
        out = wrap(backends.current.prod(a, dims, keepdim))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if x.ndim == 0:  # the product of one number is that number: torch passes grad on
            return grad, None, None, None
        g = ExpandBack.apply(grad, x.shape, ctx.dims, ctx.keepdim)
        if not (x == 0).any():
            # d(x1 * x2 * ... * xn)/dxi is the product of the others = product / xi
            # (grad * (product / xi): torch's order, so the rounding is its own too)
            others = ExpandBack.apply(out, x.shape, ctx.dims, ctx.keepdim) / x
            return g * others, None, None, None
        if math.prod([x.shape[d] for d in ctx.dims]) == 1:
            return g, None, None, None  # one factor: torch passes grad on (no graph to go on)
        # a zero turns product / xi into 0 / 0: multiply the others explicitly instead
        return g * _product_of_others(x, ctx.dims), None, None, None


class ProdAll(Prod):
    node_name = "ProdBackward0"


def _product_of_others(x, dims):
    """For each element, the product of the *other* elements of its slice along ``dims``.

    Row i of an n x n matrix holds the slice with its i-th entry replaced by 1, so
    the row's product is the product of the others.  That costs n^2, which is why
    it is only used when a zero forbids dividing.  Built from differentiable ops,
    so second derivatives (create_graph=True) work too.
    """
    if len(dims) != 1 or x.ndim == 0:  # the full product: one slice holding everything
        return _product_of_others(x.reshape(-1), (0,)).reshape(x.shape)
    from ..factories import eye
    moved = x.movedim(dims[0], -1)
    n = moved.shape[-1]
    rows = moved.unsqueeze(-2).expand(*moved.shape[:-1], n, n)
    others = rows.masked_fill(eye(n, dtype=_dtypes.bool_), 1.0).prod(-1)
    return others.movedim(-1, dims[0])


class _Extreme(Function):
    """amax/amin: the gradient is shared evenly among the elements equal to the extreme.

    (A tie has no single derivative; splitting evenly is the subgradient torch
    picks, and it keeps the total gradient the same as with one winner.)
    """

    method = None

    @classmethod
    def forward(cls, ctx, x, dims, keepdim):
        out = wrap(getattr(backends.current, cls.method)(x._data, dims, keepdim))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @classmethod
    def backward(cls, ctx, grad):
        x, out = ctx.saved_tensors
        full = ExpandBack.apply(out, x.shape, ctx.dims, ctx.keepdim)
        mask = cls.winners(x, full)
        count = mask.sum(dim=ctx.dims, keepdim=True)
        g = ExpandBack.apply(grad, x.shape, ctx.dims, ctx.keepdim)
        return g * mask / count, None, None

    @staticmethod
    def winners(x, extreme):
        """The elements equal to the extreme.  (With a nan the extreme is nan, equal to
        nothing: 0 / 0 makes every gradient nan -- torch's amax/amin do the same.)"""
        return x == extreme


class Amax(_Extreme):
    node_name, method = "AmaxBackward0", "amax"


class Amin(_Extreme):
    node_name, method = "AminBackward0", "amin"


class MaxAll(Amax):
    """max() without dim: amax's rule (ties share), except that torch gives a nan extreme's
    gradient to the nan elements (shared among them), not nan to every element."""

    node_name = "MaxBackward1"

    @staticmethod
    def winners(x, extreme):
        return (x == extreme) | (x.isnan() & extreme.isnan())


class MinAll(Amin):
    node_name = "MinBackward1"
    winners = MaxAll.winners


class _ExtremeWithIndices(Function):
    """max(dim)/min(dim): values and int64 indices; the gradient goes to the index taken."""

    @classmethod
    def forward(cls, ctx, x, dim, keepdim):
        # the *first* extreme on ties, as torch on the CPU, and the first nan if there is one
        vals, idx = getattr(backends.current, cls.method)(x._data, dim, keepdim)
        values, indices = wrap(vals), wrap(idx)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        if not ctx.shape:
            return grad.clone(), None, None
        if not ctx.keepdim:
            grad, indices = grad.unsqueeze(ctx.dim), indices.unsqueeze(ctx.dim)
        return _zeros(ctx.shape, grad).scatter_add(ctx.dim, indices, grad), None, None


def _zeros(shape, like):
    """zeros of ``shape`` in ``like``'s dtype and on its device (a backward's canvas)."""
    return Tensor._wrap(backends.current.full(shape, 0, like._data.dtype, like=like._data))


class MaxDim(_ExtremeWithIndices):
    node_name, method = "MaxBackward0", "max_along"


class MinDim(_ExtremeWithIndices):
    node_name, method = "MinBackward0", "min_along"


# the named tuples max(dim)/min(dim) return: r.values, r.indices, or `values, indices = r`
max_result = collections.namedtuple("max", ["values", "indices"])
min_result = collections.namedtuple("min", ["values", "indices"])


def _variance(ctx, x, dims, correction, keepdim, sqrt=False):
    """Forward of var: mean squared distance from the mean, divided by n - correction.

    Also stores in ``ctx`` what the backward rules share.  A divisor <= 0 (fewer
    elements than the correction) gives inf or nan, as in torch.
    """
    n = math.prod([x.shape[d] for d in dims]) if dims else 1
    ctx.dims, ctx.keepdim, ctx.count = dims, keepdim, n
    ctx.divisor = builtins.max(n - correction, 0)
    return backends.current.var_mean(x._data, dims, correction, keepdim, sqrt)


def _variance_grad(ctx, x, grad):
    """d var / dx_i = 2 (x_i - mean) / (n - correction), times var's incoming gradient.

    (The mean's own dependence on x_i drops out: the deviations sum to zero.)
    """
    g = ExpandBack.apply(grad, x.shape, ctx.dims, ctx.keepdim)
    mean = x.mean(dim=ctx.dims, keepdim=True)
    if not ctx.divisor and len(ctx.dims) == x.ndim:
        # n <= correction over the whole tensor: 2 / 0 is inf, times (x - mean): nan
        # where x is the mean, inf elsewhere -- torch writes that as a constant, so no
        # second derivative follows (along some dims it keeps the formula below)
        inf = comparison.where(x == mean, float("nan"), float("inf"))
        return g * inf.detach()
    return g * (x - mean) * (2.0 / ctx.divisor if ctx.divisor else float("inf"))


def _std_to_var_grad(grad, std):
    """std = sqrt(var), so d std = d var / (2 std); 0 where std is 0, torch's subgradient."""
    return (grad / (2 * std)).masked_fill(std == 0, 0.0)


class Var(Function):
    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        ctx.save_for_backward(x)
        return wrap(_variance(ctx, x, dims, correction, keepdim)[0])

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return _variance_grad(ctx, x, grad), None, None, None


class Std(Function):
    node_name = "StdBackward0"

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        std = wrap(_variance(ctx, x, dims, correction, keepdim, sqrt=True)[0])
        ctx.save_for_backward(x, std)
        return std

    @staticmethod
    def backward(ctx, grad):
        x, std = ctx.saved_tensors
        return _variance_grad(ctx, x, _std_to_var_grad(grad, std)), None, None, None


class VarMean(Function):
    """var and mean in one pass; each output's gradient adds its own rule's share."""
    node_name = "VarMeanBackward0"

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        var, mean = _variance(ctx, x, dims, correction, keepdim)
        ctx.save_for_backward(x)
        ctx.set_materialize_grads(False)  # an unused output adds nothing (not 0 * nan)
        return wrap(var), wrap(mean)

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        x, = ctx.saved_tensors
        return _sum_defined(
            _variance_grad(ctx, x, grad_var) if grad_var is not None else None,
            ExpandBack.apply(grad_mean / ctx.count, x.shape, ctx.dims, ctx.keepdim)
            if grad_mean is not None else None), None, None, None


def _sum_defined(a, b):
    """a + b, where None (an output nobody used) adds nothing."""
    return b if a is None else (a if b is None else a + b)


class StdMean(Function):
    node_name = "StdMeanBackward0"

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        std, mean = _variance(ctx, x, dims, correction, keepdim, sqrt=True)
        std = wrap(std)
        ctx.save_for_backward(x, std)
        ctx.set_materialize_grads(False)  # an unused output adds nothing (not 0 * nan)
        return std, wrap(mean)

    @staticmethod
    def backward(ctx, grad_std, grad_mean):
        x, std = ctx.saved_tensors
        return _sum_defined(
            _variance_grad(ctx, x, _std_to_var_grad(grad_std, std))
            if grad_std is not None else None,
            ExpandBack.apply(grad_mean / ctx.count, x.shape, ctx.dims, ctx.keepdim)
            if grad_mean is not None else None), None, None, None


class Logsumexp(Function):
    node_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        a = x._data if x._dtype.is_floating_point else backends.current.cast(
            x._data, _dtypes.get_default_dtype().np)
        # (a row of -inf is log(0) = -inf, as in torch)
        out = wrap(as_array(backends.current.logsumexp(a, dims, keepdim), dtype=a.dtype))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        # d logsumexp / dx = softmax(x) = exp(x - logsumexp(x))
        full = ExpandBack.apply(out, x.shape, ctx.dims, ctx.keepdim)
        g = ExpandBack.apply(grad, x.shape, ctx.dims, ctx.keepdim)
        return g * (x - full).exp(), None, None


class Norm(Function):
    """The vector p-norm over ``dims``: (sum |x|^p)^(1/p).

    p = inf / -inf are max |x| / min |x|, and p = 0 counts the non-zeros.
    """
    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        out = wrap(backends.current.vector_norm(x._data, p, dims, keepdim))
        ctx.save_for_backward(x, out)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, norm = ctx.saved_tensors
        if ctx.p == 0:  # a count is piecewise constant: no gradient, as in torch
            return None, None, None, None
        g = ExpandBack.apply(grad, x.shape, ctx.dims, ctx.keepdim)
        n = ExpandBack.apply(norm, x.shape, ctx.dims, ctx.keepdim)
        return norm_derivative(x, n, g, ctx.p, ctx.dims), None, None, None


def norm_derivative(x, n, g, p, dims):
    """g * d||x||_p / dx, with the norm ``n`` and its gradient ``g`` already broadcast to
    x's shape over the reduced ``dims`` (p != 0).  Written as torch writes it, case by
    case, so that second derivatives agree too (at a zero norm, say)::

        p = 1      sign(x) g
        p = 2      g * (x / ||x||), 0 where the norm is 0
        p = inf    like amax(|x|): the extremes share g, with their sign
        p < 1      sign(x) |x|^(p-1) (0 at x = 0) * g * ||x||^(1-p)
        1 < p < 2  sign(x) |x|^(p-1) * (g / ||x||^(p-1), 0 where the norm is 0)
        p > 2      x |x|^(p-2) * (g / ||x||^(p-1), 0 where the norm is 0)
    """
    if p in (float("inf"), float("-inf")):
        # a nan is the extreme (torch's rule: the nans share it, and sign(nan) = 0 sends
        # them none)
        a = x.abs()
        mask = (a == n) | a.isnan()
        return x.sign() * (g / mask.sum(dim=dims, keepdim=True)) * mask
    if p == 1:
        return x.sign() * g
    zero = n == 0
    if p == 2:
        return g * (x / n).masked_fill(zero, 0.0)
    if p < 1:
        scaled = x.sign() * (x.abs() ** (p - 1)).masked_fill(x == 0, 0.0)
        return scaled * g * n ** (1 - p)
    scaled = x.sign() * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
    return scaled * (g / n ** (p - 1)).masked_fill(zero, 0.0)


# ---------------------------------------------------------------- public functions
def _dims(input, dim):
    """``dim`` as a sorted tuple of numpy axes.

    Two torch conventions need care: an empty tuple ``dim=()`` means *every*
    dim (like None), and a 0-dim tensor accepts ``dim=0``/``-1`` although its
    array has no axis 0 (reducing a single number leaves it unchanged).
    """
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(input._data.ndim))
    dims = input._wrap_dims(dim)
    return dims if input._data.ndim else ()


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all dims when None); ``Tensor.sum``."""
    if not isinstance(input, Tensor):
        require_tensors("sum", ("input", input))
    dtype = None if dtype is None else _differentiable_dtype(input, dtype)
    return (SumAll if dim is None else Sum).apply(input, _dims(input, dim), keepdim, dtype)


def _differentiable_dtype(input, dtype):
    """``dtype`` as a dtype, checked: a result that requires grad must be floating -- torch
    refuses sum(dtype=int64) of a tensor that requires grad (grad mode on) rather than
    silently cutting the graph."""
    dtype = _dtypes.to_dtype(dtype)
    if input._requires_grad and not dtype.is_floating_point and grad_mode.is_grad_enabled():
        raise RuntimeError(f"Autograd not support dtype: {_SHORT_NAMES.get(dtype.name, dtype)} "
                           f"(the input requires grad, and an integer result cannot carry a "
                           "gradient); sum in a floating dtype, or detach() the input first")
    return dtype


_SHORT_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}


def sum_to_size(input, *size):
    """``input`` summed down to ``size``, which ``input``'s shape must broadcast from."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return SumToSize.apply(input, shape)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    require_tensors("mean", ("input", input))
    dtype = _dtypes.to_dtype(dtype) if dtype is not None else None
    dt = dtype or input._dtype
    if not dt.is_floating_point:
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {input._type_name().split('.')[-1].replace('Tensor', '')}. "
            "Convert first, e.g. x.float().mean()")
    return (MeanAll if dim is None else Mean).apply(input, _dims(input, dim), keepdim, dtype)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    require_tensors("prod", ("input", input))
    dtype = _dtypes.to_dtype(dtype) if dtype is not None else None
    if dim is None:
        return ProdAll.apply(input, _dims(input, None), False, dtype)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}; "
                        "prod reduces one dim at a time, e.g. x.prod(0).prod(0)")
    return Prod.apply(input, _dims(input, dim), keepdim, dtype)


def _check_not_empty(input, dims, name, full):
    """Torch's errors for the extreme of nothing (a sum of nothing is 0; a max is undefined)."""
    if full and input.numel() == 0:
        raise (RuntimeError if name[:3] != "arg" else IndexError)(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0." +
            ("" if name[:3] == "arg" else " Specify the reduction dim with the 'dim' argument."))
    for d in dims:
        if input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax_amin(cls, name, input, dim, keepdim):
    require_tensors(name, ("input", input))
    full = dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)
    dims = _dims(input, dim)
    _check_not_empty(input, dims, name, full)
    return cls.apply(input, dims, keepdim)


def amax(input, dim=(), keepdim=False):
    return _amax_amin(Amax, "amax", input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    return _amax_amin(Amin, "amin", input, dim, keepdim)


def _max_min(input, dim, keepdim, other, name):
    require_tensors(name, ("input", input))
    if isinstance(dim, bool):  # torch.max(t, False) matches none of torch's overloads
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"bool); expected ({name}(input), {name}(input, dim: int, keepdim=False) "
                        f"or {name}(input, other: Tensor)); did you mean {name}(input, dim=0, "
                        f"keepdim={dim})?")
    if isinstance(dim, Tensor):  # torch.max(a, b) is maximum
        other, dim = dim, None
    if other is not None:
        return (comparison.maximum if name == "max" else comparison.minimum)(input, other)
    if dim is None:
        _check_not_empty(input, (), name, full=True)
        return (MaxAll if name == "max" else MinAll).apply(input, _dims(input, None), False)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}; "
                        f"to reduce several dims at once use x.a{name}({tuple(dim)}) "
                        "(values only)")
    d = input._wrap_dim(dim)
    _check_not_empty(input, _dims(input, d), name, full=False)
    result = max_result if name == "max" else min_result
    return result(*(MaxDim if name == "max" else MinDim).apply(input, d, keepdim))


def max(input, dim=None, keepdim=False, *, other=None):
    return _max_min(input, dim, keepdim, other, "max")


def min(input, dim=None, keepdim=False, *, other=None):
    return _max_min(input, dim, keepdim, other, "min")


def _arg_extreme(input, dim, keepdim, name):
    """argmax/argmin: int64 indices, never differentiable (an index has no gradient)."""
    require_tensors(name, ("input", input))
    if input._dtype is _dtypes.bool_:
        raise RuntimeError(f"{name}(): does not support bool input; convert the mask first, "
                           f"e.g. x.long().{name}()")
    fn = getattr(backends.current, name)
    a = input._data
    if dim is None:  # index into the flattened tensor
        _check_not_empty(input, (), name, full=True)
        out = fn(a, None, False)
        return wrap(out.reshape((1,) * a.ndim) if keepdim else out)
    d = input._wrap_dim(dim)
    if a.ndim == 0:
        return wrap(backends.current.full((), 0, np.int64, like=a))
    _check_not_empty(input, (d,), name, full=False)
    return wrap(fn(a, d, keepdim))


def argmax(input, dim=None, keepdim=False):
    return _arg_extreme(input, dim, keepdim, "argmax")


def argmin(input, dim=None, keepdim=False):
    return _arg_extreme(input, dim, keepdim, "argmin")


def _variance_op(cls, name, input, dim, unbiased, keepdim, correction):
    """Shared front of var/std/var_mean/std_mean: torch's overloads and dtype check."""
    require_tensors(name, ("input", input))
    if isinstance(dim, bool):  # var(True): torch's var(unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either unbiased or correction, not both "
                        "(unbiased=True is correction=1, unbiased=False is correction=0)")
    if correction is None:
        correction = 0 if unbiased is False else 1  # unbiased (n - 1) by default
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"std and var only support floating point and complex dtypes; "
                           f"got {input._dtype}: convert first, e.g. x.float().{name}()")
    dims = _dims(input, dim)
    n = math.prod([input.shape[d] for d in dims]) if dims else 1
    if n - correction <= 0:
        warnings.warn(f"{name.split('_')[0]}(): degrees of freedom is <= 0. Correction should be "
                      "strictly less than the reduction factor (input numel divided by output "
                      f"numel): {n} element(s) per result, correction={correction}, so the "
                      "result is inf or nan.", UserWarning, stacklevel=3)
    return cls.apply(input, dims, correction, keepdim)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _variance_op(Var, "var", input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _variance_op(Std, "std", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _variance_op(VarMean, "var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _variance_op(StdMean, "std_mean", input, dim, unbiased, keepdim, correction)


def logsumexp(input, dim, keepdim=False):
    require_tensors("logsumexp", ("input", input))
    return Logsumexp.apply(input, _dims(input, dim), keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    require_tensors("norm", ("input", input))
    if dtype is not None:
        dtype = _dtypes.to_dtype(dtype)
        if not dtype.is_floating_point:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point, but got "
                               f"{dtype}")
        if _dtypes.promote_types(input.dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({input.dtype}) "
                               f"should be convertible without narrowing to the specified dtype "
                               f"({dtype})")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input._dtype}; convert first, e.g. x.float().norm()")
    if p is None or p == "fro":
        if p == "fro" and isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(map(str, dim))}")
        p = 2
    elif isinstance(p, str) or not isinstance(p, (int, float, np.number)):
        if p == "nuc":
            raise NotImplementedError("norm(p='nuc') (the nuclear norm, a sum of singular "
                                      "values) is not supported by learntorch")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported; use a number, 'fro', "
                           "inf or -inf")
    if dtype is not None:
        input = input.to(dtype)
    dims = _dims(input, dim)
    if abs(p) == float("inf") and input.numel() == 0 and (
            dim is None or builtins.any(input.shape[d] == 0 for d in dims)):
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor "
                           "because the operation does not have an identity")
    return Norm.apply(input, float(p), dims, keepdim)


def _logical(name, input, dim, keepdim):
    require_tensors(name, ("input", input))
    b = backends.current
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        out = b.ne(input._data, 0)  # torch's all/any treat dim=() as "reduce nothing"
    else:
        out = getattr(b, name)(input._data, _dims(input, dim), keepdim)
    # torch keeps uint8 for uint8 input (the pre-bool convention) and returns bool otherwise
    return wrap(b.cast(out, np.uint8) if input._data.dtype == np.uint8 else out)


def all(input, dim=None, keepdim=False):
    return _logical("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    return _logical("any", input, dim, keepdim)


def count_nonzero(input, dim=None):
    require_tensors("count_nonzero", ("input", input))
    return wrap(backends.current.count_nonzero(input._data, _dims(input, dim)))


class Nansum(Function):
    """sum with nan counted as 0; the gradient is grad * (x is not nan) -- a product, as in
    torch, so an infinite incoming gradient still turns nan at a nan element."""

    node_name = "NansumBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.save_for_backward(x)
        ctx.dims, ctx.keepdim = dims, keepdim
        b = backends.current
        a = x._data if dtype is None else b.cast(x._data, dtype.np)
        if not x._dtype.is_floating_point and dtype is None:
            a = b.cast(a, np.int64)
        elif a.dtype.kind == "f":
            a = b.where(b.isnan(a), a.dtype.type(0), a)
        return wrap(as_array(b.sum(a, dims, keepdim), dtype=a.dtype))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return (ExpandBack.apply(grad, x.shape, ctx.dims, ctx.keepdim) * ~x.isnan(), None, None,
                None)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum, counting nan as 0."""
    require_tensors("nansum", ("input", input))
    if dtype is not None:
        dtype = _dtypes.to_dtype(dtype)
    return Nansum.apply(input, _dims(input, dim), keepdim, dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """mean of the elements that are not nan (nan where all are)."""
    require_tensors("nanmean", ("input", input))
    if not input._dtype.is_floating_point:
        return mean(input, dim, keepdim, dtype=dtype)  # (its error for integers)
    keep = ~input.isnan()
    return nansum(input, dim, keepdim, dtype=dtype) / keep.sum(dim, keepdim)


def aminmax(input, *, dim=None, keepdim=False):
    """(amin, amax) in one call: a named tuple (min, max)."""
    return aminmax_result(amin(input, () if dim is None else dim, keepdim),
                          amax(input, () if dim is None else dim, keepdim))


aminmax_result = collections.namedtuple("aminmax", ["min", "max"])
