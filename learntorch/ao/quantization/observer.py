"""Observers: modules that watch the values flowing through them and then choose a scale
and zero point for them (torch 2.13's ``torch.ao.quantization.observer``).

Call an observer on tensors (``observer(x)`` returns ``x`` unchanged and records its
range), then ``observer.calculate_qparams()`` gives ``(scale, zero_point)`` tensors:

* **affine** (``per_tensor_affine``): the recorded [min, max], widened to contain 0, is
  spread over all codes: ``scale = (max - min) / (quant_max - quant_min)``, and the zero
  point is the code of 0.0, ``quant_min - round(min / scale)``;
* **symmetric** (``per_tensor_symmetric``): the range is [-m, m] with m the larger of
  |min| and |max|, so the zero point is the middle code (0 for qint8, 128 for quint8):
  ``scale = m / ((quant_max - quant_min) / 2)``.  Weights are usually symmetric around 0,
  and a zero point of 0 makes the integer product cheaper;
* the scale is at least ``eps`` (float32's), so a constant input still gets a usable one.

``MinMaxObserver`` remembers the smallest and largest value ever seen;
``MovingAverageMinMaxObserver`` a moving average of each batch's min and max (one outlier
batch then moves the range only a little); ``PerChannelMinMaxObserver`` the min and max
of each slice along ``ch_axis``, for one scale per channel.  The arithmetic is float32
tensor arithmetic, as torch's, so scales and zero points equal torch's exactly.
"""
import functools
import warnings

import numpy as np

from ... import _dtypes
from ..._quantized_tensor import (per_channel_affine, per_channel_affine_float_qparams,
                                  per_channel_symmetric, per_tensor_affine, per_tensor_symmetric)
from ...factories import ones, tensor, zeros
from ...nn.modules.module import Module
from ...ops.comparison import maximum, minimum, where
from ...ops.unary import round as round_
from .utils import calculate_qmin_qmax, check_min_max_valid, validate_qmin_qmax

_EPS = float(np.finfo(np.float32).eps)
_PER_TENSOR = (per_tensor_affine, per_tensor_symmetric)
_PER_CHANNEL = (per_channel_affine, per_channel_affine_float_qparams, per_channel_symmetric)
_ALLOWED_DTYPES = (_dtypes.qint8, _dtypes.quint8, _dtypes.qint32, _dtypes.int8,
                   _dtypes.uint8, _dtypes.int16, _dtypes.int32)


class _PartialWrapper:
    """``Observer.with_args(...)``: a factory that makes a fresh observer per call."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, make in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: make()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__() + self.callable_args.__repr__()

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(functools.partial(cls_or_self, **kwargs))


class ObserverBase(Module):
    """An observer: ``forward`` records statistics, ``calculate_qparams`` turns them into
    quantization parameters."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    with_args = classmethod(_with_args)


