"""Data types and torch's type-promotion rules.

A ``dtype`` is a small immutable object (``learntorch.float32`` ...) that knows
its numpy counterpart.  Promotion follows torch, not numpy:

* categories rank ``bool < integer < floating``;
* the result takes the highest category among all operands;
* inside that category, tensors with at least one dimension decide first,
  then zero-dimensional tensors, then Python scalars (which only contribute
  their category: ``int64_tensor * 2.5`` is float32, the default float);
* the two 16-bit floats are siblings, neither wider than the other: float16 has
  more mantissa bits, bfloat16 more exponent bits, so ``float16 + bfloat16`` is
  float32, the narrowest type that holds both exactly.

numpy has no bfloat16; the ``ml_dtypes`` package adds it as a numpy dtype (its
arithmetic computes each element in float32 and rounds once, as torch's CPU
kernels do), so a bfloat16 tensor is a numpy array of ``ml_dtypes.bfloat16``.
Importing ``ml_dtypes`` takes longer than importing the rest of learntorch, so it waits
for the first use of bfloat16: ``learntorch.bfloat16`` is a dtype whose numpy twin is
looked up the first time its ``.np`` is read.
"""
import numpy as np

INF = float("inf")


class dtype:
    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_rank",
                 "_load_numpy_type")

    def __init__(self, name, np_dtype, is_floating_point, is_signed, rank,
                 load_numpy_type=None, itemsize=None):
        self.name = name
        self.is_floating_point = is_floating_point
        self.is_signed = is_signed
        self._rank = rank  # order used to pick the wider type inside a category
        # a numpy type from a package that is slow to import (bfloat16's, from ml_dtypes)
        # is looked up the first time ``.np`` is read: until then the slot stays empty
        self._load_numpy_type = load_numpy_type
        if load_numpy_type is None:
            self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize if itemsize is None else itemsize

    def __getattr__(self, attr):  # called only for an empty slot: ``np`` not looked up yet
        if attr != "np" or self._load_numpy_type is None:
            raise AttributeError(f"'dtype' object has no attribute {attr!r}")
        self.np = np.dtype(self._load_numpy_type())
        _NUMPY_TO_DTYPE[self.np] = self
        return self.np

    @property
    def is_complex(self):
        return False

    def __repr__(self):
        return f"learntorch.{self.name}"

    def __reduce__(self):  # pickling by name keeps a dtype a singleton
        return (_by_name, (self.name,))


def _ml_dtypes_bfloat16():
    import ml_dtypes
    return ml_dtypes.bfloat16


bool_ = dtype("bool", np.bool_, False, False, 0)
uint8 = dtype("uint8", np.uint8, False, False, 1)
int8 = dtype("int8", np.int8, False, True, 2)
int16 = dtype("int16", np.int16, False, True, 3)
int32 = dtype("int32", np.int32, False, True, 4)
int64 = dtype("int64", np.int64, False, True, 5)
float16 = dtype("float16", np.float16, True, True, 6)
# float16's sibling (rank tie); its numpy type comes from ml_dtypes, imported on first use
bfloat16 = dtype("bfloat16", None, True, True, 6, load_numpy_type=_ml_dtypes_bfloat16, itemsize=2)
float32 = dtype("float32", np.float32, True, True, 7)
float64 = dtype("float64", np.float64, True, True, 8)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
#: the 16-bit floats, which torch's kernels compute in float32 ("opmath") and round once
LOW_PRECISION_FLOATS = (float16, bfloat16)
_NUMPY_TO_DTYPE = {d.np: d for d in ALL_DTYPES if d is not bfloat16}  # (bfloat16: when loaded)
_NAMES = {d.name: d for d in ALL_DTYPES}
_NAMES.update({"half": float16, "float": float32, "double": float64, "long": int64,
               "int": int32, "short": int16})

# Quantized types: integer codes that mean ``scale * (code - zero_point)``.  The codes are
# stored as int8 / uint8 / int32 arrays and the scale and zero point live on the tensor
# (``learntorch/_quantized_tensor.py``), so these dtypes are made on purpose by
# ``quantize_per_tensor`` and friends, never inferred from a numpy array: they are not in
# the numpy map above (an int8 array is an int8 tensor).
qint8 = dtype("qint8", np.int8, False, True, 2)
quint8 = dtype("quint8", np.uint8, False, False, 1)
qint32 = dtype("qint32", np.int32, False, True, 4)
QUANTIZED_DTYPES = (qint8, quint8, qint32)
_NAMES.update({d.name: d for d in QUANTIZED_DTYPES})


def _by_name(name):
    return _NAMES[name]


_default_float = float32


def get_default_dtype():
    """The dtype of floating tensors made from Python floats (float32 unless changed)."""
    return _default_float


def set_default_dtype(d):
    global _default_float
    d = to_dtype(d)
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def from_numpy_dtype(np_dtype):
    try:
        return _NUMPY_TO_DTYPE[np.dtype(np_dtype)]
    except KeyError:
        if np.dtype(np_dtype).name == "bfloat16" and np.dtype(np_dtype) == bfloat16.np:
            return bfloat16  # an ml_dtypes array made before learntorch's bfloat16 was used
        raise TypeError(
            f"numpy dtype {np.dtype(np_dtype)} has no learntorch equivalent; supported: "
            + ", ".join(d.name for d in ALL_DTYPES)) from None


