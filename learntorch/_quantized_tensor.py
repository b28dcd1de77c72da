"""Quantized tensors: integer codes that stand for ``scale * (code - zero_point)``.

``learntorch.quantize_per_tensor(x, 0.1, 0, learntorch.qint8)`` gives a tensor of dtype
``qint8`` whose elements are one byte each.  PyTorch's API for them, mirrored here:
``q.int_repr()`` (the codes, as an int8/uint8/int32 tensor), ``q.dequantize()`` (float32
values), ``q.q_scale()``, ``q.q_zero_point()``, ``q.qscheme()``, and for a scale and zero
point per channel ``q.q_per_channel_scales()``, ``q.q_per_channel_zero_points()``,
``q.q_per_channel_axis()``.

**How one is represented here, and why.**  A quantized tensor is a ``QuantizedTensor``,
a subclass of ``Tensor`` (so ``isinstance(q, learntorch.Tensor)`` holds, as in torch,
where ``type(q)`` is ``torch.Tensor`` itself):

* its array (``_data``) holds the integer *codes* -- int8, uint8 or int32 -- so it takes
  the memory a quantized tensor really takes (``q.element_size()`` is 1 for qint8);
* its ``dtype`` is ``learntorch.qint8`` / ``quint8`` / ``qint32`` (``_dtypes.py``), and the
  scale and zero point (or per-channel scales, zero points and axis) are attributes of the
  tensor -- the codes alone mean nothing without them;
* it refuses every operation that was not written for quantized tensors, with the
  ``NotImplementedError`` torch raises ("Could not run ... with arguments from the
  'QuantizedCPU' backend").  That is why it is a class of its own rather than a plain
  Tensor with a special dtype: a plain Tensor's ``q + 1`` or ``q.sum()`` would happily
  compute on the raw codes and return a wrong number without a word.  What runs: the
  metadata (``shape``, ``size()``, ``stride()``, ...), ``clone``/``detach``/``contiguous``,
  and for one scale per tensor the views that move codes without changing them
  (``reshape``, ``view``, ``flatten``, ``t``, ``transpose``, ``permute``, ``squeeze``,
  ``unsqueeze``, indexing).

Module-level functions (``learntorch.add(q, x)``) do not go through these methods and
are not guarded: call ``.dequantize()`` first.  Quantized tensors live on the CPU.
"""
import inspect

import numpy as np

from . import _dtypes
from ._tensor import Tensor, _init_from_array


class qscheme:
    """``torch.qscheme``: how a quantized tensor shares its scale and zero point."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"learntorch.{self.name}"

    def __reduce__(self):  # pickling by name keeps each scheme a singleton
        return (_scheme_by_name, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
_SCHEMES = {s.name: s for s in (per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                                per_channel_symmetric, per_channel_affine_float_qparams)}


def _scheme_by_name(name):
    return _SCHEMES[name]


def _backend():
    from . import backends
    return backends.current


def _torch_name(dtype):
    """qint8 -> 'QInt8', as torch's messages and type names spell it."""
    return {"qint8": "QInt8", "quint8": "QUInt8", "qint32": "QInt32"}[dtype.name]