class UniformQuantizationObserverBase(ObserverBase):
    """An observer of a uniform grid of codes: scale and zero point from a min and a max."""

    def __init__(self, dtype=_dtypes.quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS,
                 is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for "
                          "observers. reduce_range will be deprecated in a future release of "
                          "PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", tensor([eps]))
        if qscheme not in _PER_TENSOR + _PER_CHANNEL:
            raise AssertionError("Default Observer only works for per_tensor_affine, "
                                 "per_tensor_symmetric, per_channel_affine, "
                                 "per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        if dtype not in _ALLOWED_DTYPES:
            raise AssertionError(f"Default Observer only works for {_ALLOWED_DTYPES} data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, dtype, reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """(scale, zero_point) from the recorded minimum and maximum (per tensor: 0-d; per
        channel: one per channel), exactly as torch computes them."""
        if not check_min_max_valid(min_val, max_val):
            return tensor([1.0]), tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = minimum(min_val, zeros(min_val.shape))   # the range must contain 0
        max_val_pos = maximum(max_val, zeros(max_val.shape))
        zero_point = zeros(min_val_neg.shape, dtype=_dtypes.int64)
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            max_val_pos = maximum(-min_val_neg, max_val_pos)
            scale = maximum(max_val_pos / (float(quant_max - quant_min) / 2), self.eps)
            if self.dtype in (_dtypes.quint8, _dtypes.uint8):
                middle = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = zero_point.new_full(zero_point.shape, middle)
        elif self.qscheme is per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = where(scale > self.eps, scale, ones(scale.shape))
            zero_point = -1 * min_val / scale
        else:
            scale = maximum((max_val_pos - min_val_neg) / float(quant_max - quant_min),
                            self.eps)
            zero_point = quant_min - round_(min_val_neg / scale).to(_dtypes.int32)
            zero_point = zero_point.clamp(quant_min, quant_max)
        if scale.ndim == 0:  # one-element tensors, as FakeQuantize's defaults
            scale = tensor([float(scale)], dtype=scale.dtype)
        if zero_point.ndim == 0:
            zero_point = tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


class MinMaxObserver(UniformQuantizationObserverBase):
    """Records the smallest and largest value of every tensor it sees (per tensor)."""

    def __init__(self, dtype=_dtypes.quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS,
                 is_dynamic=False, **kwargs):
        if qscheme not in _PER_TENSOR:
            raise NotImplementedError("MinMaxObserver's qscheme only support "
                                      "torch.per_tensor_symmetric and torch.per_tensor_affine.")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))
        if qscheme is per_tensor_symmetric and reduce_range and dtype is _dtypes.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for "
                                      "quint8")

    def forward(self, x_orig):
        """Record the running minimum and maximum of ``x_orig``; return it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        self.min_val.copy_(minimum(x.amin(), self.min_val))
        self.max_val.copy_(maximum(x.amax(), self.max_val))
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        self.min_val.copy_(tensor(float("inf")))
        self.max_val.copy_(tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Records a moving average of each tensor's min and max:
    ``min <- min + averaging_constant * (min(x) - min)`` (the first tensor sets it)."""

    def __init__(self, averaging_constant=0.01, dtype=_dtypes.quint8,
                 qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        if qscheme not in _PER_TENSOR:
            raise NotImplementedError("MovingAverageMinMaxObserver's qscheme only support "
                                      "torch.per_tensor_symmetric and torch.per_tensor_affine. "
                                      f"but got: {qscheme}")
        self.averaging_constant = averaging_constant
        if is_dynamic and averaging_constant != 1:
            raise NotImplementedError("MovingAverageMinMaxObserver doesn't support dynamic "
                                      "quantization for averaging constant of "
                                      f"{averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps,
                         is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            min_val, max_val = x.amin(), x.amax()
        else:
            min_val = min_val + self.averaging_constant * (x.amin() - min_val)
            max_val = max_val + self.averaging_constant * (x.amax() - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Records the min and max of every slice along ``ch_axis`` (e.g. each output row of a
    Linear weight, ch_axis=0): one scale and zero point per channel."""

    def __init__(self, ch_axis=0, dtype=_dtypes.quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False, **kwargs):
        if qscheme not in _PER_CHANNEL:
            raise NotImplementedError("PerChannelMinMaxObserver's qscheme only support "
                                      "torch.per_channel_symmetric, torch.per_channel_affine "
                                      "and torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("PerChannelMinMaxObserver doesn't support dynamic "
                                      "quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", tensor([]))
        self.register_buffer("max_val", tensor([]))
        if qscheme is per_channel_symmetric and reduce_range and dtype is _dtypes.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for "
                                      "quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        order = list(range(x.ndim))
        order[self.ch_axis], order[0] = 0, self.ch_axis
        rows = x.permute(order).to(self.min_val.dtype).flatten(start_dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = rows.amin(dim=1), rows.amax(dim=1)
        else:
            min_val = minimum(rows.amin(dim=1), self.min_val)
            max_val = maximum(rows.amax(dim=1), self.max_val)
        self.min_val, self.max_val = min_val, max_val  # (buffers: torch resizes them in place)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        self.min_val, self.max_val = tensor([]), tensor([])


class PlaceholderObserver(ObserverBase):
    """Observes nothing: carries a configuration (the dtype to quantize activations to, and
    whether that happens at run time, ``is_dynamic``) to the quantized module."""

    def __init__(self, dtype=_dtypes.float32, custom_op_name="", compute_dtype=None,
                 quant_min=None, quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = per_tensor_affine if qscheme is None else qscheme
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.eps = _EPS if eps is None else eps
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=_dtypes.qint8,
                                                   qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=_dtypes.qint8, qscheme=per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=_dtypes.quint8, quant_min=0, quant_max=255, is_dynamic=True)
