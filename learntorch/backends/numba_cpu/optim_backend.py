"""The optimizer updates as fused Numba kernels: ``NumbaBackend``'s overrides of the
``OptimizerFamily`` methods (``backends/numpy_families/optim.py``).

The numpy update of an Adam step runs about a dozen whole-array operations, each a pass
over memory and often a temporary array; the kernel (``optim_kernels.py``) does the
whole update of one element in registers, in one pass.  Same operations, same order,
same bits.

Which one runs, per parameter (``fused`` is the optimizer's option, as in torch):

* ``fused=False``: numpy, always;
* ``fused=True``: the kernel whenever the arrays allow it;
* ``fused=None`` (the default -- and always for RMSprop, which has no such option in
  torch): the kernel once the parameter has ``layer_min_sizes[name]`` elements
  (``tuning.json``).  Below that numpy is as fast, and small demos never import Numba.

"Allow it" means: numpy arrays of float32 or float64, one dtype, C-contiguous and
writeable, for the parameter, its gradient and its state.  Anything else (float16, a
transposed parameter, a device array) takes the numpy reference, which gives the same
values.  The kernels are serial, so they are safe in forked processes too.

Crossover (numpy time / kernel time for one ``step()`` on one float32 parameter, kernel
compiled, default options, SGD with momentum), measured on the 2-core machine of
BENCHMARKS.md with ``python -m learntorch.optim._crossover``:

    elements      1e2    1e3    1e4    3e4    1e5    1e6
    sgd           0.72   0.81   1.01   1.24   1.91   2.0
    adam          0.90   1.04   1.57   2.53   4.06   13.8
    rmsprop       0.78   0.89   1.39   2.27   4.17   5.9
    adagrad       0.87   1.04   1.58   2.60   4.00   7.5
"""
import numpy as np

from ..numpy_families.optim import (adagrad_kernel_scalars, adam_kernel_scalars,
                                    rmsprop_kernel_scalars, sgd_kernel_scalars)
from . import tuning
from .loader import kernels

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

#: the kernels' boolean options (every other scalar is cast to the arrays' dtype)
FLAGS = frozenset({"nesterov", "maximize", "first", "amsgrad", "decoupled", "centered"})


def run_kernel(name, *arrays, **scalars):
    """Call kernel ``optim_kernels.<name>`` on flattened ``arrays`` (None: an empty
    placeholder for a buffer it will not touch) and ``scalars``.

    Float scalars are cast to the arrays' dtype first, so that float32 parameters
    are computed in float32 as numpy does (numpy casts a Python float the same way).
    """
    dtype = arrays[0].dtype.type
    placeholder = np.empty(0, arrays[0].dtype)
    flat = [placeholder if a is None else a.reshape(-1) for a in arrays]
    cast = {k: v if k in FLAGS else dtype(v) for k, v in scalars.items()}
    getattr(kernels("optim_kernels"), name)(*flat, **cast)


class NumbaOptimizers:
    #: smallest parameter (elements) a kernel updates when ``fused`` is None (tuning.json)
    layer_min_sizes = tuning.load()["layer_min_sizes"]

    def _fused_kernel_serves(self, name, fused, arrays):
        """True when kernel ``name`` should update ``arrays`` (see the module docstring)."""
        if fused is False:
            return False
        first = arrays[0]
        if type(first) is not np.ndarray or first.dtype not in _FLOATS:
            return False
        if fused is None and first.size < max(self.layer_min_sizes[name], 1):
            return False
        for a in arrays:
            if (type(a) is not np.ndarray or a.dtype != first.dtype or not a.flags.c_contiguous
                    or not a.flags.writeable):
                return False
        return True

    def sgd_update(self, param, grad, momentum_buffer, *, lr, weight_decay, momentum, dampening,
                   nesterov, maximize, fused=None):
        arrays = (param, grad) if momentum_buffer is None else (param, grad, momentum_buffer)
        if not self._fused_kernel_serves("sgd", fused, arrays):
            return super().sgd_update(param, grad, momentum_buffer, lr=lr,
                                      weight_decay=weight_decay, momentum=momentum,
                                      dampening=dampening, nesterov=nesterov,
                                      maximize=maximize, fused=fused)
        first = momentum != 0 and momentum_buffer is None
        if first:
            momentum_buffer = np.empty_like(grad)  # the kernel fills it
        run_kernel("sgd", param, grad, momentum_buffer,
                   **sgd_kernel_scalars(lr, weight_decay, momentum, dampening, nesterov,
                                        maximize, first))
        return momentum_buffer

    def adam_update(self, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, step, lr, beta1,
                    beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay,
                    fused=None):
        arrays = (param, grad, exp_avg, exp_avg_sq) + ((max_exp_avg_sq,) if amsgrad else ())
        if not self._fused_kernel_serves("adam", fused, arrays):
            return super().adam_update(
                param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step=step, lr=lr,
                beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                maximize=maximize, decoupled_weight_decay=decoupled_weight_decay, fused=fused)
        run_kernel("adam", param, grad, exp_avg, exp_avg_sq,
                   max_exp_avg_sq if amsgrad else None,
                   **adam_kernel_scalars(param.dtype, step, lr, beta1, beta2, eps, weight_decay,
                                         amsgrad, maximize, decoupled_weight_decay))

    def rmsprop_update(self, param, grad, square_avg, grad_avg, momentum_buffer, *, lr, alpha,
                       eps, weight_decay, momentum, centered, maximize, fused=None):
        arrays = tuple(a for a in (param, grad, square_avg, grad_avg, momentum_buffer)
                       if a is not None)
        if not self._fused_kernel_serves("rmsprop", fused, arrays):
            return super().rmsprop_update(param, grad, square_avg, grad_avg, momentum_buffer,
                                          lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                          momentum=momentum, centered=centered,
                                          maximize=maximize, fused=fused)
        run_kernel("rmsprop", param, grad, square_avg, grad_avg, momentum_buffer,
                   **rmsprop_kernel_scalars(param.dtype, lr, alpha, eps, weight_decay, momentum,
                                            centered, maximize))

    def adagrad_update(self, param, grad, state_sum, *, step, lr, lr_decay, weight_decay, eps,
                       maximize, fused=None):
        if not self._fused_kernel_serves("adagrad", fused, (param, grad, state_sum)):
            return super().adagrad_update(param, grad, state_sum, step=step, lr=lr,
                                          lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                                          maximize=maximize, fused=fused)
        run_kernel("adagrad", param, grad, state_sum,
                   **adagrad_kernel_scalars(step, lr, lr_decay, weight_decay, eps, maximize))
