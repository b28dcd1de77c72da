"""The in-place rule shared by every ``op_`` method and by ``x[idx] = v``.

An in-place op writes its result into the tensor's own memory and bumps the
version counter it shares with its views.  When autograd is watching:

* a leaf that requires grad may not be changed in place (its ``.grad`` would
  no longer describe the values it holds) -- torch's RuntimeError;
* otherwise the op is recorded as the out-of-place op applied to a copy of
  the old values, and the tensor takes over the new ``grad_fn`` ("rebasing
  its history"), so later backward passes see the right derivative.
"""
import numpy as np

from ..autograd import grad_mode


def check_inplace_allowed(x):
    if not grad_mode._state["enabled"]:
        return
    if x._requires_grad and x._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. "
            "Wrap the update in `with torch.no_grad():` (as optimizers do) or work on a copy.")
    base = x._base
    if base is not None and x._requires_grad and base._requires_grad:
        if base._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation. Wrap it in `with torch.no_grad():` or clone() the view first.")
        raise RuntimeError(
            "in-place change of a view of a tensor that is part of the autograd graph is not "
            "supported by learntorch (torch would rewrite the base tensor's history). Apply the "
            "operation to the whole tensor, or use an out-of-place op (torch.where, torch.cat) "
            "or clone() the view first.")


def _store(x, result):
    """Copy ``result`` into ``x``'s memory with torch's shape and dtype checks."""
    if tuple(result.shape) != tuple(x.shape):
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    rd, xd = result._dtype, x._dtype
    if (rd.is_floating_point and not xd.is_floating_point) or (
            rd.name != "bool" and xd.name == "bool"):
        raise RuntimeError(f"result type {_short(rd)} can't be cast to the desired output type "
                           f"{_short(xd)}")
    try:
        np.copyto(x._data, result._data, casting="unsafe")
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location (it is an expand()ed view). Please clone() the tensor "
                "before performing the operation.") from None
        raise
    x._version_counter[0] += 1


def _short(d):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "bool": "Bool"}.get(d.name, d.name)


def apply_inplace(x, recorded, fast=None, others=()):
    """Run an in-place op on ``x``.

    ``recorded(src)`` computes the result out of place from ``src`` (with autograd);
    ``fast()``, when given, writes into ``x`` directly when no graph is needed;
    ``others`` are the op's other operands (a graph is needed if any requires grad).
    """
    from .._tensor import Tensor
    check_inplace_allowed(x)
    needs_graph = grad_mode._state["enabled"] and (
        x._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others))
    if needs_graph:
        from .shape import Clone
        src = Clone.apply(x)  # the old values, since x's memory is about to change
        out = recorded(src)
        _store(x, out)
        if out._requires_grad:
            x._grad_fn, x._output_nr, x._requires_grad = out._grad_fn, out._output_nr, True
        return x
    if fast is not None:
        fast()
        x._version_counter[0] += 1
        return x
    state = grad_mode._state
    previous, state["enabled"] = state["enabled"], False
    try:
        out = recorded(x)
    finally:
        state["enabled"] = previous
    _store(x, out)
    return x