class QuantizedTensor(Tensor):
    """A tensor of integer codes with a scale and zero point (see the module docstring).

    Made by ``learntorch.quantize_per_tensor`` / ``quantize_per_channel``, never directly.
    """

    # the same hash as every tensor (defining __eq__ below would otherwise remove it)
    __hash__ = Tensor.__hash__

    @staticmethod
    def _make(codes, dtype, scale=None, zero_point=None, scales=None, zero_points=None,
              axis=None):
        """A quantized tensor around ``codes`` (an int8/uint8/int32 array, not copied):
        per tensor (``scale``, ``zero_point``) or per channel (``scales`` float64 and
        ``zero_points`` int64 tensors along dim ``axis``)."""
        q = QuantizedTensor.__new__(QuantizedTensor)
        _init_from_array(q, codes)
        q._dtype = dtype
        if scales is None:
            q._qscheme, q._scale, q._zero_point = per_tensor_affine, float(scale), int(zero_point)
        else:
            q._qscheme, q._scales, q._zero_points, q._axis = (per_channel_affine, scales,
                                                              zero_points, int(axis))
        return q

    def _like(self, codes):
        """Another quantized tensor with this one's dtype and quantization parameters."""
        if self._qscheme is per_tensor_affine:
            return QuantizedTensor._make(codes, self._dtype, self._scale, self._zero_point)
        return QuantizedTensor._make(codes, self._dtype, scales=self._scales,
                                     zero_points=self._zero_points, axis=self._axis)

    # ------------------------------------------------------------------ what it means
    @property
    def is_quantized(self):
        return True

    def qscheme(self):
        return self._qscheme

    def int_repr(self):
        """The integer codes as a new int8 / uint8 / int32 tensor."""
        return Tensor._wrap(self._data.copy())

    def dequantize(self):
        """float32 values ``scale * (codes - zero_point)``."""
        backend = _backend()
        if self._qscheme is per_tensor_affine:
            values = backend.dequantize_per_tensor(self._data, self._scale, self._zero_point)
        else:
            values = backend.dequantize_per_channel(self._data, self._scales._data,
                                                    self._zero_points._data, self._axis)
        return Tensor._wrap(values)

    def q_scale(self):
        self._expect(per_tensor_affine, "q_scale")
        return self._scale

    def q_zero_point(self):
        self._expect(per_tensor_affine, "q_zero_point")
        return self._zero_point

    def q_per_channel_scales(self):
        self._expect(per_channel_affine, "q_per_channel_scales")
        return self._scales.clone()

    def q_per_channel_zero_points(self):
        self._expect(per_channel_affine, "q_per_channel_zero_points")
        return self._zero_points.clone()

    def q_per_channel_axis(self):
        self._expect(per_channel_affine, "q_per_channel_axis")
        return self._axis

    def _expect(self, scheme, what):
        if self._qscheme is not scheme:
            other = ("q_per_channel_scales(), q_per_channel_zero_points() and "
                     "q_per_channel_axis()" if scheme is per_tensor_affine
                     else "q_scale() and q_zero_point()")
            raise RuntimeError(
                f"Expected quantizer->qscheme() == k{_camel(scheme)} to be true, but got false. "
                f"{what}() needs a {scheme.name} tensor and this one is {self._qscheme.name}: "
                f"read its parameters with {other}")

    # ------------------------------------------------------------------ copies and views
    def clone(self, *, memory_format=None):
        return self._like(self._data.copy())

    def detach(self):
        return self._like(self._data)

    def contiguous(self, memory_format=None):
        return self if self._data.flags.c_contiguous else self._like(
            np.ascontiguousarray(self._data))

    def cpu(self, memory_format=None):
        return self

    def to(self, *args, **kwargs):
        """Only ``to('cpu')`` (a no-op): a quantized tensor changes dtype by dequantize()."""
        target = args[0] if args else kwargs.get("device", kwargs.get("dtype"))
        if str(target) == "cpu" and len(args) + len(kwargs) == 1:
            return self
        raise RuntimeError(
            f"to({target!r}) of a quantized tensor is not supported: quantized tensors live on "
            "the CPU, and their dtype changes only by dequantize() (float32) or "
            "learntorch.quantize_per_tensor (codes)")

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients, and this one is "
                f"{self._dtype} (integer codes): dequantize() it first")
        return self

    def item(self):
        return self.dequantize().item()

    def __float__(self):
        return float(self.dequantize())

    def __int__(self):
        return int(self.dequantize())

    def __deepcopy__(self, memo):
        copy = self.clone()
        memo[id(self)] = copy
        return copy

    def __reduce_ex__(self, protocol):
        if self._qscheme is per_tensor_affine:
            params = (self._scale, self._zero_point)
        else:
            params = (self._scales._data, self._zero_points._data, self._axis)
        return (_rebuild_quantized, (self._data, self._dtype.name, params))

    def numpy(self, force=False):
        raise TypeError(f"Got unsupported ScalarType {_torch_name(self._dtype)}: numpy has no "
                        "quantized types; use q.int_repr().numpy() for the codes or "
                        "q.dequantize().numpy() for the values")

    __array__ = numpy

    def type(self, dtype=None):
        if dtype is None:
            return f"torch.quantized.{_torch_name(self._dtype)}Tensor"
        return self.to(dtype)

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    H = T

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return _quantized_repr(self)


def _camel(scheme):
    return "".join(part.capitalize() for part in scheme.name.split("_"))


def _rebuild_quantized(codes, dtype_name, params):
    dtype = _dtypes._by_name(dtype_name)
    if len(params) == 2:
        return QuantizedTensor._make(codes, dtype, *params)
    scales, zero_points, axis = params
    return QuantizedTensor._make(codes, dtype, scales=Tensor._wrap(scales),
                                 zero_points=Tensor._wrap(zero_points), axis=axis)


# ---------------------------------------------------------------- the views it allows
# One scale for the whole tensor: moving codes around keeps every code's meaning, so
# these run on the codes as a plain integer tensor and wrap the result again.  Per
# channel they would move the channel axis, which learntorch does not track.
_CODE_VIEWS = ("reshape", "view", "flatten", "t", "transpose", "permute", "squeeze",
               "unsqueeze", "expand", "select", "narrow", "__getitem__")


def _code_view(name):
    def view(self, *args, **kwargs):
        if self._qscheme is not per_tensor_affine:
            raise NotImplementedError(
                f"{name.strip('_')}() of a per-channel quantized tensor is not supported in "
                "learntorch (it would move the channel axis): dequantize() it first")
        codes = getattr(Tensor, name)(Tensor._wrap(self._data), *args, **kwargs)
        return self._like(codes._data)
    view.__name__ = view.__qualname__ = name
    view.__doc__ = f"``{name}`` of the codes; the scale and zero point stay."
    return view


for _name in _CODE_VIEWS:
    setattr(QuantizedTensor, _name, _code_view(_name))


# ---------------------------------------------------------------- what it refuses
# metadata and the autograd attributes a tensor without gradients answers harmlessly
_KEPT = frozenset("""size dim ndimension numel nelement element_size stride storage_offset
    is_contiguous is_floating_point is_complex get_device data_ptr untyped_storage
    detach_ register_hook retain_grad register_post_accumulate_grad_hook""".split())
_OPERATORS = frozenset("""add radd iadd sub rsub isub mul rmul imul truediv rtruediv itruediv
    floordiv rfloordiv ifloordiv mod rmod imod pow rpow ipow matmul rmatmul and rand iand or ror
    ior xor rxor ixor neg pos abs invert lt le gt ge eq ne setitem index bool""".split())


def _refused(name):
    op = name.strip("_")

    def refused(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run '{op}' with arguments from the 'QuantizedCPU' backend: "
            f"a quantized tensor ({self._dtype}) holds integer codes, and only a few "
            "operations are defined on them. Call .dequantize() for float32 values (or "
            ".int_repr() for the codes) first")
    refused.__name__ = refused.__qualname__ = name
    return refused


def _refuse_the_rest():
    """Make every Tensor method QuantizedTensor does not define or keep raise (called once
    the package has attached all of them, at the end of ``learntorch/__init__.py``)."""
    for name in dir(Tensor):
        if name in QuantizedTensor.__dict__ or name in _KEPT:
            continue
        attr = inspect.getattr_static(Tensor, name)
        if isinstance(attr, (property, staticmethod, classmethod)) or not callable(attr):
            continue
        if name.startswith("_") and not (name.startswith("__") and name[2:-2] in _OPERATORS):
            continue
        setattr(QuantizedTensor, name, _refused(name))


# ---------------------------------------------------------------- printing, as torch's
def _quantized_repr(q):
    """``tensor([...], size=(...), dtype=..., quantization_scheme=..., scale=..., ...)``:
    the dequantized values, then how they are stored (torch's ``_tensor_str``)."""
    from . import _tensor_repr as text
    values = q.dequantize()._data
    prefix = "tensor("
    if values.size == 0:
        body = "[]"
    else:
        summarize = values.size > text.PRINT_OPTS.threshold
        shown = text._summarized_data(values) if summarize else values
        body = text._array_str(values, len(prefix), summarize,
                               text._Formatter(shown.reshape(-1)))
    suffixes = [f"size={tuple(values.shape)}", f"dtype={q.dtype}",
                f"quantization_scheme={q.qscheme()}"]
    if q.qscheme() is per_tensor_affine:
        suffixes += [f"scale={q.q_scale()}", f"zero_point={q.q_zero_point()}"]
    else:
        suffixes += [f"scale={q.q_per_channel_scales()}",
                     f"zero_point={q.q_per_channel_zero_points()}",
                     f"axis={q.q_per_channel_axis()}"]
    return text._add_suffixes(prefix + body, suffixes, len(prefix))


# ---------------------------------------------------------------- on every other tensor
def _not_quantized(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the '{self.device.type.upper()}' "
            f"backend: {name}() exists for quantized tensors only, and this one is "
            f"{self.dtype}. Make one with learntorch.quantize_per_tensor(x, scale, "
            "zero_point, learntorch.qint8)")
    method.__name__ = method.__qualname__ = name
    return method


def _plain_dequantize(self):
    """A tensor that is not quantized is its own dequantized value (as torch)."""
    return self


#: what ``_tensor_methods.py`` attaches to every Tensor: torch's answers for a tensor that
#: is not quantized
PLAIN_TENSOR_METHODS = {
    "is_quantized": property(lambda self: False),
    "dequantize": _plain_dequantize,
    **{name: _not_quantized(name) for name in (
        "int_repr", "q_scale", "q_zero_point", "qscheme", "q_per_channel_scales",
        "q_per_channel_zero_points", "q_per_channel_axis")},
}