def to_dtype(d):
    """Accept a learntorch dtype, a numpy dtype, a Python type or a name."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return _default_float
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d in _NAMES:
        return _NAMES[d]
    return from_numpy_dtype(d)


def _category(d):
    if d is bool_:
        return 0
    if d in QUANTIZED_DTYPES:  # (only reached when dtypes differ: never on the hot path)
        raise NotImplementedError(
            f"{d} codes cannot be mixed with other tensors in an operation: they mean "
            "scale * (code - zero_point), not their own value. Call .dequantize() first")
    return 2 if d.is_floating_point else 1


def scalar_dtype(value):
    """The dtype a Python scalar gets when it becomes a tensor on its own."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return _default_float
    raise TypeError(f"expected a number, got {type(value).__name__}")


def _scalar_keeps(d, scalar):
    """True when a Python scalar leaves tensor dtype ``d`` unchanged (same or lower category)."""
    t = type(scalar)
    if t is float:
        return d.is_floating_point
    if t is int:
        return d is not bool_
    return t is bool


def promote_types(a, b):
    """Result dtype of two dtypes, as torch.promote_types."""
    a, b = to_dtype(a), to_dtype(b)
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 1 and {a, b} == {uint8, int8}:
        return int16
    if a._rank == b._rank:  # float16 and bfloat16: neither holds the other
        return float32
    return a if a._rank > b._rank else b


def result_type(*operands):
    """Result dtype of an operation on tensors and Python scalars (torch's rules)."""
    if len(operands) == 2:  # fast path for the common binary cases (the per-op hot path)
        a, b = operands
        da, db = getattr(a, "_dtype", None), getattr(b, "_dtype", None)
        if da is not None and da is db:
            return da
        if db is None and da is not None and _scalar_keeps(da, b):
            return da
        if da is None and db is not None and _scalar_keeps(db, a):
            return db
    dims = zero = scalars = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim > 0:
                dims = d if dims is None else promote_types(dims, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        else:
            s = scalar_dtype(x)
            scalars = s if scalars is None else promote_types(scalars, s)
    # walk the priority tiers: a lower tier only wins by a higher category
    result = None
    for tier in (dims, zero, scalars):
        if tier is None:
            continue
        if result is None:
            result = tier
        elif _category(tier) > _category(result):
            result = tier if tier is not scalars else (
                _default_float if _category(tier) == 2 else int64)
    return result


def can_cast(from_, to):
    """torch.can_cast: False only when casting would lower the category (float to int,
    int to bool, ...), which in-place ops refuse."""
    return _category(to_dtype(from_)) <= _category(to_dtype(to))


# ---------------------------------------------------------------- Python numbers into a dtype
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "short", "int32": "int",
            "int64": "int64_t"}


def check_scalar_fits(value, d):
    """torch's check (``c10::checked_convert``) that a Python number may be stored in dtype
    ``d``: an integer dtype takes ints in its range -- the unsigned uint8 also takes
    -255..-1, which wrap around (two's complement: -1 is 255) -- and finite floats in its
    range (truncated towards zero); floating dtypes take any number (too large becomes
    inf).  A RuntimeError names the value and the dtype otherwise."""
    if isinstance(value, (bool, np.bool_)) or d is bool_:
        return
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if not -2 ** 63 <= value < 2 ** 64:
            raise OverflowError(f"Python int too large to convert to C long: {value} does not "
                                f"fit in 64 bits (dtype {d})")
        if d.is_floating_point:
            return
        info = np.iinfo(d.np)
        low = -info.max if info.min == 0 else info.min  # uint8: -255 wraps to 1
        if low <= value <= info.max:
            return
    elif d.is_floating_point:
        return
    else:
        value = float(value)
        info = np.iinfo(d.np)
        if value == value and info.min <= value <= info.max:
            return
    raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(d.name, d.name)} "
                       f"without overflow: {value} is outside the range of {d} "
                       f"[{np.iinfo(d.np).min}, {np.iinfo(d.np).max}]")


def fill_skips_range_check(d, numel):
    """Whether torch fills a tensor of dtype ``d`` and ``numel`` elements without the range
    check: its one-element path does so for float16 (``full((1,), 7e4, dtype=float16)`` is
    inf, ``full((2,), 7e4, dtype=float16)`` an error) -- an accident, followed to agree."""
    return d is float16 and numel == 1


_C_FLOAT_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double"}


def cast_python_scalar(value, d, to_inf=False):
    """A Python number as dtype ``d`` stores it (after ``check_scalar_fits``): ints wrap into
    uint8, floats truncate towards zero into integer dtypes, anything nonzero is True.
    A finite number beyond a floating dtype's range is torch's RuntimeError, as in
    ``fill_``, ``full``, ``clamp``, ``masked_fill`` and ``scatter`` -- or, with ``to_inf``,
    becomes inf, as an assignment ``x[i] = 1e6`` to a float16 tensor does in torch."""
    check_scalar_fits(value, d)
    if d is bool_:
        return bool(value)
    if d.is_floating_point:
        limit = float(np.finfo(d.np).max)
        if not to_inf and abs(float(value)) > limit and float(value) not in (INF, -INF):
            raise RuntimeError(f"value cannot be converted to type {_C_FLOAT_NAMES[d.name]} "
                               f"without overflow: {value} is outside the range of {d} "
                               f"[{-limit}, {limit}]")
        with np.errstate(over="ignore"):
            return d.np.type(float(value)).item()
    return int(np.array(int(value), dtype=np.int64).astype(d.np))  # int(): towards zero
