"""Matrix products: matmul / @, mm, bmm, dot, outer, einsum.

For C = A @ B the two backward rules are

    dA = dC @ B^T        dB = A^T @ dC

and with batch dimensions that were broadcast, the engine sums dA and dB
back over them.  The forward calls the backend's ``matmul`` (BLAS through
numpy), the fastest matrix product on a CPU.
"""
import numpy as np

from .. import backends
from ..autograd.function import Function
from ._helpers import check_same_device, wrap


class Matmul(Function):
    node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return wrap(np.asarray(backends.current.matmul(a._data, b._data)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad @ b.mT if ctx.needs_input_grad[0] else None
        gb = a.mT @ grad if ctx.needs_input_grad[1] else None
        return ga, gb


class BatchedMatmul(Matmul):
    node_name = "BmmBackward0"


def _check(a, b, name):
    check_same_device(a, b)
    if a._dtype is not b._dtype:
        raise RuntimeError(f"{name}: expected m1 and m2 to have the same dtype, but got: "
                           f"{a._dtype} != {b._dtype}. Convert one, e.g. b.to(a.dtype)")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"{name}: both arguments need at least 1 dimension, but got "
                           f"{a.ndim}D and {b.ndim}D tensors")


def _shape_error(a, b):
    sa, sb = list(a.shape), list(b.shape)
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, sa[-2:] if len(sa) > 1 else [1] + sa))} "
        f"and {'x'.join(map(str, sb[-2:] if len(sb) > 1 else sb + [1]))}): the last dimension of the "
        f"first ({sa[-1]}) must equal the {'first' if len(sb) == 1 else 'second-to-last'} dimension "
        f"of the second ({sb[-2] if len(sb) > 1 else sb[0]}); full shapes {sa} and {sb}")


def matmul(input, other):
    _check(input, other, "matmul")
    a, b = input, other
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if a.shape[-1] != k_b:
        raise _shape_error(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    squeeze_a, squeeze_b = a.ndim == 1, b.ndim == 1
    if squeeze_a:
        a = a.unsqueeze(0)
    if squeeze_b:
        b = b.unsqueeze(-1)
    if a.ndim > 2 or b.ndim > 2:
        from .broadcast import broadcast_shapes
        try:
            broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except RuntimeError:
            raise RuntimeError(
                f"matmul: batch dimensions {list(a.shape[:-2])} and {list(b.shape[:-2])} cannot "
                f"be broadcast (full shapes {list(input.shape)} and {list(other.shape)})") from None
        out = BatchedMatmul.apply(a, b)
    else:
        out = Matmul.apply(a, b)
    if squeeze_a:
        out = out.squeeze(-2)
    if squeeze_b:
        out = out.squeeze(-1)
    return out


def mm(input, mat2):
    _check(input, mat2, "mm")
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got {input.ndim}D and {mat2.ndim}D "
                           f"(shapes {list(input.shape)} and {list(mat2.shape)}); use matmul "
                           "for other shapes")
    if input.shape[1] != mat2.shape[0]:
        raise _shape_error(input, mat2)
    return Matmul.apply(input, mat2)


def bmm(input, mat2):
    _check(input, mat2, "bmm")
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor; bmm expects 3-D tensors, got shapes "
                           f"{list(input.shape)} and {list(mat2.shape)}")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return BatchedMatmul.apply(input, mat2)


class Dot(Function):
    node_name = "DotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return wrap(np.asarray(np.dot(a._data, b._data)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


def dot(input, other):
    _check(input, other, "dot")
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got "
                           f"{input.shape[0]} and {other.shape[0]} elements respectively")
    return Dot.apply(input, other)


def outer(input, vec2):
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, got shapes {list(input.shape)} and "
                           f"{list(vec2.shape)}")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


# ---------------------------------------------------------------- einsum
class Einsum(Function):
    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, spec, *operands):
        ctx.spec = spec
        ctx.save_for_backward(*operands)
        return wrap(np.asarray(np.einsum(spec, *[o._data for o in operands], optimize=True)))

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        inputs, out = ctx.spec.split("->")
        terms = inputs.split(",")
        grads = [None]
        for i, term in enumerate(terms):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            others = [(t, o) for j, (t, o) in enumerate(zip(terms, operands)) if j != i]
            available = set(out).union(*[set(t) for t, _ in others])
            kept = "".join(c for c in term if c in available)
            spec = ",".join([out] + [t for t, _ in others]) + "->" + kept
            g = einsum(spec, grad, *[o for _, o in others])
            # letters only this operand had were summed away: broadcast the gradient back over them
            shape = [operands[i].shape[k] if c in available else 1 for k, c in enumerate(term)]
            grads.append(g.reshape(shape).expand(operands[i].shape))
        return tuple(grads)


def _parse_einsum(equation, n):
    eq = equation.replace(" ", "")
    if "." in eq:
        raise NotImplementedError("einsum with '...' is not supported yet; name every dimension "
                                  "with a letter, e.g. 'bij,bjk->bik'")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "")
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    if len(terms) != n:
        raise ValueError(f"einsum(): the equation {equation!r} names {len(terms)} operands but "
                         f"{n} were given")
    for term in terms:
        if len(set(term)) != len(term):
            raise NotImplementedError(f"einsum(): repeated index within one operand ({term!r}, a "
                                      "diagonal/trace) is not supported; use torch.diagonal/trace")
    return terms, rhs


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, rhs = _parse_einsum(equation, len(operands))
    sizes = {}
    for term, op in zip(terms, operands):
        if len(term) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) "
                               f"does not match the number of dimensions ({op.ndim}) for operand "
                               f"with shape {list(op.shape)} (subscripts {term!r})")
        for c, s in zip(term, op.shape):
            if sizes.setdefault(c, s) != s and s != 1 and sizes[c] != 1:
                raise RuntimeError(f"einsum(): operands do not broadcast: subscript '{c}' has "
                                   f"size {sizes[c]} and {s}")
    check_same_device(*operands)
    return Einsum.apply(",".join(terms) + "->" + rhs, *operands)
