"""Attach the operations as ``Tensor`` methods and Python operators.

Every method is the function of the same name in ``learntorch.ops`` (so
``x.exp()`` is ``learntorch.exp(x)``), plus the in-place ``op_`` variants,
which all go through one rule (``ops._inplace.apply_inplace``).
"""
import numpy as np

from . import _dtypes, _quantized_tensor, _tensor, factories
from ._device import to_device
from ._tensor import Tensor
from .ops import rotation as _rotation
from .ops import grids
from .ops import (activations, arithmetic, assignment, comparison, comparison_inplace, counting,
                  cumulative, diagonals, indexing, joining, linalg, order_statistics,
                  pointwise_binary, pointwise_ternary, reductions, repeating, sets, shape,
                  softmax, sorting, special, unary)
from .ops._inplace import apply_inplace, copy_, fill_, zero_


# ---------------------------------------------------------------- the legacy constructor
def legacy_init(self, *args, **kwargs):
    """``torch.Tensor(data)`` / ``torch.Tensor(2, 3)``: the legacy constructor, float32 for
    lists and sizes (``Tensor.__init__``; ``_tensor.py`` says why it lives here)."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        made = args[0]  # torch.Tensor(t) aliases t: same memory, same dtype
    elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        made = factories.tensor(args[0], dtype=_dtypes.get_default_dtype())
    else:
        made = factories.empty(*args, **kwargs)
    _tensor._init_from_array(self, made._data)
    # calling __init__ again on a tensor re-initialises it: drop its old rare attributes
    # (only here: reading __dict__ allocates it, which every new tensor would pay)
    for name in ("_grad", "_output_nr", "_base", "_accumulate_node", "_retains_grad"):
        self.__dict__.pop(name, None)


Tensor.__init__ = legacy_init


# ---------------------------------------------------------------- plain methods
_METHODS = {
    arithmetic: "add sub subtract mul multiply div divide true_divide floor_divide remainder fmod "
                "pow",
    unary: "neg negative exp log log1p expm1 sqrt rsqrt sin cos abs absolute sign floor ceil "
           "trunc round square log2 log10 reciprocal tan asin acos atan sinh cosh asinh acosh "
           "atanh arcsin arccos arctan arcsinh arccosh arctanh lgamma digamma polygamma logit "
           "nan_to_num fix",
    pointwise_binary: "atan2 arctan2 hypot xlogy",
    activations: "tanh sigmoid relu clamp clip",
    pointwise_ternary: "addcmul addcdiv lerp",
    comparison: "eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and "
                "logical_or logical_xor logical_not bitwise_not isnan isinf isfinite isclose "
                "allclose equal maximum minimum signbit isposinf isneginf isreal",
    comparison_inplace: "eq_ ne_ lt_ le_ gt_ ge_ greater_ greater_equal_ less_ less_equal_ "
                        "not_equal_ logical_and_ logical_or_ logical_xor_ logical_not_",
    reductions: "sum sum_to_size mean prod amax amin max min argmax argmin var std logsumexp "
                "norm all any count_nonzero nansum nanmean aminmax",
    cumulative: "cumsum cumprod cummax cummin",
    order_statistics: "median nanmedian kthvalue mode quantile nanquantile",
    counting: "bincount histc",
    sets: "unique unique_consecutive",
    diagonals: "diagonal diag diag_embed tril triu trace",
    repeating: "roll tile repeat_interleave",
    softmax: "softmax log_softmax",
    sorting: "sort argsort topk",
    special: "erf",
    linalg: "matmul mm bmm dot outer cross mv addmm baddbmm addmv addbmm",
    shape: "reshape view permute transpose swapaxes swapdims t squeeze unsqueeze flatten "
           "unflatten expand expand_as broadcast_to narrow contiguous clone flip repeat movedim "
           "moveaxis ravel fliplr flipud",
    joining: "split chunk unbind",
    grids: "take",
    indexing: "select gather scatter scatter_add scatter_reduce index_select index_add "
              "index_put masked_fill masked_select nonzero take_along_dim",
}
for _module, _names in _METHODS.items():
    for _name in _names.split():
        setattr(Tensor, _name, getattr(_module, _name))


def _where(self, condition, other):
    return comparison.where(condition, self, other)


Tensor.where = _where
for _name, _method in _quantized_tensor.PLAIN_TENSOR_METHODS.items():
    setattr(Tensor, _name, _method)  # is_quantized, dequantize, int_repr, q_scale, ...
Tensor.rot90 = lambda self, k=1, dims=(0, 1): _rotation.rot90(self, k, dims)
Tensor.view_as = lambda self, other: shape.view(self, other.shape)
Tensor.reshape_as = lambda self, other: shape.reshape(self, other.shape)
Tensor.T = property(lambda self: shape.permute(self, tuple(reversed(range(self.ndim)))))
Tensor.mT = property(lambda self: _mT(self))
Tensor.H = Tensor.T


def _mT(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return shape.transpose(self, -2, -1)


# ---------------------------------------------------------------- operators
def _reflected(fn):
    return lambda self, other: fn(arithmetic.as_operand(other), self)


Tensor.__add__ = Tensor.__radd__ = arithmetic.add     # (+ and * commute)
Tensor.__sub__ = arithmetic.sub
Tensor.__rsub__ = lambda self, other: _rsub(arithmetic.as_operand(other), self)


def _rsub(other, self):
    return arithmetic.subtraction(other).apply(other, self)


Tensor.__mul__ = Tensor.__rmul__ = arithmetic.mul
Tensor.__truediv__ = arithmetic.div
Tensor.__rtruediv__ = lambda self, other: _rtruediv(self, arithmetic.as_operand(other))


def _rtruediv(self, other):
    """``number / x`` is ``x.reciprocal() * number`` in torch (its nodes: MulBackward0 of
    ReciprocalBackward0), which rounds twice: the same values come out here."""
    if isinstance(other, Tensor):
        return arithmetic.Div.apply(other, self)
    return arithmetic.mul(unary.reciprocal(self), other)
Tensor.__floordiv__ = arithmetic.floor_divide
Tensor.__rfloordiv__ = _reflected(arithmetic.FloorDivide.apply)
Tensor.__mod__ = arithmetic.remainder
Tensor.__rmod__ = _reflected(arithmetic.Remainder.apply)
Tensor.__pow__ = arithmetic.pow
Tensor.__rpow__ = _reflected(arithmetic.Pow.apply)
Tensor.__matmul__ = linalg.matmul
Tensor.__rmatmul__ = lambda self, other: linalg.matmul(arithmetic.as_operand(other), self)
Tensor.__neg__ = unary.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = unary.abs
def _comparison_operator(fn):
    """``t == None`` or ``t == "a"`` is simply False in torch (True for !=), not an error."""
    def operator(self, other):
        if isinstance(other, (Tensor, bool, int, float, np.generic, np.ndarray)):
            return fn(self, other)
        return NotImplemented  # Python then falls back to identity: False for ==, True for !=
    operator.__name__ = fn.__name__
    return operator


Tensor.__eq__ = _comparison_operator(comparison.eq)
Tensor.__ne__ = _comparison_operator(comparison.ne)
Tensor.__lt__ = comparison.lt
Tensor.__le__ = comparison.le
Tensor.__gt__ = comparison.gt
Tensor.__ge__ = comparison.ge
Tensor.__and__ = lambda self, other: _bitwise_or_logical(self, other, "and")
Tensor.__or__ = lambda self, other: _bitwise_or_logical(self, other, "or")
Tensor.__xor__ = lambda self, other: _bitwise_or_logical(self, other, "xor")
Tensor.__rand__, Tensor.__ror__, Tensor.__rxor__ = Tensor.__and__, Tensor.__or__, Tensor.__xor__
Tensor.__invert__ = lambda self: _invert(self)


def _invert(self):
    """``~x``: bitwise_not, except that torch's operator refuses a float with a TypeError."""
    if self._dtype.is_floating_point:
        raise TypeError(f"~ (operator.invert) is only implemented on integer and Boolean-type "
                        f"tensors, got {self._dtype}; for a float mask use (x == 0) or "
                        "logical_not")
    return comparison.bitwise_not(self)
