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
from ..autograd.function import Function, autocast_inputs
from ._helpers import as_array, check_same_device, require_tensors, wrap
from .reductions import norm_derivative


class Matmul(Function):
    """A @ B for any ranks >= 1; torch names the node after the case (the subclasses).

    Each operand is saved only if the *other* one needs a gradient (dA needs B, dB needs
    A): torch lets you change in place an operand no gradient formula reads."""

    @staticmethod
    def forward(ctx, a, b):
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(a if needs_b else None, b if needs_a else None)
        ctx.a_vec, ctx.b_vec = a.ndim == 1, b.ndim == 1
        out = backends.current.matmul(a._data, b._data)
        return wrap(out if out.__class__ is np.ndarray else as_array(out))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        # make vectors matrices (a row on the left, a column on the right), grad to match
        a_vec, b_vec = ctx.a_vec, ctx.b_vec
        g = grad.unsqueeze(-1) if b_vec else grad
        g = g.unsqueeze(-2) if a_vec else g
        ga = gb = None
        if ctx.needs_input_grad[0]:
            b2 = b.unsqueeze(-1) if b_vec else b
            ga = g @ b2.mT  # dA = dC @ B^T
            ga = ga.squeeze(-2) if a_vec else ga
        if ctx.needs_input_grad[1]:
            a2 = a.unsqueeze(0) if a_vec else a
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
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(a if needs_b else None, b if needs_a else None)
        return wrap(backends.current.dot(a._data, b._data))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)


# ---------------------------------------------------------------- checks (torch's messages)
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
    a, b = autocast_inputs(Matmul, input, other)
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
    input, mat2 = autocast_inputs(Mm, input, mat2)
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
    input, mat2 = autocast_inputs(Bmm, input, mat2)
    _check_operands(input, mat2, "bmm")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]"
            f". (shapes {list(input.shape)} and {list(mat2.shape)})")
    return Bmm.apply(input, mat2)


def mv(input, vec):
    """Matrix @ vector: ``input`` (n, m) times ``vec`` (m,) is (n,).  Not on the CPU autocast
    lists (torch runs it in its inputs' dtype there), on the cuda one's 16-bit list."""
    require_tensors("mv", ("input", input), ("vec", vec))
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}: "
                           f"mv takes a matrix and a vector (shapes {list(input.shape)} and "
                           f"{list(vec.shape)}); use matmul (@) for other shapes")
    input, vec = autocast_inputs(Mv, input, vec)
    _check_operands(input, vec, "mv")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({_sizes(input.shape)}), vec ({vec.shape[0]})")
    return Mv.apply(input, vec)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape;
    with ``beta=0`` ``input`` is ignored (its nan and inf do not spread) and its gradient is
    zeros, as in torch.

    Composed from ``mm`` (its graph shows MmBackward0 and AddBackward0 where torch has one
    AddmmBackward0).  Under autocast all three tensors go to the 16-bit dtype first: torch's
    addmm is on its lower-precision list, so ``addmm(float32 bias, ...)`` is bfloat16."""
    require_tensors("addmm", ("input", input), ("mat1", mat1), ("mat2", mat2))
    input, mat1, mat2 = autocast_inputs(Mm, input, mat1, mat2)
    if input.dtype is not mat1.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {input.dtype} and "
                           f"{mat1.dtype}: convert input (input.to({mat1.dtype}))")
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``, as ``addmm`` for batches of matrices
    (composed from ``bmm``; on autocast's lower-precision list, as in torch)."""
    require_tensors("baddbmm", ("input", input), ("batch1", batch1), ("batch2", batch2))
    input, batch1, batch2 = autocast_inputs(Bmm, input, batch1, batch2)
    if not input.dtype is batch1.dtype is batch2.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {input.dtype}, batch1: "
                           f"{batch1.dtype}, batch2: {batch2.dtype}")
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``, ``input`` broadcast to (n,) (composed from ``mv``;
    on autocast's 16-bit list for cuda only, as ``mv``: on the CPU it runs in its inputs' dtype)."""
    require_tensors("addmv", ("input", input), ("mat", mat), ("vec", vec))
    input, mat, vec = autocast_inputs(Mv, input, mat, vec)
    if not input.dtype is mat.dtype is vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {input.dtype}, "
                           f"{mat.dtype}, and {vec.dtype}: convert them with .to(dtype)")
    if mat.ndim == 2 and vec.ndim == 1 and input.ndim <= 1 and input.numel() not in (
            1, mat.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({_sizes(input.shape)}), mat "
                           f"({_sizes(mat.shape)}), vec ({vec.shape[0]})")
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum over b of batch1[b] @ batch2[b]``: the products of a batch
    summed into one matrix (composed from ``bmm`` and a sum over the batch; on autocast's
    16-bit lists for the CPU and cuda, as in torch)."""
    require_tensors("addbmm", ("input", input), ("batch1", batch1), ("batch2", batch2))
    input, batch1, batch2 = autocast_inputs(Bmm, input, batch1, batch2)
    for t, name in ((batch1, "batch1"), (batch2, "batch2")):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor (batch, n, m), got shape "
                               f"{list(t.shape)}")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({_sizes(batch1.shape[1:])} and "
                           f"{_sizes(batch2.shape[1:])})")
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {input.dtype} and "
                           f"{batch1.dtype}: convert input (input.to({batch1.dtype}))")
    return _scaled_sum(input, bmm(batch1, batch2).sum(dim=0), beta, alpha)


