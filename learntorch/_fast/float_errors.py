"""Floating-point errors the torch way: IEEE inf and nan, never a numpy warning.

``torch.tensor(1.) / 0`` is ``inf`` without a word; numpy would print
"RuntimeWarning: divide by zero".  Every Function's forward and backward runs
with numpy's floating-point error reporting switched off by
``ignore_float_errors()`` / ``restore_float_errors(token)``.

``np.errstate(all="ignore")`` does the same but costs about a microsecond
per use -- as much as a whole small op -- so when numpy exposes the context
variable behind it we set a prebuilt "ignore everything" state directly
(two cheap ContextVar calls), and fall back to ``np.errstate`` otherwise.
"""
import functools

import numpy as np

try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj
    _IGNORE = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # another numpy: use the public API
    _extobj_contextvar = None


if _extobj_contextvar is not None:
    # C callables, not Python functions wrapping them: every op calls both, and on a
    # one-element tensor a Python call frame is a measurable part of the op
    ignore_float_errors = functools.partial(_extobj_contextvar.set, _IGNORE)
    restore_float_errors = _extobj_contextvar.reset
else:
    def ignore_float_errors():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def restore_float_errors(token):
        token.__exit__(None, None, None)
