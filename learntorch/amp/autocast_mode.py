"""``autocast``: run each op in the precision its kind needs, without changing the model.

    with torch.autocast("cpu"):            # bfloat16 on the CPU, float16 on cuda
        out = model(x)                     # linear/conv in bfloat16, losses in float32
        loss = loss_fn(out, y)
    loss.backward()                        # gradients come back in each leaf's dtype

How it works here: every op is one ``Function`` and every call goes through
``Function.apply`` -- the one dispatch point (DESIGN.md §4).  While an autocast region is
on, ``apply`` hands each op's inputs to this module's hook (``_cast_for``, installed with
``autograd.function.set_autocast_hook``), which looks the Function class up in the active
policy table (``_policy.py``) and casts the eligible tensor inputs -- floating, on the
autocast device, not float64 -- before the op runs.  The casts are ordinary ``.to(dtype)``
ops, recorded on the tape, so the backward pass casts each gradient back: a float32 weight
used in a bfloat16 matmul gets a float32 ``.grad``.

Outside any autocast region the hook is None: autocast costs ``apply`` one comparison.

The state (enabled and dtype per device type, the nesting depth, the weight-cast cache) is
per thread, as torch's: a region entered in one thread does not cast another thread's ops,
and a new thread starts with autocast off.  The hook is process-wide: it is on while any
thread has a region on, and passes through the ops of the others.
"""
import functools
import threading
import warnings

from .. import _dtypes
from ..autograd import function as _function
from ..ops.shape import to_dtype  # x.to(dtype), without .to's argument parsing
from . import _policy

#: the autocast dtype of each device type when no region says otherwise (torch's defaults)
_DEFAULT_DTYPES = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16}
_SUPPORTED = ("cpu", "cuda")
#: the dtypes autocast casts: floating, not float64 (torch's rule)
_ELIGIBLE = frozenset(d for d in _dtypes.ALL_DTYPES
                      if d.is_floating_point and d is not _dtypes.float64)


class _ThreadState(threading.local):
    """One thread's autocast state (``threading.local``: each thread sees its own, made by
    ``__init__`` the first time it looks)."""

    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = dict(_DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}    # id(float32 leaf weight) -> (the weight, its cast): reused in a region
        self.active = {}   # Function class -> its caster (``_active_table``), enabled devices


_State = _ThreadState()  # the calling thread's state


class _Shared:
    """What all threads share: the resolved tables and how many threads need the hook."""
    tables = {}          # device type -> {Function class: policy}, resolved on first use
    built = {}           # (cpu dtype or False, cuda dtype or False) -> its ``active`` table
    threads_on = 0       # how many threads have an autocast device enabled
    lock = threading.Lock()


# ---------------------------------------------------------------- torch's state functions
def _check_device(device_type):
    if device_type not in _SUPPORTED:
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}' (learntorch supports {', '.join(_SUPPORTED)})")
    return device_type


