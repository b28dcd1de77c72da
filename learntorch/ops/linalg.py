"""Matrix products: matmul / @, mm, bmm, dot, outer (einsum: ops/einsum.py).

For C = A @ B the two backward rules are

    dA = dC @ B^T        dB = A^T @ dC

and with batch dimensions that were broadcast, the engine sums dA and dB
back over them.  A 1-D operand acts as a matrix with one row (on the left)
or one column (on the right), and that extra dimension is removed again
from the result and from its gradient.  The forward calls the backend's
``matmul`` (BLAS through numpy), the fastest matrix product on a CPU.
"""
import numpy as np

from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import as_array, check_same_device, wrap


class Matmul(Function):
    """A @ B for any ranks >= 1; torch names the node after the case (the subclasses)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        out = backends.current.matmul(a._data, b._data)
        return wrap(out if out.__class__ is np.ndarray else as_array(out))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        # make vectors matrices (a row on the left, a column on the right), grad to match
        a_vec, b_vec = a.ndim == 1, b.ndim == 1
        a2 = a.unsqueeze(0) if a_vec else a
        b2 = b.unsqueeze(-1) if b_vec else b
        g = grad.unsqueeze(-1) if b_vec else grad
        g = g.unsqueeze(-2) if a_vec else g
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g @ b2.mT  # dA = dC @ B^T
            ga = ga.squeeze(-2) if a_vec else ga
        if ctx.needs_input_grad[1]:
            gb = a2.mT @ g  # dB = A^T @ dC
            gb = gb.squeeze(-1) if b_vec else gb
        return ga, gb


class Mm(Matmul):
    node_name = "MmBackward0"  # matrix @ matrix


class Mv(Matmul):
    node_name = "MvBackward0"  # matrix @ vector


class Bmm(Matmul):
    node_name = "BmmBackward0"  # batches of matrices (torch's N-D matmul shows a view node)


class Dot(Function):
    """The dot product of two vectors: d(a . b)/da = b, d(a . b)/db = a."""
    node_name = "DotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return wrap(as_array(np.dot(a._data, b._data)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


# ---------------------------------------------------------------- checks (torch's messages)
def require_tensors(name, *args):
    """Torch's TypeError for a number or list where a tensor is needed.

    ``args`` are (argument name, value) pairs.  Shared by the reduction and
    softmax files too (a candidate for ``_helpers``).
    """
    for position, (arg_name, value) in enumerate(args, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg_name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}; wrap it with "
                            "torch.tensor(...)")


def _sizes(shape):
    return "x".join(map(str, shape))


def _check_operands(a, b, name):
    check_same_device(a, b)
    if a._dtype is not b._dtype:
        if name == "dot":
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{a._dtype} and {b._dtype}. Convert one, e.g. b.to(a.dtype)")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a._dtype} != "
                           f"{b._dtype} ({name} does not promote types; convert one, e.g. "
                           "b.to(a.dtype))")
    if a._dtype.name == "bool":
        raise NotImplementedError(f"{name} is not implemented for bool tensors ('Bool' in torch);"
                                  " convert first, e.g. a.float() or a.long()")


def _mat_error(sa, sb, what):
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({_sizes(sa)} and {_sizes(sb)}): {what}")


def _shapes_text(a, b):
    return f"shapes {list(a.shape)} and {list(b.shape)}"


def matmul(input, other):
    # the common case first, checked in a few attribute reads: two matrices of one floating
    # dtype on one device whose sizes fit (all that the checks below would establish)
    if (isinstance(input, Tensor) and isinstance(other, Tensor)
            and input._data.ndim == 2 and other._data.ndim == 2
            and input._dtype is other._dtype and input._device is other._device
            and input._dtype.is_floating_point
            and input._data.shape[1] == other._data.shape[0]):
        return Mm.apply(input, other)
    require_tensors("matmul", ("input", input), ("other", other))
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D; use * to multiply by a number")
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    _check_operands(a, b, "matmul")
    if b.ndim == 1:
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(
                f"size mismatch, got input ({a.shape[-2]}), mat ({_sizes(a.shape[-2:])}), vec "
                f"({b.shape[0]}): the matrix has {a.shape[-1]} columns but the vector {b.shape[0]}"
                f" elements ({_shapes_text(a, b)})")
        return (Mv if a.ndim == 2 else Bmm).apply(a, b)
    rows_a = a.shape[-2:] if a.ndim > 1 else (1, a.shape[0])
    if rows_a[-1] != b.shape[-2]:
        raise _mat_error(rows_a, b.shape[-2:], f"the last dim of the first ({rows_a[-1]}) must "
                         f"equal the second-to-last dim of the second ({b.shape[-2]}); "
                         f"{_shapes_text(a, b)}")
    if a.ndim == 1 and b.ndim == 2:  # vector @ matrix: as a one-row matrix, like torch
        return Mm.apply(a.unsqueeze(0), b).squeeze(0)
    if a.ndim == 2 and b.ndim == 2:
        return Mm.apply(a, b)
    from .broadcast import _broadcast_tuple as broadcast_shapes
    try:
        broadcast_shapes(a.shape[:-2] if a.ndim > 1 else (), b.shape[:-2])
    except RuntimeError:
        raise RuntimeError(
            f"matmul: the batch dimensions {list(a.shape[:-2])} and {list(b.shape[:-2])} cannot "
            f"be broadcast together ({_shapes_text(a, b)}): each pair, aligned from the right, must be equal "
            "or 1") from None
    return Bmm.apply(a, b)


def mm(input, mat2):
    require_tensors("mm", ("input", input), ("mat2", mat2))
    for t, name in ((input, "self"), (mat2, "mat2")):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix: mm takes 2-D tensors, got shapes "
                               f"{list(input.shape)} and {list(mat2.shape)}; use matmul (@) "
                               "for vectors and batches")
    _check_operands(input, mat2, "mm")
    if input.shape[1] != mat2.shape[0]:
        raise _mat_error(input.shape, mat2.shape, f"the columns of the first ({input.shape[1]}) "
                         f"must equal the rows of the second ({mat2.shape[0]})")
    return Mm.apply(input, mat2)


def bmm(input, mat2):
    require_tensors("bmm", ("input", input), ("mat2", mat2))
    for t, name in ((input, "batch1"), (mat2, "batch2")):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor: bmm takes (batch, n, m) and "
                               f"(batch, m, p), got shapes {list(input.shape)} and "
                               f"{list(mat2.shape)}; use matmul (@) to broadcast batches")
    _check_operands(input, mat2, "bmm")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]"
            f". (shapes {list(input.shape)} and {list(mat2.shape)})")
    return Bmm.apply(input, mat2)


def dot(input, other):
    require_tensors("dot", ("input", input), ("other", other))
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
                           f" (shapes {list(input.shape)} and {list(other.shape)})")
    _check_operands(input, other, "dot")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got "
                           f"{input.shape[0]} and {other.shape[0]} elements respectively")
    return Dot.apply(input, other)


def outer(input, vec2):
    """out[i, j] = input[i] * vec2[j]: a broadcast product, so types promote as in ``*``."""
    require_tensors("outer", ("input", input), ("vec2", vec2))
    for t, name in ((input, "self"), (vec2, "vec2")):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D "
                               f"(shape {list(t.shape)})")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer

