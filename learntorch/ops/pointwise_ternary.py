"""Three-operand pointwise ops, the building blocks of hand-written optimizers.

    addcmul(input, t1, t2, value=v)   input + v * t1 * t2     Adam: m.mul_(b1).add_(...)
    addcdiv(input, t1, t2, value=v)   input + v * t1 / t2     Adam: p.addcdiv_(m, denom, value=-lr)
    lerp(start, end, weight)          start + weight * (end - start)
                                      Adam's moving averages: m.lerp_(grad, 1 - beta1)

All three broadcast their operands together (the engine sums each gradient back
to its operand's shape) and each is one node in the graph, as in torch.  Their
derivatives are one line each::

    addcmul   d/d input = g   d/d t1 = g * v * t2          d/d t2 = g * v * t1
    addcdiv   d/d input = g   d/d t1 = g * v / t2          d/d t2 = -g * v * t1 / t2**2
    lerp      d/d start = g * (1 - w)   d/d end = g * w   d/d weight = g * (end - start)

The backward rules are written with tensor ops, so they can be differentiated again.
"""
import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import check_same_device, require_tensors, wrap
from .broadcast import _broadcast_tuple


def _broadcast_shape(name, *tensors):
    try:
        return _broadcast_tuple(*[tuple(t.shape) for t in tensors])
    except RuntimeError as e:
        raise RuntimeError(f"{name}: {e}") from None


def _in(out, dtype):
    """The backend's array in ``dtype`` (numpy may have widened a broadcast scalar)."""
    return out if out.dtype == dtype.np else out.astype(dtype.np)


def _typed_value(value, dtype):
    """``value`` as torch passes it to the kernel: converted to the result dtype
    (an integer result truncates a float value, as in torch: value=2.5 acts as 2)."""
    return dtype.np.type(value)


# ---------------------------------------------------------------- addcmul / addcdiv
class Addcmul(Function):
    node_name = "AddcmulBackward0"

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value, dtype):
        needs = ctx.needs_input_grad  # d/d t1 needs t2 and d/d t2 needs t1
        ctx.save_for_backward(tensor1 if needs[2] else None, tensor2 if needs[1] else None)
        ctx.value = value
        x, a, b = (t._data.astype(dtype.np, copy=False) for t in (input, tensor1, tensor2))
        be = backends.current  # input + (value * t1) * t2, in torch's order
        return wrap(_in(be.add(x, be.mul(be.mul(a, _typed_value(value, dtype)), b)), dtype))

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = ctx.saved_tensors
        needs, v = ctx.needs_input_grad, ctx.value
        return (grad if needs[0] else None,
                grad * tensor2 * v if needs[1] else None,
                grad * tensor1 * v if needs[2] else None, None, None)


class Addcdiv(Function):
    node_name = "AddcdivBackward0"

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value, dtype):
        ctx.save_for_backward(tensor1 if ctx.needs_input_grad[2] else None, tensor2)
        ctx.value = value
        x, a, b = (t._data.astype(dtype.np, copy=False) for t in (input, tensor1, tensor2))
        be = backends.current  # input + (value * t1) / t2, in torch's order
        return wrap(_in(be.add(x, be.div(be.mul(a, _typed_value(value, dtype)), b)), dtype))

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = ctx.saved_tensors
        needs, v = ctx.needs_input_grad, ctx.value
        return (grad if needs[0] else None,
                grad * v / tensor2 if needs[1] else None,
                -grad * v * tensor1 / (tensor2 * tensor2) if needs[2] else None, None, None)