def _scaled_sum(input, product, beta, alpha):
    """``beta * input + alpha * product``: the factors skipped when 1, ``input`` when beta
    is 0; ``input`` must broadcast to the product's shape (it never grows the result)."""
    target, shape = tuple(product.shape), tuple(input.shape)
    if len(shape) > len(target):
        raise RuntimeError(f"input of shape {list(shape)} has more dimensions than the product "
                           f"{list(target)} it is added to")
    for k in range(1, len(shape) + 1):  # torch's expand rule, from the right
        if shape[-k] not in (1, target[-k]):
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-k]}) must match the existing size "
                f"({shape[-k]}) at non-singleton dimension {len(target) - k}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(shape)}")
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        if not input.requires_grad:
            return out
        # torch ignores input's values (its nan does not spread) yet still gives it a gradient,
        # of zeros: a where() that never picks input does both
        from .comparison import where
        never = Tensor._wrap(backends.current.full((), False, np.bool_, like=out._data))
        return where(never, input, out)
    return out + (input if beta == 1 else input * beta)


def dot(input, other):
    require_tensors("dot", ("input", input), ("other", other))
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
                           f" (shapes {list(input.shape)} and {list(other.shape)})")
    input, other = autocast_inputs(Dot, input, other)
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



class Cross(Function):
    """a x b along a dim of size 3; d(a x b)/da . g = b x g and d/db . g = g x a."""

    node_name = "LinalgCrossBackward0"

    @staticmethod
    def forward(ctx, a, b, dim):
        needs_a, needs_b = ctx.needs_input_grad[:2]
        ctx.save_for_backward(a if needs_b else None, b if needs_a else None)
        ctx.dim = dim
        return wrap(backends.current.cross(a._data, b._data, dim))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (cross(b, grad, dim=ctx.dim) if ctx.needs_input_grad[0] else None,
                cross(grad, a, dim=ctx.dim) if ctx.needs_input_grad[1] else None, None)


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (broadcasting the others); without
    ``dim``, the first dim of size 3 (torch's old default; pass dim to be explicit)."""
    require_tensors("cross", ("input", input), ("other", other))
    check_same_device(input, other)
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {input._dtype} but found {other._dtype} "
                           "(cross does not promote: convert one, e.g. b.to(a.dtype))")
    from .broadcast import _broadcast_tuple
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions "
                           f"(shapes {list(input.shape)} and {list(other.shape)})")
    shape = _broadcast_tuple(tuple(input.shape), tuple(other.shape))
    if dim is None:
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {list(input.shape)} "
                               f"and {list(other.shape)})")
    d = input._wrap_dim(dim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return Cross.apply(input, other, d)


class Cdist(Function):
    """The p-norm distance between every row of x1 and every row of x2.

    Forward and backward are the norm's, written with tensor ops on (x1_i - x2_j); like
    torch's, the backward (CdistBackward0) is differentiable only once: its own
    derivative is not implemented (``CdistDoubleBackward``)."""

    node_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, x1, x2, p):
        ctx.save_for_backward(x1, x2)
        ctx.p = p
        return _distances(x1, x2, p)

    @staticmethod
    def backward(ctx, grad):
        x1, x2 = ctx.saved_tensors
        g1, g2 = CdistDoubleBackward.apply(grad, x1, x2, ctx.p)
        return (g1 if ctx.needs_input_grad[0] else None,
                g2 if ctx.needs_input_grad[1] else None, None)


def _distances(x1, x2, p):
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p=p, dim=-1)


class CdistDoubleBackward(Function):
    """cdist's gradient for x1 and x2 (the norm's derivative, through the broadcast rows);
    not differentiable again, as in torch."""

    node_name = "CdistBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x1, x2, p):
        if p == 0:  # a count of differing coordinates: flat
            zero = grad.sum() * 0
            return x1 * zero, x2 * zero
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)             # (..., P, R, M)
        dist = _distances(x1, x2, p).unsqueeze(-1)
        d_diff = norm_derivative(diff, dist.expand(diff.shape), grad.unsqueeze(-1)
                                 .expand(diff.shape), p, (diff.ndim - 1,))
        return d_diff.sum(-2), -d_diff.sum(-3)

    @staticmethod
    def backward(ctx, gg1, gg2):
        raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between every row of ``x1`` (..., P, M) and every row of ``x2``
    (..., R, M): a (..., P, R) tensor; its gradient is the norm's (0 where two rows
    coincide, as torch's)."""
    require_tensors("cdist", ("x1", x1), ("x2", x2))
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 "
                           f"got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1._dtype is not x2._dtype:
        raise RuntimeError(f"expected scalar type {_SHORT.get(x1._dtype.name, x1._dtype)} but "
                           f"found {_SHORT.get(x2._dtype.name, x2._dtype)} (cdist does not "
                           "promote: convert one, e.g. x2.to(x1.dtype))")
    if not x1._dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1._dtype}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _CDIST_MODES[compute_mode]
    many_rows = x1.shape[-2] > 25 or x2.shape[-2] > 25
    if p == 2 and x1.numel() and x2.numel() and (mode == "mm" or mode == "if" and many_rows):
        return _euclidean_dist(x1, x2)
    return Cdist.apply(x1, x2, float(p))


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": "if",
                "use_mm_for_euclid_dist": "mm", "donot_use_mm_for_euclid_dist": "direct"}


def _euclidean_dist(x1, x2):
    """torch's cdist for p = 2 on more than 25 rows (or when asked): one matmul,
    sqrt(|a|^2 - 2 a.b + |b|^2), clamped at 1e-30 first -- tensor ops, so it has second
    derivatives (the direct ``Cdist`` has only first ones, as torch's)."""
    from .joining import cat
    x1_norm = x1.pow(2).sum(-1, keepdim=True)
    x2_norm = x2.pow(2).sum(-1, keepdim=True)
    x1_ = cat([x1.mul(-2), x1_norm, x1_norm.new_ones(x1_norm.shape)], -1)
    x2_ = cat([x2, x2_norm.new_ones(x2_norm.shape), x2_norm], -1)
    return x1_.matmul(x2_.transpose(-1, -2)).clamp_min(1e-30).sqrt()


_SHORT = {"float32": "Float", "float64": "Double", "float16": "Half"}