Tensor.__getitem__ = indexing.getitem
Tensor.__setitem__ = assignment.setitem


def _bitwise_or_logical(a, b, op):
    return getattr(comparison, "bitwise_" + op)(a, b)


# ---------------------------------------------------------------- in-place variants
def _inplace_of(fn, name):
    def method(self, *args, **kwargs):
        return apply_inplace(self, lambda src: fn(src, *args, **kwargs), others=args)
    method.__name__ = name
    method.__doc__ = f"In-place version of :meth:`{name[:-1]}`."
    return method


for _name in ("add sub mul div pow remainder fmod floor_divide clamp clip neg exp log log1p sqrt "
              "rsqrt sin cos abs sign floor ceil trunc round tanh sigmoid relu "
              "index_add scatter scatter_add scatter_reduce index_put square reciprocal expm1 "
              "log2 log10 erf subtract multiply divide true_divide bitwise_not addcmul addcdiv "
              "lerp tan asin acos atan sinh cosh asinh acosh atanh arcsin arccos arctan arcsinh "
              "arccosh arctanh lgamma digamma logit nan_to_num atan2 arctan2 hypot xlogy fix "
              "tril triu cumsum cumprod negative absolute").split():
    setattr(Tensor, _name + "_", _inplace_of(getattr(Tensor, _name), _name + "_"))

def masked_fill_(self, mask, value):
    """In-place version of :meth:`masked_fill`.  On an expand()ed view torch warns (it is
    deprecated) and writes a shared element where any of its aliases is masked: so here."""
    shared = [d for d, (n, s) in enumerate(zip(self.shape, self.stride())) if s == 0 and n > 1]
    if not shared or not isinstance(mask, Tensor) or mask.shape != self.shape and len(
            mask.shape) > self.ndim:
        return apply_inplace(self, lambda src: src.masked_fill(mask, value), others=(mask,))
    import warnings
    warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the "
                  "tensor before performing this operation.", UserWarning, stacklevel=2)
    for d in shared:  # the aliases of one element take one decision: any of them masked
        mask = mask.expand(self.shape).any(d, keepdim=True)
    mask = mask.expand(self.shape)
    return apply_inplace(self, lambda src: src.masked_fill(mask, value), others=(mask,),
                         overlap_ok=True)


Tensor.masked_fill_ = masked_fill_

for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    setattr(Tensor, _name, getattr(comparison, _name))
    setattr(Tensor, _name + "_", _inplace_of(getattr(comparison, _name), _name + "_"))


def clamp_min(self, min):
    return activations.clamp(self, min=min)


def clamp_max(self, max):
    return activations.clamp(self, max=max)


Tensor.clamp_min, Tensor.clamp_max = clamp_min, clamp_max
Tensor.clamp_min_ = _inplace_of(clamp_min, "clamp_min_")
Tensor.clamp_max_ = _inplace_of(clamp_max, "clamp_max_")

Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__imod__ = Tensor.remainder_
Tensor.__iand__ = Tensor.bitwise_and_
Tensor.__ior__ = Tensor.bitwise_or_
Tensor.__ixor__ = Tensor.bitwise_xor_


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    from . import random
    return _fill_random(self, random._generator(generator).uniform(a, b, self.shape))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    from . import random
    return _fill_random(self, random._generator(generator).normal(mean, std, self.shape))


def bernoulli_(self, p=0.5, *, generator=None):
    from . import random
    return _fill_random(self, random._generator(generator).random(self.shape) < p)


def exponential_(self, lambd=1.0, *, generator=None):
    from . import random
    return _fill_random(self, random._generator(generator).exponential(1.0 / lambd, self.shape))


def random_(self, from_=0, to=None, *, generator=None):
    from . import random
    hi = to if to is not None else 2 ** 24
    return _fill_random(self, random._generator(generator).integers(from_, hi, self.shape))


def _fill_random(self, values):
    from .ops._inplace import check_inplace_allowed
    check_inplace_allowed(self)
    self._data[...] = values
    self._version_counter[0] += 1
    return self


for _fn in (zero_, fill_, copy_, uniform_, normal_, bernoulli_, exponential_, random_):
    setattr(Tensor, _fn.__name__, _fn)


# ---------------------------------------------------------------- conversions
def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, _dtypes.dtype) or a in (float, int, bool):
            dtype = a
        elif isinstance(a, bool):
            copy = a
        elif a is not None:
            device = a
    return (_dtypes.to_dtype(dtype) if dtype is not None else None,
            to_device(device) if device is not None else None, copy)


def to(self, *args, **kwargs):
    """Convert dtype and/or device: ``x.to(torch.float64)``, ``x.to('cpu')``, ``x.to(other)``."""
    dtype, device, copy = _parse_to(args, kwargs)
    out = self
    if device is not None and device != self.device:
        from . import cuda
        out = cuda._move(out, device)
    if dtype is not None and dtype is not out.dtype:
        out = shape.to_dtype(out, dtype)
    if copy and out is self:
        out = shape.clone(self)
    return out


Tensor.to = to
Tensor.float = lambda self: to(self, _dtypes.float32)
Tensor.double = lambda self: to(self, _dtypes.float64)
Tensor.half = lambda self: to(self, _dtypes.float16)
Tensor.bfloat16 = lambda self: to(self, _dtypes.bfloat16)
Tensor.long = lambda self: to(self, _dtypes.int64)
Tensor.int = lambda self: to(self, _dtypes.int32)
Tensor.short = lambda self: to(self, _dtypes.int16)
Tensor.bool = lambda self: to(self, _dtypes.bool_)
Tensor.byte = lambda self: to(self, _dtypes.uint8)
Tensor.cpu = lambda self: to(self, "cpu")
Tensor.cuda = lambda self, device=None: to(self, "cuda" if device is None else device)
Tensor.type_as = lambda self, other: to(self, other.dtype)


# ---------------------------------------------------------------- new_* factories
# A new tensor with this tensor's dtype and device unless told otherwise.
def _new(factory_name):
    def new(self, *size, dtype=None, device=None, requires_grad=False):
        # torch accepts both x.new_zeros(2, 3) and x.new_zeros((2, 3))
        from . import factories
        if len(size) == 1 and not isinstance(size[0], (int, np.integer)):
            size = tuple(size[0])
        return getattr(factories, factory_name)(
            size, dtype=dtype or self.dtype, device=device if device is not None else self.device,
            requires_grad=requires_grad)
    new.__name__ = "new_" + factory_name
    return new


Tensor.new_zeros = _new("zeros")
Tensor.new_ones = _new("ones")
Tensor.new_empty = _new("empty")


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from . import factories
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    return factories.full(size, fill_value, dtype=dtype or self.dtype,
                          device=device if device is not None else self.device,
                          requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    from . import factories
    return factories.tensor(data, dtype=dtype or self.dtype,
                            device=device if device is not None else self.device,
                            requires_grad=requires_grad)


Tensor.new_full = new_full
Tensor.new_tensor = new_tensor
