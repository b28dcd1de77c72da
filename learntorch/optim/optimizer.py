"""``Optimizer``: the base class of SGD, Adam and friends -- parameter groups and state.

An optimizer holds two things, exactly as torch's does:

* ``param_groups`` -- a list of dicts.  Each has ``"params"`` (the tensors to
  update) and every option (``lr``, ``momentum``, ...); an option missing from a
  group you pass takes the optimizer's default.  Different groups can train
  different parts of a model at different learning rates.
* ``state`` -- a ``defaultdict(dict)`` keyed by parameter: what the algorithm
  remembers between steps (``momentum_buffer``, ``exp_avg``, ``step``, ...).

``state_dict()`` replaces each parameter by its position (0, 1, 2, ... across
all groups, in order), so a checkpoint holds numbers, tensors and lists only and
can be loaded into a fresh optimizer over a fresh model built the same way.

A subclass implements ``step(closure=None)``: it calls the closure (with
gradients enabled) if one was given, then, under ``no_grad``, updates each
parameter that has a ``.grad`` -- parameters whose ``.grad`` is None are skipped,
as in torch.  Every ``step`` defined by a subclass is wrapped so that hooks
registered with ``register_step_pre_hook``/``register_step_post_hook`` run
around it (a widget can record the trajectory of the parameters that way).
"""
import collections
import contextlib
import copy
import functools
import itertools
import warnings

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import RemovableHandle


class _RequiredParameter:
    """The default of an option that has none (``lr`` of a learner's own optimizer)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self._step_pre_hooks = []
        self._step_post_hooks = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {params._type_name()}: pass a list, e.g. [w] or "
                "model.parameters()")
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list: was it given a generator "
                             "that had already been consumed (model.parameters() used twice)? "
                             "Pass list(model.parameters()) or call model.parameters() again")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_pre_hooks", [])
        self.__dict__.setdefault("_step_post_hooks", [])
        # checkpoints from older versions (torch's too): options added since then take
        # their defaults, and a step counter saved as a plain number becomes a tensor
        for group in self.param_groups:
            for name, default in self.defaults.items():
                group.setdefault(name, default)
            for p in group["params"]:
                param_state = self.state.get(p)
                if param_state and "step" in param_state and \
                        not isinstance(param_state["step"], Tensor):
                    step = new_step(group.get("fused"))
                    step._data[...] = float(param_state["step"])
                    param_state["step"] = step

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n"
                            for key in sorted(group) if key != "params")
        return text + ")"

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group):
        """Add a group ``{"params": [...], option: value, ...}``; missing options take defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)

        # model.named_parameters() gives (name, tensor) pairs: keep the names too
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names

        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{_typename(p)}")
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or
                                                                       p.retains_grad):
                raise ValueError(
                    "can't optimize a non-leaf Tensor: this one was computed (its grad_fn is "
                    f"{type(p.grad_fn).__name__}), so a step would be lost at the next forward. "
                    "Optimize the leaf tensors it was computed from, or make it a leaf with "
                    "x.detach().requires_grad_()")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}: pass {name}=... to the "
                                 "optimizer or put it in the group's dict")
            param_group.setdefault(name, default)

        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group: each "
                             "parameter can belong to one group only (its options must be "
                             "unambiguous)")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none=True):
        """Forget the gradients: ``p.grad = None`` (default) or fill them with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss.

        The built-in optimizers each define ``_update(p, group)``, their rule for
        one parameter; your own optimizer may override ``step`` itself, as in torch.
        """
        loss = self._evaluate(closure)
        with updating():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def _update(self, p, group):
        raise NotImplementedError(
            f"{type(self).__name__} must define step() (or _update(p, group) for one parameter)")

    def _evaluate(self, closure):
        """The loss from ``closure()``, run with gradients on (it usually calls backward)."""
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook):
        """Call ``hook(optimizer, args, kwargs)`` before each step; it may return (args, kwargs)."""
        self._step_pre_hooks.append(hook)
        return RemovableHandle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Call ``hook(optimizer, args, kwargs)`` after each step."""
        self._step_post_hooks.append(hook)
        return RemovableHandle(self._step_post_hooks, hook)

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Parameters are numbered in the order the groups list them; the state
        tensors are the optimizer's own (not copies), as in torch.
        """
        index_of = {}
        packed_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict):
        """Load what ``state_dict()`` gave, into an optimizer over parameters of the same shapes.

        Groups are matched by position and must have the same sizes.  Floating
        state tensors take their parameter's dtype (``step`` keeps float32).
        Unlike torch, which reuses a loaded tensor when no cast is needed, the
        state is always copied: two optimizers never share a buffer.
        """
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups "
                             f"({len(saved_groups)}) than this optimizer ({len(groups)})")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group (saved sizes "
                f"{[len(s['params']) for s in saved_groups]}, this optimizer's "
                f"{[len(g['params']) for g in groups]})")
        id_map = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        state = collections.defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _cast_state(id_map[k], v)
            else:
                state[k] = v  # state of no parameter: kept as it is, like torch

        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})


