"""``repr(tensor)`` exactly as torch prints it: ``tensor([1., 2.], requires_grad=True)``.

This is a port of ``torch/_tensor_str.py`` onto numpy arrays, because learners
compare what they see with PyTorch's documentation and forums: the same
tensor must print the same text (only ``torch.`` becomes ``learntorch.`` in
dtype names).  The rules, in the order they are applied:

1. **One formatter for the whole tensor** (``_Formatter``) looks at every
   finite non-zero value (only the printed edges of a summarised tensor) and
   picks one style for all of them, so columns line up:

   * integer dtypes and bool: ``str(value)``;
   * floats that are all whole numbers: ``3.`` (``int_mode``);
   * scientific notation ``1.0000e+05`` when the largest/smallest magnitude
     ratio exceeds 1000, or a magnitude is above 1e8 or below 1e-4;
   * otherwise fixed point with ``precision`` (4) decimals.

   Every element is right-aligned to the widest one.
2. **Summarising**: a tensor with more than ``threshold`` (1000) elements
   shows only ``edgeitems`` (3) entries at each end of every dimension,
   with ``...`` between them.
3. **Line wrapping**: a row holds as many elements as fit in ``linewidth``
   (80) characters after the indent; the rest continue on the next line.
4. **Suffixes**: ``dtype=`` unless it is the default float dtype, int64 or
   bool (an empty tensor always shows a non-default-float dtype, since
   nothing in ``[]`` tells you the type), ``size=`` for empty tensors that
   are not 1-D, ``device=``, then ``grad_fn=<...>`` or ``requires_grad=True``.
   A suffix that would overflow the line goes on its own line.
"""
import contextlib
import math

import numpy as np

from . import _dtypes


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()
_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """``torch.set_printoptions``: change how tensors print (``profile``: default/short/full)."""
    if profile is not None:
        profiles = {"default": _DEFAULTS,
                    "short": dict(_DEFAULTS, precision=2, edgeitems=2),
                    "full": dict(_DEFAULTS, threshold=math.inf)}
        if profile not in profiles:
            raise ValueError(f"unknown print profile {profile!r}: use 'default', 'short' or "
                             "'full'")
        for name, value in profiles[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    return {"precision": PRINT_OPTS.precision, "threshold": PRINT_OPTS.threshold,
            "edgeitems": PRINT_OPTS.edgeitems, "linewidth": PRINT_OPTS.linewidth,
            "sci_mode": PRINT_OPTS.sci_mode}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change print options: ``with printoptions(precision=2): print(x)``."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One number style (and width) for every element of a tensor."""

    def __init__(self, values):
        # ``values``: a flat numpy array of the elements that will be printed
        self.floating = np.issubdtype(values.dtype, np.floating)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not self.floating:
            for v in values.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        wide = values.astype(np.float64)  # exact for the 16- and 32-bit floats: what torch's .item() gives
        nonzero_finite = wide[np.isfinite(wide) & (wide != 0)]
        if nonzero_finite.size == 0:
            return
        magnitudes = np.abs(nonzero_finite)
        lo, hi = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        for v in nonzero_finite.tolist():
            if self.sci_mode:
                width = len(f"{v:.{p}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1  # room for the trailing "." of "3."
            else:
                width = len(f"{v:.{p}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{p}f}"
        else:
            text = f"{value}"
        return text.rjust(self.max_width)


def _summarized_data(a):
    """Only the elements a summarised print shows (for choosing the formatter)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[:0]
    rows = range(a.shape[0])
    if a.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(a.shape[0] - edge, a.shape[0]))
    return np.stack([_summarized_data(a[i]) for i in rows])


def _vector_str(a, indent, summarize, formatter):
    element_length = formatter.max_width + 2  # ", " between elements
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = ([formatter.format(v) for v in a[:edge].tolist()] + [" ..."]
                + [formatter.format(v) for v in a[-edge:].tolist()])
    else:
        data = [formatter.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(a, indent, summarize, formatter):
    if a.ndim == 0:
        return formatter.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, formatter)
    edge = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * edge:
        slices = ([_array_str(a[i], indent + 1, summarize, formatter) for i in range(edge)]
                  + ["..."]
                  + [_array_str(a[i], indent + 1, summarize, formatter)
                     for i in range(a.shape[0] - edge, a.shape[0])])
    else:
        slices = [_array_str(a[i], indent + 1, summarize, formatter) for i in range(a.shape[0])]
    # sub-blocks of a 3-D tensor are separated by a blank line, of 4-D by two, ...
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1  # torch's arithmetic, kept exactly
    for suffix in suffixes:
        # lines break where torch's would: "dtype=learntorch.float64" is measured as
        # "dtype=torch.float64", so the text stays torch's with only the names changed
        length = len(suffix.replace("learntorch.", "torch."))
        if last_line_len + length + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + length
        else:
            parts.append(", " + suffix)
            last_line_len += length + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t):
    a = t._data if t.device.type == "cpu" else t._data.copy_to_host()  # printing reads the values
    if t.dtype is _dtypes.bfloat16:  # numpy's formatting knows no bfloat16; float32 holds it exactly
        a = a.astype(np.float32)
    # subclasses other than Parameter print their class name, as torch does
    name = type(t).__name__
    prefix = "tensor(" if name in ("Tensor", "Parameter") else f"{name}("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default_float = _dtypes.get_default_dtype()
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if t.dtype is not default_float:
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if t.dtype not in (default_float, _dtypes.int64, _dtypes.bool_):
            suffixes.append(f"dtype={t.dtype}")
        summarize = a.size > PRINT_OPTS.threshold
        formatter = _Formatter((_summarized_data(a) if summarize else a).reshape(-1))
        body = _array_str(a, indent, summarize, formatter)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
