"""In-place comparisons and logical ops: ``x.eq_(y)``, ``x.lt_(2)``, ``x.logical_and_(m)``, ...

The comparison is computed as usual (a bool tensor) and stored into ``x`` in x's own
dtype (1.0 / 0.0 for a float tensor), by the in-place rule every ``op_`` shares
(``_inplace.apply_inplace``).  On a tensor in the graph a comparison is a step
function: torch records it (``EqBackward0`` for a number, ``EqBackward1`` for a
tensor) with a zero gradient, and so does this.  The logical ops are not recorded at
all in torch (the tensor keeps its old history), and here neither.
"""
from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from . import comparison
from ._inplace import apply_inplace
from ._helpers import as_operand


class _ComparedInPlace(Function):
    """``op(x, other)`` cast to x's dtype, flat (zero gradient) in x and in other."""

    op = None

    @classmethod
    def forward(cls, ctx, x, other):
        out = getattr(comparison, cls.op)(x, other)._data
        return Tensor._wrap(backends.current.cast(out, x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        zero = grad * 0
        return zero, (zero if ctx.needs_input_grad[1] else None)


def _compared_in_place(op):
    """The classes for ``op_`` with a number (…Backward0) and with a tensor (…Backward1)."""
    title = op.capitalize()
    number = type(f"{title}InPlace", (_ComparedInPlace,),
                  {"op": op, "node_name": f"{title}Backward0", "__module__": __name__})
    tensor = type(f"{title}TensorInPlace", (_ComparedInPlace,),
                  {"op": op, "node_name": f"{title}Backward1", "__module__": __name__})

    def method(self, other):
        other = as_operand(other)
        cls = tensor if isinstance(other, Tensor) else number
        return apply_inplace(self, lambda src: cls.apply(src, other), others=(other,))
    method.__name__ = op + "_"
    method.__doc__ = f"In-place ``{op}``: x becomes (x {op} other), as 1/0 in x's dtype."
    return (number, tensor), method


(EqInPlace, EqTensorInPlace), eq_ = _compared_in_place("eq")
(NeInPlace, NeTensorInPlace), ne_ = _compared_in_place("ne")
(LtInPlace, LtTensorInPlace), lt_ = _compared_in_place("lt")
(LeInPlace, LeTensorInPlace), le_ = _compared_in_place("le")
(GtInPlace, GtTensorInPlace), gt_ = _compared_in_place("gt")
(GeInPlace, GeTensorInPlace), ge_ = _compared_in_place("ge")
greater_, greater_equal_, less_, less_equal_, not_equal_ = gt_, ge_, lt_, le_, ne_


def _logical_in_place(fn, name):
    def method(self, *others):
        return apply_inplace(self, lambda src: fn(src, *others), others=others)
    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: x becomes the truth value, in x's dtype."
    return method


logical_and_ = _logical_in_place(comparison.logical_and, "logical_and_")
logical_or_ = _logical_in_place(comparison.logical_or, "logical_or_")
logical_xor_ = _logical_in_place(comparison.logical_xor, "logical_xor_")
logical_not_ = _logical_in_place(comparison.logical_not, "logical_not_")
