"""``GradScaler``: loss scaling, so that small float16 gradients do not underflow to zero.

float16's smallest positive number is 6e-8; gradients of a deep model are often smaller
and would become 0.  The scaler multiplies the loss by a large factor S (``scale``), so that
every gradient is S times larger during backward; before the optimizer uses them it divides
them by S again (``unscale_``).  If S was too large some gradient overflowed to inf/nan:
that step is skipped, and S shrinks.  The update rule (``update``), torch's
``_amp_update_scale_``:

* a step found an inf or nan:        S *= backoff_factor (0.5), and the count of good steps is 0;
* else one more good step; after ``growth_interval`` (2000) good steps in a row:
                                     S *= growth_factor (2.0) -- unless that is inf -- count 0.

The usual loop::

    scaler = torch.amp.GradScaler("cuda")
    for x, y in data:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()     # gradients of S * loss
        scaler.step(optimizer)            # unscale_, then optimizer.step() unless inf/nan
        scaler.update()                   # the next S
"""
import collections
import enum
import warnings

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..autograd import grad_mode


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """Multiply each gradient by ``inv_scale`` in place, and set ``found_inf`` (a 0-d float32
    tensor) to 1.0 if any of them holds an inf or nan (torch's
    ``_amp_foreach_non_finite_check_and_unscale_``)."""
    for g in grads:
        if not bool(g.isfinite().all()):
            found_inf.fill_(1.0)
        g.mul_(inv_scale)


def update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                  growth_interval):
    """torch's ``_amp_update_scale_``, on the 0-d tensors ``scale`` (float32) and
    ``growth_tracker`` (int32): back off after an inf/nan, grow after ``growth_interval``
    good steps in a row.  As in torch's kernel, the float32 scale times the (double) factor
    is computed in double and rounded to float32 once."""
    s = scale.item()
    if found_inf.item():
        scale.fill_(s * backoff_factor)
        growth_tracker.fill_(0)
        return
    successful = growth_tracker.item() + 1
    if successful == growth_interval:
        grown = np.float32(s * growth_factor)
        if np.isfinite(grown):
            scale.fill_(float(grown))
        growth_tracker.fill_(0)
    else:
        growth_tracker.fill_(successful)


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``: see the module's docstring."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None            # made by the first scale(), on its tensor's device
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = collections.defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, device):
        from ..factories import full
        self._scale = full((), self._init_scale, dtype=_dtypes.float32, device=device)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtypes.int32,
                                    device=device)

    # ---------------------------------------------------------------- the loop's three calls
    def scale(self, outputs):
        """``outputs * S``: a tensor, or each tensor of a (nested) list/tuple of them."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by S (in place) and note whether any is inf/nan."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # 1/S computed in float64 and rounded to float32, as torch does
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = self._scale.new_zeros(())  # float32, on the scale's device
        grads = []
        with grad_mode.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if param.grad.dtype is _dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grads.append(param.grad)
            non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        state["found_inf_per_device"] = {self._scale.device: found_inf}
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``unscale_`` (unless done already), then ``optimizer.step()`` -- skipped when a
        gradient was inf/nan.  Returns what ``optimizer.step`` returned (None if skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """The next S: backed off if any optimizer's step was skipped this iteration, grown
        after ``growth_interval`` good ones; or ``new_scale`` when given."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if (new_scale.device.type != self._device or new_scale.numel() != 1
                        or new_scale.requires_grad):
                    raise AssertionError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0].clone()
            for found_inf in found_infs[1:]:
                combined += found_inf
            update_scale_(scale, growth_tracker, combined, self._growth_factor,
                          self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = collections.defaultdict(_refresh_per_optimizer_state)

    # ---------------------------------------------------------------- reading and setting
    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker (empty when
        disabled); take it after ``update``."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
