"""``nn.Module``: the base class of every layer and model.

A Module keeps three ordered registries, filled by plain attribute
assignment (``__setattr__`` does the sorting):

* ``_parameters`` -- Parameters (what an optimizer trains),
* ``_buffers``    -- tensors that are state but not trained (BatchNorm's running mean),
* ``_modules``    -- child Modules.

Everything else follows from walking them: ``parameters()`` and
``named_parameters()`` (names like ``"0.weight"``), ``state_dict()``,
``to()``, ``train()/eval()``, ``zero_grad()``.  ``module(x)`` runs the
forward pre-hooks, ``forward``, then the forward hooks.
"""
import collections
import itertools

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function, RemovableHandle
from ..parameter import Parameter, Buffer

_IncompatibleKeys = collections.namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _IncompatibleKeysResult(_IncompatibleKeys):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


class Module:
    """Base class for all neural network modules; subclass it and define ``forward``."""

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments; "
                            "Module.__init__ takes none (call super().__init__() first)")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_hooks", {})
        object.__setattr__(self, "_forward_pre_hooks", {})
        object.__setattr__(self, "_backward_hooks", {})

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ registration
    def _check_initialized(self, name):
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() call: call "
                "super().__init__() at the start of your __init__")

    def register_parameter(self, name, param):
        self._check_initialized(name)
        _check_name(self, name, "parameter")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly; wrap a detached tensor: "
                             "nn.Parameter(x.detach())")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_initialized(name)
        _check_name(self, name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = Tensor._wrap(tensor._data)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        self._check_initialized(name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f'module name can\'t contain ".", got: {name}' if name else
                           'module name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            self._check_initialized(name)
            _remove_from(self, name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._check_initialized(name)
            _remove_from(self, name)
            self._modules[name] = value
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            self._modules[name] = None
        elif isinstance(value, Buffer):
            _remove_from(self, name)
            self.register_buffer(name, value)
        elif self.__dict__.get("_buffers") is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            r = d.get(registry)
            if r is not None and name in r:
                return r[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) for this module and every descendant, depth first, in torch's order."""
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield name, module
            children = [(name + ("." if name else "") + n, m)
                        for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None:
                    continue
                if remove_duplicate:
                    if id(v) in seen:
                        continue
                    seen.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, Parameter) pairs, e.g. ("0.weight", ...); shared parameters appear once."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return mod._buffers[name]

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to None by default, as torch 2.x)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_()
                p.grad.zero_()

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn):
        """Apply ``fn`` to every parameter and buffer, keeping Parameters as Parameters."""
        for module in self.modules():
            for key, param in module._parameters.items():
                if param is None:
                    continue
                with grad_mode.no_grad():
                    new = fn(param)
                if new is not param:
                    p = Parameter(new, param.requires_grad)
                    if param.grad is not None:
                        with grad_mode.no_grad():
                            p._grad = fn(param.grad)
                    module._parameters[key] = p
            for key, buf in module._buffers.items():
                if buf is not None:
                    module._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Call ``fn(m)`` on every submodule (children first) and on self, e.g. for init."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        from ..._tensor_methods import _parse_to
        dtype, device, _ = _parse_to(args, dict(kwargs))
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            out = t
            if device is not None:
                out = out.to(device)
            if dtype is not None and t.is_floating_point():
                out = out.to(dtype)
            return out
        return self._apply(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer, keyed like "0.weight"."""
        if args:
            destination = args[0]
        if destination is None:
            destination = collections.OrderedDict()
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip("."),
                                                        remove_duplicate=False):
            p = module_prefix + "." if module_prefix else ""
            module._save_to_state_dict(destination, p, keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors from ``state_dict`` into this module's parameters and buffers.

        As torch: each module loads its own entries (``_load_from_state_dict``, which a
        module keeping other state overrides -- a quantized Linear's packed weight), from a
        copy of the entries under its prefix, then its children theirs."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []

        def load(module, local, prefix):
            module._load_from_state_dict(local, prefix, {"assign_to_params_buffers": assign},
                                         True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                         child_prefix)
        load(self, collections.OrderedDict(state_dict), "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeysResult(missing, unexpected)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own parameters and persistent buffers from
        ``state_dict[prefix + name]``; note the missing ones, and (``strict``) the keys under
        ``prefix`` that name neither one of them nor a child."""
        own = {}
        for name, param in self._parameters.items():
            if param is not None:
                own[name] = "_parameters"
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                own[name] = "_buffers"
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, registry in own.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            target = getattr(self, registry)[name]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if tuple(value.shape) != tuple(target.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {target.shape}.")
                continue
            with grad_mode.no_grad():
                if assign:
                    getattr(self, registry)[name] = value if registry == "_buffers" else \
                        Parameter(value.detach(), target.requires_grad)
                else:
                    target.copy_(value)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix):
                    head = key[len(prefix):].split(".", 1)
                    if head[0] not in (self._modules if len(head) > 1 else own):
                        unexpected_keys.append(key)

    # ------------------------------------------------------------------ hooks and call
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` runs before forward; it may return replacement args."""
        return _add_hook(self._forward_pre_hooks, (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output)`` runs after forward; it may return a new output."""
        return _add_hook(self._forward_hooks, (hook, with_kwargs), prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t. the
        module's inputs are computed; it may return replacement grad_input."""
        return _add_hook(self._backward_hooks, hook, prepend)

    def __call__(self, *args, **kwargs):
        for hook, with_kwargs in list(self._forward_pre_hooks.values()):
            if with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        bw = _BackwardHookState(self) if self._backward_hooks and grad_mode.is_grad_enabled() \
            else None
        if bw is not None:
            args = bw.wrap_inputs(args)
        output = self.forward(*args, **kwargs)
        for hook, with_kwargs in list(self._forward_hooks.values()):
            result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args, output)
            if result is not None:
                output = result
        if bw is not None:
            output = bw.wrap_outputs(output)
        return output

    # ------------------------------------------------------------------ printing
    def extra_repr(self):
        """One line of constructor arguments shown by repr (layers override this)."""
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __getstate__(self):
        return self.__dict__.copy()


def _check_name(module, name, kind):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    registry = {"parameter": "_parameters", "buffer": "_buffers"}[kind]
    if hasattr(module, name) and name not in getattr(module, registry):
        raise KeyError(f"attribute '{name}' already exists")


def _remove_from(module, name):
    for registry in ("_parameters", "_buffers", "_modules"):
        r = module.__dict__.get(registry)
        if r is not None and name in r:
            del r[name]
    module.__dict__.pop(name, None)
    nps = module.__dict__.get("_non_persistent_buffers_set")
    if nps is not None:
        nps.discard(name)


_hook_ids = itertools.count()


def _add_hook(registry, hook, prepend):
    key = next(_hook_ids)
    if prepend:
        items = list(registry.items())
        registry.clear()
        registry[key] = hook
        registry.update(items)
    else:
        registry[key] = hook
    return _DictHandle(registry, key)


class _DictHandle(RemovableHandle):
    def __init__(self, registry, key):
        self._registry, self._key = registry, key

    def remove(self):
        self._registry.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# ---------------------------------------------------------------- full backward hooks
class _Identity(Function):
    """Pass tensors through unchanged; on backward, report their gradients to ``state``."""

    node_name = "BackwardHookFunctionBackward"

    @staticmethod
    def forward(ctx, state, side, *tensors):
        ctx.state, ctx.side = state, side
        outs = tuple(_alias(t) if isinstance(t, Tensor) else t for t in tensors)
        return outs if len(outs) != 1 else outs[0]

    @staticmethod
    def backward(ctx, *grads):
        grads = ctx.state.on_grads(ctx.side, grads)
        return (None, None) + tuple(grads)


def _alias(t):
    """A new tensor object over the same memory (so it can get its own grad_fn)."""
    out = Tensor._wrap(t._data)
    out._version_counter = t._version_counter
    return out


class _BackwardHookState:
    """Collects grad_output (at the outputs) and grad_input (at the inputs) for one call."""

    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.inputs_require_grad = False

    def wrap_inputs(self, args):
        tensors = [a for a in args if isinstance(a, Tensor)]
        self.n_inputs = len(tensors)
        self.inputs_require_grad = any(t.requires_grad for t in tensors)
        if not self.inputs_require_grad:
            return args
        wrapped = _Identity.apply(self, "input", *args)
        return wrapped if isinstance(wrapped, tuple) else (wrapped,)

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        outs = (output,) if single else tuple(output)
        if not any(isinstance(o, Tensor) and o.requires_grad for o in outs):
            return output
        wrapped = _Identity.apply(self, "output", *outs)
        return wrapped if single or isinstance(wrapped, tuple) else (wrapped,)

    def on_grads(self, side, grads):
        if side == "output":
            self.grad_outputs = tuple(grads)
            if not self.inputs_require_grad:
                self._call_hooks((None,) * max(self.n_inputs, 1))
            return grads
        result = self._call_hooks(tuple(grads))
        return result if result is not None else grads

    def _call_hooks(self, grad_inputs):
        for hook in list(self.module._backward_hooks.values()):
            out = hook(self.module, grad_inputs, self.grad_outputs)
            if out is not None:
                grad_inputs = tuple(out)
        return grad_inputs