def is_autocast_available(device_type):
    """True for the device types autocast knows: 'cpu' and 'cuda'."""
    return device_type in _SUPPORTED


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (torch's default without one: 'cuda')."""
    return _State.enabled[_check_device(device_type or "cuda")]


def set_autocast_enabled(device_type, enabled):
    _State.enabled[_check_device(device_type)] = bool(enabled)
    _rebuild()


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (bfloat16 for 'cpu', float16 for
    'cuda' unless an enclosing region chose another)."""
    return _State.dtype[_check_device(device_type)]


def set_autocast_dtype(device_type, dtype):
    _State.dtype[_check_device(device_type)] = dtype
    _rebuild()


def is_autocast_cache_enabled():
    return _State.cache_enabled


def set_autocast_cache_enabled(enabled):
    _State.cache_enabled = bool(enabled)


def clear_autocast_cache():
    _State.cache.clear()


def autocast_increment_nesting():
    _State.nesting += 1
    return _State.nesting


def autocast_decrement_nesting():
    _State.nesting -= 1
    return _State.nesting


# ---------------------------------------------------------------- the hook at Function.apply
def _active_table(enabled):
    """{Function class: caster} for the (device type, dtype) pairs that are ``enabled``: each
    caster takes an op's arguments and returns them cast as every enabled device's policy for
    that class says.  Built once per combination (``_rebuild``), so that an op in a region
    costs one dictionary look-up and one call: the policy's decisions that do not depend on
    the arguments (the target dtype of LOWER and FP32 ops) are taken here, not per call."""
    rules = {}
    for device_type, dtype in enabled:
        if device_type not in _Shared.tables:
            _Shared.tables[device_type] = _policy.resolve(device_type)
        for cls, policy in _Shared.tables[device_type].items():
            rules.setdefault(cls, []).append((policy, device_type, dtype))
    return {cls: _caster(cls, device_rules) for cls, device_rules in rules.items()}


def _caster(cls, device_rules):
    """``args -> args`` for one Function class: one step per enabled device type."""
    steps = [_step(cls, *rule) for rule in device_rules]
    if len(steps) == 1:
        return steps[0]

    def cast_all(args):
        for step in steps:
            args = step(args)
        return args
    return cast_all


def _step(cls, policy, device_type, dtype):
    """The cast one device's ``policy`` makes of ``cls``'s arguments."""
    if policy == _policy.BANNED:
        def banned(args):
            raise RuntimeError(_policy.BANNED_MESSAGES[cls.__name__])
        return banned
    if policy == _policy.PROMOTE:
        return lambda args: _cast_inputs(cls, policy, device_type, dtype, args)
    to = dtype if policy == _policy.LOWER else _dtypes.float32

    def cast_to_fixed_dtype(args):  # LOWER and FP32: every eligible input to ``to``
        for a in args:
            d = getattr(a, "_dtype", None)
            if d is not to and d in _ELIGIBLE and a._device.type == device_type:
                break
        else:
            return args  # nothing to cast (an op on outputs of 16-bit ops, say)
        return tuple(_cached_cast(a, to, dtype) if _eligible(a, device_type) else a
                     for a in args)
    return cast_to_fixed_dtype


def _rebuild():
    """Recompute which Function classes this thread's enabled devices cast, and put the hook
    in ``Function.apply`` while any thread has a device enabled (off again when none has)."""
    enabled, dtypes = _State.enabled, _State.dtype
    key = (enabled["cpu"] and dtypes["cpu"], enabled["cuda"] and dtypes["cuda"])  # (False: off)
    active = _Shared.built.get(key)
    if active is None:  # built once per combination of devices and dtypes: regions are cheap
        active = _Shared.built[key] = _active_table(
            tuple((device, dtype) for device, dtype in zip(_SUPPORTED, key) if dtype))
    if bool(active) is bool(_State.active):  # (the commonest case: a region inside a region)
        _State.active = active
        return
    with _Shared.lock:
        _Shared.threads_on += bool(active) - bool(_State.active)
        _State.active = active
        _function.set_autocast_hook(_cast_for if _Shared.threads_on > 0 else None)


def _cast_for(cls, args):
    """``args`` cast as the enabled devices' policies for ``cls`` say (unchanged if none)."""
    cast = _State.active.get(cls)
    return args if cast is None else cast(args)


def _eligible(x, device_type):
    """torch's rule: a floating tensor on the autocast device that is not float64."""
    return getattr(x, "_dtype", None) in _ELIGIBLE and x._device.type == device_type


def _cast_inputs(cls, policy, device_type, dtype, args):
    """The PROMOTE policy: float32 if any eligible input is float32, else the autocast dtype."""
    to = dtype
    for a in args:
        if _eligible(a, device_type):
            to = _prioritize(to, a._dtype, dtype)
    return tuple(_cached_cast(a, to, dtype) if _eligible(a, device_type) else a for a in args)


def _prioritize(current, nxt, lower):
    """torch's ``at::autocast::prioritize``: float32 wins over the 16-bit dtype; the other
    16-bit dtype (float16 in a bfloat16 region) has no rule and is an error."""
    if current is _dtypes.float32 or nxt is _dtypes.float32:
        return _dtypes.float32
    if current is lower and nxt is lower:
        return lower
    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")


def _cached_cast(x, to, lower_dtype):
    """``x.to(to)``; a float32 leaf weight cast to the region's 16-bit dtype is cast once per
    region (torch caches these "model weight" casts: the same weight in several ops, or a
    forward pass in a loop inside one region, costs one cast)."""
    if x._dtype is to:
        return x
    if not (to is lower_dtype and x._dtype is _dtypes.float32 and x._requires_grad
            and x._grad_fn is None and x._base is None and _State.cache_enabled):
        return to_dtype(x, to)
    hit = _State.cache.get(id(x))
    if hit is not None and hit[0] is x and hit[1]._dtype is to:
        return hit[1]
    cast = to_dtype(x, to)
    _State.cache[id(x)] = (x, cast)
    return cast


# ---------------------------------------------------------------- the context manager
class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context
    manager (and decorator) in whose region ops run in the precision ``_policy.py`` gives them.

    ``dtype`` defaults to the device's autocast dtype (bfloat16 for 'cpu', float16 for
    'cuda'); regions nest, and ``enabled=False`` turns autocast off inside an enclosing one.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _check_device(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else \
            _dtypes.to_dtype(dtype)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else \
            cache_enabled
        if enabled:
            if self.device == "cuda":
                from .. import cuda
                if not cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (_dtypes.bfloat16, _dtypes.float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    # (the state functions above, on this thread's state read once: a training loop enters
    # and leaves a region every step)
    def __enter__(self):
        state, device = _State, self.device
        self.prev_cache_enabled = state.cache_enabled
        self.prev, self.prev_fastdtype = state.enabled[device], state.dtype[device]
        state.enabled[device] = self._enabled
        state.dtype[device] = self.fast_dtype
        state.nesting += 1
        state.cache_enabled = bool(self._cache_enabled)
        _rebuild()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        state, device = _State, self.device
        state.nesting -= 1
        if state.nesting == 0:  # leaving the outermost region drops the cached weight casts
            state.cache.clear()
        state.enabled[device] = self.prev
        state.dtype[device] = self.prev_fastdtype
        state.cache_enabled = self.prev_cache_enabled
        _rebuild()
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast
