"""The in-place rule shared by every ``op_`` method and by ``x[idx] = v``.

An in-place op writes its result into the tensor's own memory and bumps the
version counter it shares with its views.  When autograd is watching:

* a leaf that requires grad may not be changed in place (its ``.grad`` would
  no longer describe the values it holds) -- torch's RuntimeError, and the
  same for a view of such a leaf;
* otherwise the op is recorded as the out-of-place op applied to a copy of
  the old values, and the tensor takes over the new ``grad_fn`` ("rebasing
  its history"), so later backward passes see the right derivative;
* when the tensor is a *view*, its memory belongs to its base, so it is the
  base's history that changes: the base becomes "old base with the view's
  region replaced by the new values" (torch's ``CopySlices``), and the view
  becomes a read of that new base;
* every other live view of that base now shows new values too, so each is
  re-linked as a read of the new base (``view_of`` keeps track of them).

Without autograd it is just a write.  Writing into an ``expand()``ed view,
where several elements share one memory cell, is refused as in torch.
"""
import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Function, _detached_alias
from ._helpers import wrap
from ._views import is_registered_view, live_views
from .broadcast import is_expandable_to
from .indexing import CopySlices, Index
from .shape import Clone
from .strides import has_internal_overlap, is_non_overlapping_and_dense


def _is_view_for_autograd(x):
    """A view whose changes are changes of its base: one made by a view op (x.detach()
    shares memory too, but is cut from the graph: changing it leaves the base's history)."""
    base = x._base
    if base is None:
        return False
    if x._requires_grad and x._grad_fn is not None:
        return True
    return is_registered_view(base, x)


def _relink_views(base, skip=None):
    """``base`` has a new history: each of its live views becomes a read of the new base."""
    for view in live_views(base):
        if view is not skip:
            _take_history(view, Index.apply(base, _view_region(base, view)))


def check_inplace_allowed(x):
    if not grad_mode._state.enabled:
        return
    if x._requires_grad and x._grad_fn is None:
        if x._base is not None and x._base._requires_grad:
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad "
                "mode enabled. Given that this use case is ambiguous and error-prone, it is "
                "forbidden. You can clarify your code by moving both the view and the inplace "
                "either both inside the no_grad block (if you don't want the inplace to be "
                "tracked) or both outside (if you want the inplace to be tracked).")
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. "
            "Wrap the update in `with torch.no_grad():` (as optimizers do) or work on a copy.")
    base = x._base
    if base is not None and x._requires_grad and base._requires_grad and base._grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation. Wrap it in `with torch.no_grad():` or clone() the view first.")


def check_no_overlap(x):
    if has_internal_overlap(x._data):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            f"single memory location (a tensor of shape {list(x.shape)} with stride "
            f"{list(x.stride())}: an expand()ed view). Please clone() the tensor before "
            "performing the operation.")


def check_no_partial_overlap(dst, src):
    """Refuse ``src`` overlapping ``dst``'s memory only in part (``x[1:].copy_(x[:-1])``).

    Reading and writing the same elements (``x.mul_(x)``) is fine; a shifted overlap
    would read values the op has already overwritten.  Like torch, only dense layouts
    are checked (for others the question is too hard to answer cheaply).
    """
    a, b = dst._data, src._data
    if a is b or not a.size or not b.size or not np.may_share_memory(a, b):
        return
    same = a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and \
        a.shape == b.shape and a.strides == b.strides
    if same or not (_dense(a) and _dense(b)):
        return
    raise RuntimeError(
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        f"refer to a single memory location (input of shape {list(src.shape)}, written-to "
        f"tensor of shape {list(dst.shape)}). Please clone() the tensor before performing the "
        "operation.")


def _dense(a):
    return is_non_overlapping_and_dense(a.shape, [s // a.itemsize for s in a.strides])


def _store(x, result, overlap_ok=False):
    """Copy ``result`` into ``x``'s memory with torch's shape and dtype checks (a fill may
    write an expand()ed view, whose elements share memory: ``overlap_ok``)."""
    if tuple(result.shape) != tuple(x.shape):
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    rd, xd = result._dtype, x._dtype
    if (rd.is_floating_point and not xd.is_floating_point) or (
            rd.name != "bool" and xd.name == "bool"):
        raise RuntimeError(f"result type {_short(rd)} can't be cast to the desired output type "
                           f"{_short(xd)}")
    if not overlap_ok:
        check_no_overlap(x)
    try:
        backends.current.copy_into(x._data, result._data)
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(f"cannot write into this tensor of shape {list(x.shape)}: its "
                               "memory is read-only. Please clone() it first.") from None
        raise
    x._version_counter[0] += 1


def _short(d):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(d.name, d.name)


def apply_inplace(x, recorded, fast=None, others=(), check_overlap=True, overlap_ok=False):
    """Run an in-place op on ``x``.

    ``recorded(src)`` computes the result out of place from ``src`` (with autograd);
    ``fast()``, when given, writes into ``x`` directly when no graph is needed;
    ``others`` are the op's other operands (a graph is needed if any requires grad),
    which may not overlap ``x`` in part (``check_overlap=False`` when the caller
    checks the part of ``x`` it really writes, as ``x[idx] = v`` does).  A fill writes
    one value everywhere, so it may write an expand()ed view (``overlap_ok``).
    """
    check_inplace_allowed(x)
    for o in others:
        if check_overlap and isinstance(o, Tensor):
            check_no_partial_overlap(x, o)
    needs_graph = grad_mode._state.enabled and (
        x._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others))
    if needs_graph:
        if _is_view_for_autograd(x):
            return _inplace_on_view(x, recorded, overlap_ok)
        src = Clone.apply(x)  # the old values, since x's memory is about to change
        out = recorded(src)
        _store(x, out, overlap_ok)
        _take_history(x, out)
        _relink_views(x)
        return x
    if fast is not None:
        fast()
        x._version_counter[0] += 1
        return x
    state = grad_mode._state
    previous, state.enabled = state.enabled, False
    try:
        out = recorded(x)
    finally:
        state.enabled = previous
    _store(x, out, overlap_ok)
    return x


def _take_history(x, out):
    """``x`` now holds ``out``'s values: make it ``out`` for autograd too."""
    if not out._requires_grad:
        return
    x._grad_fn, x._output_nr, x._requires_grad = out._grad_fn, out._output_nr, True
    _saved_output_is_x(x, out)


def _saved_output_is_x(x, out):
    """If the op saved its output for backward (``exp_``, ``tanh_``, ...), that output *is*
    ``x`` in torch, so changing ``x`` again before backward must be reported.  ``out`` is
    our temporary copy: point what was saved at ``x``'s memory and version counter."""
    node = out._grad_fn
    saved = node._saved if node is not None and hasattr(node, "_saved") else None
    if not saved or out._dtype is not x._dtype:
        return
    # a saved output is kept as a detached alias sharing out's version counter
    # (function._detach_saved_outputs); the node gives it its history back when needed
    counter = out._version_counter
    if not any(t is not None and t._version_counter is counter for t in saved):
        return
    alias = _detached_alias(x)  # x's values and version counter, detached (no cycle)
    node._saved = tuple(alias if t is not None and t._version_counter is counter else t
                        for t in saved)
    node._saved_versions = tuple(x._version if t is not None and t._version_counter is counter
                                 else v for t, v in zip(saved, node._saved_versions))


def _inplace_on_view(x, recorded, overlap_ok=False):
    """An in-place op on a view: rewrite the base's history (torch's CopySlices)."""
    base = x._base
    region = _view_region(base, x)
    old_base = Clone.apply(base)
    new_view = recorded(Index.apply(old_base, region))
    _store(x, new_view, overlap_ok)  # the write lands in the base's memory
    new_base = CopySlices.apply(old_base, region, new_view, False)
    _take_history(base, new_base)
    _take_history(x, Index.apply(base, region))  # the view, re-read from the new base
    _relink_views(base, skip=x)
    return x


def _view_region(base, view):
    """Where ``view``'s elements sit in ``base``: an advanced-index region (see indexing.py).

    Found by memory address: each element of the view is the element of the
    base at the same address.
    """
    if base.ndim == 0:  # a view of one number: that number, as often as the view's shape says
        return (None,), (np.zeros(view.shape, np.int64),)
    base_addr = _addresses(base._data).reshape(-1)
    view_addr = _addresses(view._data)
    if view_addr.size == 0:  # an empty view: a region that selects nothing, of its shape
        return (), tuple(np.zeros(view.shape, np.int64) for _ in base.shape)
    order = np.argsort(base_addr, kind="stable")
    pos = np.searchsorted(base_addr[order], view_addr).clip(0, max(base_addr.size - 1, 0))
    flat = order[pos]
    if base_addr.size == 0 or not np.array_equal(base_addr[flat], view_addr):
        raise RuntimeError("in-place operation on a view whose memory is not inside its base "
                           f"(view shape {list(view.shape)}, base shape {list(base.shape)})")
    return (), tuple(np.unravel_index(flat, base.shape))


def _addresses(a):
    """The byte address of every element of numpy array ``a``, as an int array of its shape."""
    addr = np.full(a.shape, a.__array_interface__["data"][0], dtype=np.int64)
    for k, (n, s) in enumerate(zip(a.shape, a.strides)):
        step = [1] * a.ndim
        step[k] = n
        addr = addr + (np.arange(n, dtype=np.int64) * s).reshape(step)
    return addr


# ---------------------------------------------------------------- writes with no out-of-place twin
class Fill(Function):
    """``x.fill_(value)`` as a function: every element becomes ``value``."""

    node_name = "FillBackward2"  # (torch's name for fill_ with a number)

    @staticmethod
    def forward(ctx, x, value):
        v = value._data if isinstance(value, Tensor) else value
        return wrap(backends.current.full(x.shape, v, x._data.dtype, like=x._data))

    @staticmethod
    def backward(ctx, grad):
        gx = _zeros_like(grad) if ctx.needs_input_grad[0] else None
        return gx, (grad.sum() if ctx.needs_input_grad[1] else None)


class FillTensor(Fill):
    node_name = "FillBackward3"  # fill_ with a 0-d tensor


class Zero(Fill):
    node_name = "ZeroBackward0"


class Copy(Function):
    """``x.copy_(src)`` as a function: ``src`` broadcast to x's shape, cast to x's dtype."""

    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, x, src):
        b = backends.current
        return wrap(b.cast(b.broadcast_to(src._data, x.shape), x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        gx = _zeros_like(grad) if ctx.needs_input_grad[0] else None
        # the engine sums over broadcast dims and casts back to src's dtype
        return gx, (grad if ctx.needs_input_grad[1] else None)


def _zeros_like(grad):
    return Tensor._wrap(backends.current.full(grad.shape, 0, grad._data.dtype, like=grad._data))


# ---------------------------------------------------------------- the writes as methods
def zero_(x):
    """Fill with zeros, in place."""
    return apply_inplace(x, lambda src: Zero.apply(src, 0), fast=lambda: _fill(x, 0),
                         overlap_ok=True)


def fill_(x, value):
    """Fill with ``value`` (a number or a 0-d tensor), in place.  Every element gets the same
    value, so torch allows it even on an expand()ed view."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return apply_inplace(x, lambda src: FillTensor.apply(src, value),
                             fast=lambda: _fill(x, _dtypes.cast_python_scalar(value.item(),
                                                                              x._dtype)),
                             others=(value,), overlap_ok=True)
    if not isinstance(value, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"fill_(): argument 'value' (position 1) must be Number, not "
                        f"{type(value).__name__}")
    value = _dtypes.cast_python_scalar(
        value, x._dtype, to_inf=_dtypes.fill_skips_range_check(x._dtype, x._data.size))
    return apply_inplace(x, lambda src: Fill.apply(src, value), fast=lambda: _fill(x, value),
                         overlap_ok=True)


def _fill(x, value):
    try:
        backends.current.fill(x._data, value)
    except ValueError as e:
        if "read-only" in str(e):
            check_no_overlap(x)
        raise


def copy_(x, src, non_blocking=False):
    """Copy ``src`` (broadcast to x's shape, cast to x's dtype) into ``x``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if not is_expandable_to(tuple(src.shape), tuple(x.shape)):
        raise RuntimeError(f"The size of tensor a ({list(x.shape)}) must match the size of "
                           f"tensor b ({list(src.shape)}): copy_ broadcasts src to the "
                           "destination's shape")

    def fast():  # (apply_inplace has checked that src does not partly overlap x)
        check_no_overlap(x)
        backends.current.copy_into(x._data, src._data)
    return apply_inplace(x, lambda s: Copy.apply(s, src), fast=fast, others=(src,))
