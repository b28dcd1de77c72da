"""``F.linear(input, weight, bias)``: y = x @ W^T + b as one recorded operation.

A Linear layer could be written as three ops (transpose, matmul, add), but
it is the op every MLP step runs most, so it is one ``Function`` with one
node in the graph.  With x of shape (..., in), W of shape (out, in) and b
broadcastable to (..., out), and g = dLoss/dy:

    dx = g @ W                       (..., in)
    dW = sum over the batch of g^T x = g2^T @ x2   (out, in), where g2 and x2
         are g and x with every leading dimension merged into one
    db = g                           (the engine sums it down to b's shape)

The leading "batch" dims can be any number (none, for a single vector); they
are merged into one before multiplying, so the backend only ever multiplies
two matrices (the simplest ``matmul`` contract, which a learner's own kernel
can serve).  The forward is the backend's ``linear`` (matmul, then the bias added
in place into its result); the backward is tensor ops.
"""
import math

from ... import backends
from ..._tensor import Tensor
from ..parameter import Parameter
from ...autograd.function import Function, autocast_inputs
from ...ops._helpers import check_same_device, wrap
from ...ops.broadcast import is_expandable_to


class Linear(Function):
    node_name = "LinearBackward0"  # torch's node for the fused aten::linear

    @staticmethod
    def forward(ctx, x, weight, bias):
        # dx needs the weight and dW the input: save only what the asked-for gradients read,
        # so that a later in-place change of the other is no error (torch's rule)
        needs = ctx.needs_input_grad
        ctx.save_for_backward(x if needs[1] else None, weight if needs[0] else None)
        ctx.x_shape, ctx.weight_shape = x._data.shape, weight._data.shape
        ctx.bias_shape = None if bias is None else bias._data.shape
        return wrap(backends.current.linear(x._data, weight._data,
                                            None if bias is None else bias._data))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        n_out, n_in = ctx.weight_shape
        rows = math.prod(ctx.x_shape[:-1])
        g2 = grad.reshape(rows, n_out)  # the leading dims merged: one matrix product each
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        gx = (g2 @ weight).reshape(ctx.x_shape) if need_x else None
        gw = g2.mT @ x.reshape(rows, n_in) if need_w else None
        # the bias was added to every row: the engine sums grad over the rows
        return gx, gw, (grad if need_b else None)


_PLAIN = (Parameter, Tensor)  # no subclass: a subclass may override what the checks read


def _matrix(a):
    """``a`` of shape (..., k) as a (rows, k) matrix: the leading dims merged (a view if it can)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def linear(input, weight, bias=None):
    """y = input @ weight.T + bias, for input (..., in), weight (out, in), bias (out,)."""
    # the common case first, in a few attribute reads (what the checks below would establish):
    # tensors of one floating dtype on one device, a matrix weight, a (out,) bias, sizes that fit
    # (a parameter, or a plain tensor: autocast's bfloat16 copy of one)
    if (input.__class__ is Tensor and weight.__class__ in _PLAIN
            and (bias is None or bias.__class__ in _PLAIN)):
        if input._dtype is not weight._dtype:  # (in an autocast region, cast them to one first)
            input, weight, bias = autocast_inputs(Linear, input, weight, bias)
        w = weight._data
        x = input._data
        if (w.ndim == 2 and x.ndim >= 1 and x.shape[-1] == w.shape[1]
                and input._dtype is weight._dtype and input._dtype.is_floating_point
                and input._device is weight._device
                and (bias is None or (bias._data.shape == (w.shape[0],)
                                      and bias._dtype is weight._dtype
                                      and bias._device is weight._device))):
            return Linear.apply(input, weight, bias)
    for position, (name, value) in enumerate((("input", input), ("weight", weight)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"linear(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}; wrap it with torch.tensor(...)")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"linear(): argument 'bias' (position 3) must be Tensor, not "
                        f"{type(bias).__name__}; pass a tensor of shape ({weight.shape[0]},) "
                        "or None")
    check_same_device(input, weight, bias)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.ndim}D (linear's weight must have shape (out_features, "
                           f"in_features), got {list(weight.shape)})")
    if weight.ndim == 1:
        if bias is not None:
            raise RuntimeError(f"mat2 must be a matrix, got 1-D tensor: linear with a bias needs "
                               f"a weight of shape (out_features, in_features), got "
                               f"{list(weight.shape)}")
        # a weight vector is one output feature whose dimension is dropped: x @ w
        return linear(input, weight.unsqueeze(0)).squeeze(-1)
    input, weight, bias = autocast_inputs(Linear, input, weight, bias)
    _check_dtypes(input, weight, bias)
    n_out, n_in = weight.shape
    if input.shape[-1] != n_in:
        rows = math.prod(input.shape[:-1])
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{n_in}x{n_out}): the input's last dimension ({input.shape[-1]}, input shape "
            f"{list(input.shape)}) must equal in_features ({n_in}, weight shape "
            f"{list(weight.shape)})")
    out_shape = tuple(input.shape[:-1]) + (n_out,)
    if bias is not None and not is_expandable_to(tuple(bias.shape), out_shape):
        raise RuntimeError(f"linear(): bias of shape {list(bias.shape)} cannot be broadcast to "
                           f"the output shape {list(out_shape)}; it should have shape ({n_out},)")
    return Linear.apply(input, weight, bias)


def _check_dtypes(input, weight, bias):
    # torch does not promote here: a float64 input into a float32 layer is an error
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {input.dtype} and {weight.dtype} "
            f"(input and weight of linear). Convert the input (x.to({weight.dtype})) or the "
            f"layer (model.to({input.dtype}))")
    if bias is not None and bias.dtype is not weight.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {bias.dtype} and {weight.dtype} "
            f"(bias and weight of linear). Convert the bias: bias.to({weight.dtype})")