def _check_addc(name, input, tensor1, tensor2, value):
    require_tensors(name, ("input", input), ("tensor1", tensor1), ("tensor2", tensor2))
    check_same_device(input, tensor1, tensor2)
    _broadcast_shape(name, input, tensor1, tensor2)
    if not isinstance(value, (bool, int, float, np.number)):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type(value).__name__}")
    # value does not take part in the promotion: with integer tensors torch converts a
    # float value to the integer type (value=2.5 acts as 2), and so do we (_typed_value)
    return _dtypes.result_type(input, tensor1, tensor2)


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, broadcast, promoted over all three tensors."""
    dtype = _check_addc("addcmul", input, tensor1, tensor2, value)
    if dtype is _dtypes.bool_:
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool': convert the "
                                  "tensors first, e.g. t.long() or t.float()")
    return Addcmul.apply(input, tensor1, tensor2, value, dtype)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``, broadcast, promoted over all three tensors."""
    dtype = _check_addc("addcdiv", input, tensor1, tensor2, value)
    if not (tensor1.is_floating_point() or tensor2.is_floating_point()):
        raise RuntimeError(
            f"Integer division with addcdiv is no longer supported, and in a future release "
            f"addcdiv will perform a true division of tensor1 and tensor2 (here "
            f"{tensor1.dtype} and {tensor2.dtype}). The historic addcdiv behavior can be "
            "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
            "for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. "
            "The future addcdiv behavior is just the latter implementation: (input + value * "
            "tensor1 / tensor2), for all dtypes.")
    return Addcdiv.apply(input, tensor1, tensor2, value, dtype)


# ---------------------------------------------------------------- lerp
class Lerp(Function):
    """lerp with a number as weight."""
    node_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, start, end, weight):
        ctx.weight = weight
        dtype = start._data.dtype
        return wrap(backends.current.lerp(start._data, end._data, dtype.type(weight)))

    @staticmethod
    def backward(ctx, grad):
        w = ctx.weight
        needs = ctx.needs_input_grad
        return (grad * (1 - w) if needs[0] else None, grad * w if needs[1] else None, None)


class LerpTensorWeight(Function):
    """lerp with a tensor as weight: the weight gets a gradient too."""
    node_name = "LerpBackward1"

    @staticmethod
    def forward(ctx, start, end, weight):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(start if needs[2] else None, end if needs[2] else None,
                              weight if needs[0] or needs[1] else None)
        w = weight._data.astype(start._data.dtype, copy=False)
        return wrap(backends.current.lerp(start._data, end._data, w))

    @staticmethod
    def backward(ctx, grad):
        start, end, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if weight is not None and weight.dtype is not grad.dtype:
            weight = weight.to(grad.dtype)  # a 0-d weight of another dtype
        return (grad * (1 - weight) if needs[0] else None,
                grad * weight if needs[1] else None,
                grad * (end - start) if needs[2] else None)


def lerp(input, end, weight):
    """``input + weight * (end - input)``: a step of size ``weight`` from input towards end.

    ``input`` and ``end`` must have the same dtype (lerp does not promote), and so must
    a tensor weight with dims (a 0-d weight is converted).
    """
    require_tensors("lerp", ("input", input), ("end", end))
    if isinstance(weight, Tensor):
        tensors = (input, end, weight)
    elif isinstance(weight, (bool, int, float, np.number)):
        tensors = (input, end)
    else:
        raise TypeError(f"lerp(): argument 'weight' must be Tensor or Number, not "
                        f"{type(weight).__name__}")
    check_same_device(*tensors)
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {input.dtype} for `end` but got dtype {end.dtype} "
                           f"(lerp does not promote: convert one, e.g. end.to({input.dtype}))")
    if isinstance(weight, Tensor) and weight.ndim and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {input.dtype} for `weight` but got dtype "
                           f"{weight.dtype} (convert it, e.g. weight.to({input.dtype}))")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"lerp_kernel\" not implemented for '{input.dtype}': lerp "
                                  "interpolates floating-point tensors; convert first, e.g. "
                                  "x.float()")
    _broadcast_shape("lerp", *tensors)
    if isinstance(weight, Tensor):
        return LerpTensorWeight.apply(input, end, weight)
    return Lerp.apply(input, end, float(weight))
