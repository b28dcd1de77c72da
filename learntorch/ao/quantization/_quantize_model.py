"""``quantize_dynamic``: swap a model's Linear layers for int8 ones (torch 2.13's
``torch.ao.quantization.quantize_dynamic``, which torch 2.13 marks deprecated in favour of
the torchao library; learntorch mirrors the API torch still ships).

Three steps, as torch's:

1. copy the model (unless ``inplace=True``) and put it in eval mode;
2. **propagate** qconfigs: every module gets a ``qconfig`` attribute -- the one
   ``qconfig_spec`` gives its type (``nn.Linear``) or its name (``"fc1"``), else its
   parent's;
3. **convert**: each module whose type is in ``mapping`` and that has a qconfig is
   replaced by ``mapping[type].from_float(module)`` (its weight observed and quantized),
   keeping its forward hooks; the ``qconfig`` attributes are removed again.

Only ``nn.Linear`` -> ``ao.nn.quantized.dynamic.Linear`` with qint8 weights exists in
learntorch (torch also converts LSTM/GRU cells and offers float16 weights).
"""
import copy

from ... import _dtypes
from ...nn.modules.linear import Linear as FloatLinear
from ..nn.quantized.dynamic.modules.linear import Linear as DynamicLinear
from .qconfig import default_dynamic_qconfig


def get_default_dynamic_quant_module_mappings():
    """float module type -> its dynamic quantized replacement."""
    return {FloatLinear: DynamicLinear}


def quantize_dynamic(model, qconfig_spec=None, dtype=_dtypes.qint8, mapping=None,
                     inplace=False):
    """A copy of ``model`` (or ``model`` itself, ``inplace=True``) whose layers named by
    ``qconfig_spec`` -- a set of types/names, or a dict of them to ``QConfig`` -- hold int8
    weights and quantize their input at run time (default: every ``nn.Linear``)."""
    if qconfig_spec is None:
        if dtype is not _dtypes.qint8:
            _unsupported(dtype)
        qconfig_spec = {FloatLinear: default_dynamic_qconfig}
    elif isinstance(qconfig_spec, set):
        if dtype is not _dtypes.qint8:
            _unsupported(dtype)
        qconfig_spec = dict.fromkeys(qconfig_spec, default_dynamic_qconfig)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


def _unsupported(dtype):
    if dtype in (_dtypes.float16, _dtypes.quint8):
        raise NotImplementedError(
            f"quantize_dynamic(dtype={dtype}) is not in learntorch: it quantizes Linear weights "
            "to qint8 (torch also offers float16 weights and quint8 embeddings)")
    raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))


def propagate_qconfig_(module, qconfig_dict=None):
    """Give every submodule a ``qconfig``: its type's or name's entry in ``qconfig_dict``,
    else its parent's (a ``qconfig`` it already has wins)."""
    _propagate(module, qconfig_dict or {}, None, "")


def _propagate(module, qconfig_dict, parent_qconfig, prefix):
    qconfig = qconfig_dict.get(type(module), parent_qconfig)
    qconfig = qconfig_dict.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, qconfig_dict, qconfig, f"{prefix}.{name}" if prefix else name)


def convert(module, mapping=None, inplace=False, remove_qconfig=True):
    """Replace each submodule that has a qconfig and a ``mapping`` entry by its quantized
    version (``from_float``)."""
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        for m in module.modules():
            if "qconfig" in m.__dict__:
                del m.qconfig
    return module


def _convert(module, mapping):
    swapped = {}
    for name, child in module.named_children():
        _convert(child, mapping)
        swapped[name] = swap_module(child, mapping)
    for name, child in swapped.items():
        module._modules[name] = child


def swap_module(mod, mapping):
    """``mapping[type(mod)].from_float(mod)`` if ``mod`` has a qconfig, else ``mod``; the
    new module keeps ``mod``'s forward (pre-)hooks."""
    if getattr(mod, "qconfig", None) is None or type(mod) not in mapping:
        return mod
    new_mod = mapping[type(mod)].from_float(mod)
    for hook, with_kwargs in mod._forward_pre_hooks.values():
        new_mod.register_forward_pre_hook(hook, with_kwargs=with_kwargs)
    for hook, with_kwargs in mod._forward_hooks.values():
        new_mod.register_forward_hook(hook, with_kwargs=with_kwargs)
    return new_mod
