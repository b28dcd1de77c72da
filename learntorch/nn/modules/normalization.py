"""Normalisation layers: ``BatchNorm1d/2d/3d``, ``LayerNorm`` and ``GroupNorm``.

Batch norm normalises each channel with the statistics of the current batch
while training, and keeps running averages of them (the buffers
``running_mean``, ``running_var``, ``num_batches_tracked``) for eval mode,
when a batch may be a single example.  The average is exponential with
factor ``momentum`` (new = (1 - momentum) * old + momentum * batch), or the
plain mean of all batches seen when ``momentum=None``.

Layer norm normalises each sample over its last dims, group norm each sample
over groups of channels; neither has running state: they behave the same in
training and eval (and do not depend on the batch size).
"""
import numbers

from ... import _dtypes, factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _affine_parameters(module, shape, affine, bias, device, dtype):
    """``module.weight`` and ``module.bias`` of ``shape`` (ones and zeros after
    ``_reset_affine``), or None where ``affine``/``bias`` say there are none."""
    kw = {"device": device, "dtype": dtype}
    if affine:
        module.weight = Parameter(factories.empty(shape, **kw))
        if bias:
            module.bias = Parameter(factories.empty(shape, **kw))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module):
    """The identity scale and shift: weight ones, bias zeros (torch's initialisation)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _BatchNorm(Module):
    """What BatchNorm1d/2d/3d share; they differ only in the input dims they accept."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = {"device": device, "dtype": dtype}
        _affine_parameters(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", factories.zeros(num_features, **kw))
            self.register_buffer("running_var", factories.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 factories.tensor(0, dtype=_dtypes.int64,
                                                  device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # momentum None: the running stats are the mean over all batches so far
                factor = 1.0 / float(self.num_batches_tracked)
        # batch statistics while training, and also in eval when no running stats are kept
        use_batch_stats = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _check_input_dim(self, input):
        if input.dim() not in self._input_dims:
            raise ValueError(f"expected {self._expected} input (got {input.dim()}D input)")


class BatchNorm1d(_BatchNorm):
    """For (N, C) or (N, C, L) inputs."""

    _input_dims, _expected = (2, 3), "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """For (N, C, H, W) inputs: each channel over the batch and every pixel."""

    _input_dims, _expected = (4,), "4D"


class BatchNorm3d(_BatchNorm):
    """For (N, C, D, H, W) inputs."""

    _input_dims, _expected = (5,), "5D"


class LayerNorm(Module):
    """Normalise over the last dims (``normalized_shape``), then scale and shift elementwise."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise each sample over ``num_groups`` groups of channels (each group with all its
    positions), then scale and shift each channel: for (N, C, *) inputs."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None,
                 *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
