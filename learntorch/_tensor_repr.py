"""``repr(tensor)`` in torch's style: ``tensor([1., 2.], requires_grad=True)``."""
import numpy as np

from . import _dtypes

_PREFIX = "tensor("
_EDGE = 3          # items shown at each edge of a summarised dimension
_THRESHOLD = 1000  # elements before summarising, as torch


def _float_formatter(values):
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: _special(v) or f"{v:.4f}"
    absmax, absmin = np.abs(finite).max(), np.abs(finite).min()
    if np.all(finite == np.round(finite)) and absmax < 1e8:
        width = max(len(f"{v:.0f}.") for v in finite)
        return lambda v: (_special(v) or f"{v:.0f}.").rjust(width)
    sci = absmax >= 1e8 or (absmin != 0 and absmin < 1e-4) or (absmin and absmax / absmin > 1e3
                                                             and absmax >= 1e3)
    if sci:
        width = max(len(f"{v:.4e}") for v in finite)
        return lambda v: (_special(v) or f"{v:.4e}").rjust(width)
    width = max(len(f"{v:.4f}") for v in finite)
    return lambda v: (_special(v) or f"{v:.4f}").rjust(width)


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _format(a, fmt, indent, summarize):
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        items = list(a)
        if summarize and len(items) > 2 * _EDGE:
            parts = [fmt(v) for v in items[:_EDGE]] + ["..."] + [fmt(v) for v in items[-_EDGE:]]
        else:
            parts = [fmt(v) for v in items]
        return "[" + ", ".join(parts) + "]"
    rows = range(a.shape[0])
    if summarize and a.shape[0] > 2 * _EDGE:
        rows = list(range(_EDGE)) + [None] + list(range(a.shape[0] - _EDGE, a.shape[0]))
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    parts = ["..." if r is None else _format(a[r], fmt, indent + 1, summarize) for r in rows]
    return "[" + sep.join(parts) + "]"


def tensor_repr(t):
    a = t._data
    summarize = a.size > _THRESHOLD
    if a.dtype == np.bool_:
        fmt = lambda v: "True" if v else "False"  # noqa: E731
        width = 5 if a.any() and not a.all() else 0
        fmt = (lambda f: (lambda v: f(v).rjust(width)))(fmt)
    elif np.issubdtype(a.dtype, np.integer):
        width = max((len(str(v)) for v in a.reshape(-1)), default=1)
        fmt = lambda v: str(v).rjust(width)  # noqa: E731
    else:
        fmt = _float_formatter(a.astype(np.float64).reshape(-1))
    if a.size == 0:
        body = "[]"
    else:
        body = _format(a, fmt, len(_PREFIX), summarize)
    suffix = []
    if a.size == 0 and a.ndim != 1:
        suffix.append(f"size={tuple(a.shape)}")
    default = {_dtypes.get_default_dtype(), _dtypes.int64, _dtypes.bool_}
    if t.dtype not in default:
        suffix.append(f"dtype={t.dtype}")
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    return _PREFIX + body + "".join(", " + s for s in suffix) + ")"