def _cast_state(param, value, key=None):
    """A copy of ``value`` with floating tensors in ``param``'s dtype (except ``step``)."""
    if isinstance(value, Tensor):
        keep = key == "step" or not param.is_floating_point()
        dtype = value._data.dtype if keep else param._data.dtype
        return Tensor._wrap(value._data.astype(dtype, copy=True))
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj._type_name()
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def _with_step_hooks(step):
    """``step`` wrapped: pre hooks, the step, then post hooks; marks the optimizer as stepped.

    As in torch, hooks get ``(optimizer, args, kwargs)`` where ``args`` starts with
    the optimizer itself; a pre hook may return replacement ``(args, kwargs)``.
    """
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        if getattr(self, "_inside_step", False):  # super().step() from a subclass's step
            return step(*args, **kwargs)
        for hook in list(self._step_pre_hooks):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        self._inside_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._inside_step = False
        self._opt_called = True  # the lr schedulers check that step() came first
        for hook in list(self._step_post_hooks):
            hook(self, args, kwargs)
        return out
    return wrapper


# ---------------------------------------------------------------------- shared helpers
@contextlib.contextmanager
def updating():
    """Where every update runs: under no_grad, with numpy quiet about inf and nan.

    A non-finite gradient makes non-finite parameters, as in torch, which does
    not warn either; the loss going to nan is the signal a learner sees.
    """
    with grad_mode.no_grad(), np.errstate(all="ignore"):
        yield


def check_lr(lr):
    """torch's checks on a learning rate (a number, or a 1-element tensor)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_fused(fused, foreach, differentiable):
    if differentiable:
        raise NotImplementedError(
            "differentiable=True (autograd through the optimizer step) is not supported by "
            "learntorch; leave it False")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def scalar(x):
    """A hyperparameter as a Python float (a 1-element tensor lr is allowed, as in torch)."""
    return float(x.item()) if isinstance(x, Tensor) else x


def new_step(fused=None):
    """The ``step`` counter of a parameter's state: a 0-dim float tensor, as torch keeps it.

    float32 -- float64 when that is the default dtype, unless ``fused`` (torch's rule).
    """
    wide = not fused and _dtypes.get_default_dtype() is _dtypes.float64
    return Tensor._wrap(np.zeros((), dtype=np.float64 if wide else np.float32))


def increment(step_t):
    """``step_t += 1`` (under no_grad, as every update); returns the new count as a float."""
    step_t.add_(1)
    return step_t.item()


def zeros_state(p):
    """A state buffer like ``torch.zeros_like(p)``: same shape, dtype and memory layout."""
    return Tensor._wrap(np.zeros_like(p._data))


def changed(*tensors):
    """Record an in-place update of each tensor (autograd's version counters see it)."""
    for t in tensors:
        t._version_counter[0] += 1


Optimizer.step = _with_step_hooks(Optimizer.step)  # subclasses' own steps are wrapped on definition
