"""Array backward of arithmetic, activations, softmax and linear: every training step's ops."""
import numpy as np

from ... import backends
from ..._tensor import Tensor
from ...backends.opmath import SUM_DTYPES
from ...nn._functional import linear as _linear
from ...ops import activations, arithmetic, shape, softmax, unary
from ..arithmetic import NOTHING_SAVED, float_constant
from .registry import register as _register


@_register(arithmetic.Add)
def add_backward(ctx, grad):
    """Replaces ``Add.backward``: grad, alpha * grad."""
    alpha = ctx.constants
    return (grad, grad if alpha == 1 else grad * alpha, None)[:len(ctx.needs_input_grad)]


@_register(arithmetic.Sub, arithmetic.Rsub)
def sub_backward(ctx, grad):
    """Replaces ``Sub.backward``: grad, -alpha * grad."""
    alpha = ctx.constants
    return (grad, -grad if alpha == 1 else grad * -alpha, None)[:len(ctx.needs_input_grad)]


def _load(ctx):
    """``arithmetic._load``: the saved tensors (version-checked) or numbers, in place of each
    other.  Two saved slots and no saved output (what ``_save`` keeps) are read here without
    the general ``saved_tensors``; anything else, a freed graph or a tensor changed in place
    since included, goes to the reference (which raises its error)."""
    saved = ctx._saved
    if saved is NOTHING_SAVED:  # x * 2.0: no tensor to check
        return ctx.constants
    if saved.__class__ is tuple and len(saved) == 2 and ctx._saved_outputs is None:
        ta, tb = saved
        va, vb = ctx._saved_versions
        if (ta is None or ta._version_counter[0] == va) and (
                tb is None or tb._version_counter[0] == vb):
            ca, cb = ctx.constants
            return (ca if ta is None else ta), (cb if tb is None else tb)
    return arithmetic._load(ctx)


def _times(g, x):
    """``g * x`` as ``Mul.forward`` computes it for a gradient array and an operand."""
    if x.__class__ is float:
        if g.dtype.kind == "f":
            x = float_constant(x, g)
    elif isinstance(x, Tensor):
        x = x._data
        if x.dtype is not g.dtype and x.dtype != g.dtype:
            x = x.astype(g.dtype)
    return backends.current.mul(g, x)


@_register(arithmetic.Mul)
def mul_backward(ctx, grad):
    """Replaces ``Mul.backward``: grad * b, grad * a."""
    saved = ctx._saved
    if saved is NOTHING_SAVED:  # x * 2.0: the number is a constant, nothing to check
        a, b = ctx.constants
    elif saved.__class__ is tuple and grad.__class__ is np.ndarray and ctx._saved_outputs is None:
        # both operands saved (both need a gradient: y * w), unchanged since, arrays of the
        # gradient's dtype: what _load and _times do, without their calls
        ta, tb = saved
        if ta is not None and tb is not None:
            va, vb = ctx._saved_versions
            x, y = ta._data, tb._data
            if ta._version_counter[0] == va and tb._version_counter[0] == vb and \
                    x.__class__ is np.ndarray and y.__class__ is np.ndarray and \
                    x.dtype is grad.dtype and y.dtype is grad.dtype:
                mul = backends.current.mul
                return mul(grad, y), mul(grad, x)
        a, b = _load(ctx)
    else:
        a, b = _load(ctx)
    needs = ctx.needs_input_grad
    return (_times(grad, b) if needs[0] else None,
            _times(grad, a) if needs[1] else None)


@_register(shape.ToDtype)
def to_dtype_backward(ctx, grad):
    """Replaces ``ToDtype.backward`` (``grad.to(input dtype)``): the gradient cast back, one
    per cast that autocast inserts in front of every 16-bit op."""
    if grad.dtype == ctx.input_dtype.np:
        return grad, None
    return backends.current.cast(grad, ctx.input_dtype.np), None


@_register(unary.Neg)
def neg_backward(ctx, grad):
    """Replaces ``Neg.backward``: -grad."""
    return np.negative(grad)


@_register(unary.Exp)
def exp_backward(ctx, grad):
    """Replaces ``Exp.backward``: grad * y."""
    y, = ctx.saved_tensors
    return backends.current.mul(grad, y._data)


def _one_pass_derivative(kernel):
    """The array backward of an activation whose derivative is one backend kernel of what
    forward saved (its output or its input) and the gradient: what its derivative op's
    forward calls (``ops/activation_backward.py``)."""
    def backward(ctx, grad):
        saved, = ctx.saved_tensors
        return getattr(backends.current, kernel)(saved._data, grad)
    backward.__name__ = kernel
    return backward


# Replace Tanh/Sigmoid/Relu/Silu.backward (TanhBackward ... SiluBackward.forward)
for _cls, _kernel in ((activations.Tanh, "tanh_backward"), (activations.Sigmoid, "sigmoid_backward"),
                      (activations.Relu, "relu_backward"), (activations.Silu, "silu_backward")):
    _register(_cls)(_one_pass_derivative(_kernel))


@_register(softmax.Softmax)
def softmax_backward(ctx, grad):
    """Replaces ``Softmax.backward`` (``SoftmaxBackward.forward``)."""
    y, = ctx.saved_tensors
    return backends.current.softmax_backward(y._data, grad, ctx.dim), None


@_register(softmax.LogSoftmax)
def log_softmax_backward(ctx, grad):
    """Replaces ``LogSoftmax.backward`` (``LogSoftmaxBackward.forward``)."""
    y, = ctx.saved_tensors
    return backends.current.log_softmax_backward(y._data, grad, ctx.dim), None


@_register(_linear.Linear)
def linear_backward(ctx, grad):
    """Replaces ``Linear.backward``: grad @ W, grad^T @ x (rows merged), and the bias's
    gradient summed over the rows in one numpy call, as the engine's sum would (a bfloat16
    gradient adds in float32 and is rounded once, as ``backend.sum``'s callers do: numpy's
    own bfloat16 sum would round every partial sum)."""
    x, weight = ctx.saved_tensors  # (each saved only when the other's gradient is needed)
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    mm = backends.current.matmul
    g2 = _linear._matrix(grad)
    gx = gw = gb = None
    if need_x:
        gx = mm(g2, weight._data).reshape(ctx.x_shape)
    if need_w:
        gw = mm(g2.T, _linear._matrix(x._data))
    if need_b:
        gb = grad
        if ctx.bias_shape == (ctx.weight_shape[0],) and grad.ndim == 2 \
                and grad.__class__ is np.ndarray:
            wide = SUM_DTYPES.get(grad.dtype.kind)  # what the engine's sum over dim 0 computes
            gb = grad.sum(axis=0) if wide is None else \
                grad.sum(axis=0, dtype=wide).astype(grad.dtype)
    return gx, gw, gb
