"""``learntorch.onnx.export``: capture the model's forward, write each op as ONNX nodes.

    learntorch.onnx.export(model, example_input, "digits.onnx",
                           input_names=["image"], output_names=["logits"],
                           dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})

Three steps, each in its own place:

1. ``learntorch.fx.capture`` runs the model once (in eval mode unless told
   otherwise) and records the engine's ops -- the same tracer a compiler uses;
2. each captured op is handed to its converter (``_ops/``, found through
   ``_registry.py``), which adds ONNX nodes; parameters and buffers become
   initializers named by their module paths (``0.weight``), as torch names them;
3. the ``onnx`` package assembles and checks the model, which is written to ``f``.

The arguments are torch.onnx.export's.  learntorch has one exporter, so
``dynamo``, ``optimize``, ``report``, ``profile``, ``dump_exported_program``,
``artifacts_dir``, ``do_constant_folding``, ``custom_opsets``,
``export_modules_as_functions``, ``autograd_inlining`` and ``external_data`` are
accepted and change nothing; ``dynamic_shapes`` is read like ``dynamic_axes``
when it is a dict (or a sequence) of ``{dim: name}``.
"""
import contextlib
import enum
import time
import warnings

DEFAULT_OPSET = 18
MIN_OPSET = 13      # Softmax over one axis, Squeeze/Unsqueeze/ReduceSum axes as inputs
MAX_OPSET = 21      # the newest this exporter was checked with, against ONNX Runtime


class TrainingMode(enum.IntEnum):
    """The mode the model is exported in, as ``torch.onnx.TrainingMode``."""

    EVAL = 0        # call model.eval() for the export (dropout off, running statistics)
    PRESERVE = 1    # leave the model in the mode it is in
    TRAINING = 2    # call model.train() (refused for ops that then need batch statistics)


class OperatorExportTypes(enum.IntEnum):
    """Only ``ONNX`` is supported: every op becomes a standard ONNX op."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


_exporting = []


def is_in_onnx_export():
    """True while ``export`` runs the model (a forward may check it, as in torch)."""
    return bool(_exporting)


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Export ``model`` run on ``args`` to ONNX, written to ``f`` (a path or a binary file).

    Returns an ``ONNXProgram`` (``.model_proto``, ``.save(path)``, and calling it
    runs ONNX Runtime).  ``dynamic_axes={"input": {0: "batch"}}`` makes those
    dimensions symbolic; ``verify=True`` runs the exported model in ONNX Runtime
    on ``args`` and compares with learntorch's outputs.  An op the exporter cannot
    write raises ``UnsupportedOperatorError`` naming it and the module it ran in.
    """
    from ..nn.modules.module import Module
    from .errors import OnnxExporterError
    if not isinstance(model, Module):
        raise TypeError(f"learntorch.onnx.export takes an nn.Module, not "
                        f"{type(model).__name__}; wrap a function in a Module whose forward "
                        "calls it")
    args = _positional_args(args, kwargs)
    opset = _opset(opset_version)
    if operator_export_type != OperatorExportTypes.ONNX:
        raise OnnxExporterError(f"operator_export_type={operator_export_type!r} is not supported: "
                                "learntorch writes standard ONNX ops only "
                                "(OperatorExportTypes.ONNX)")
    if custom_translation_table:
        raise OnnxExporterError("custom_translation_table is not supported by learntorch's "
                                "exporter; export models built from learntorch's own ops")
    try:
        import onnx  # noqa: F401  (the optional extra; checked before the model runs)
    except ImportError:
        raise ImportError("learntorch.onnx.export needs the onnx package: pip install "
                          "'learntorch[deploy]' (or pip install onnx onnxruntime)") from None
    started = time.perf_counter()
    graph = _capture(model, args, training)
    model_proto = _build(graph, opset, input_names, output_names,
                         _dynamic_axes(dynamic_axes, dynamic_shapes), export_params,
                         keep_initializers_as_inputs)
    from ._program import ONNXProgram
    program = ONNXProgram(model_proto, graph, time.perf_counter() - started)
    if f is not None:
        program.save(f)
    if verbose:
        print(program)
    if verify:
        program.verify(*args)
    return program


def _positional_args(args, kwargs):
    from .._tensor import Tensor
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    if args and isinstance(args[-1], dict):  # torch's old convention: a final dict of kwargs
        kwargs, args = {**(kwargs or {}), **args[-1]}, args[:-1]
    if kwargs:
        raise TypeError(f"learntorch.onnx.export passes the example inputs to forward by "
                        f"position only; got keyword inputs {sorted(kwargs)}: put them in args")
    return args


def _opset(opset_version):
    from .errors import OnnxExporterError
    if opset_version is None:
        return DEFAULT_OPSET
    if not MIN_OPSET <= int(opset_version) <= MAX_OPSET:
        raise OnnxExporterError(f"opset_version={opset_version} is outside what learntorch "
                                f"exports ({MIN_OPSET} to {MAX_OPSET}); leave it out for "
                                f"{DEFAULT_OPSET}")
    return int(opset_version)


@contextlib.contextmanager
def _mode(model, training):
    """The model in the mode ``training`` asks for, restored afterwards (torch's
    ``select_model_mode_for_export``)."""
    was_training = model.training
    if training == TrainingMode.EVAL:
        model.eval()
    elif training == TrainingMode.TRAINING:
        model.train()
    try:
        yield
    finally:
        model.train(was_training)


def _capture(model, args, training):
    from ..fx import capture
    from .errors import OnnxExporterError
    with _mode(model, training), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capture's warning about randomness: an error here
        _exporting.append(True)
        try:
            graph = capture(model, *args)
        finally:
            _exporting.pop()
    if graph.meta.get("random"):
        raise OnnxExporterError(
            "the model drew random numbers while being exported (dropout in training mode?): "
            "the ONNX graph would repeat those numbers forever. Export in eval mode: "
            "training=learntorch.onnx.TrainingMode.EVAL (the default), or model.eval()")
    return graph.eliminate_dead_code()


def _dynamic_axes(dynamic_axes, dynamic_shapes):
    """{value name: {axis: dim name}} from torch's two ways of saying it."""
    if dynamic_axes is not None and dynamic_shapes is not None:
        raise ValueError("give dynamic_axes or dynamic_shapes, not both")
    spec = dynamic_axes if dynamic_axes is not None else dynamic_shapes
    if spec is None:
        return {}
    if isinstance(spec, (list, tuple)):
        spec = {i: s for i, s in enumerate(spec) if s}
    if not isinstance(spec, dict):
        raise TypeError(f"dynamic_axes must be a dict like {{'input': {{0: 'batch'}}}}, got "
                        f"{type(spec).__name__}")
    out = {}
    for name, axes in spec.items():
        if isinstance(axes, dict):
            out[name] = {int(a): (d if isinstance(d, str) else f"{name}_dim_{a}")
                         for a, d in axes.items()}
        elif isinstance(axes, (list, tuple)):
            out[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
        else:
            raise TypeError(f"dynamic_axes[{name!r}] must be a dict {{axis: name}} or a list of "
                            f"axes, got {axes!r}")
    return out


def _build(graph, opset, input_names, output_names, dynamic, export_params,
           keep_initializers_as_inputs):
    from onnx import helper
    from .. import __version__
    from . import _ops  # noqa: F401  (registers the converters)
    from ._builder import Builder, NodeContext, make_model
    from .errors import OnnxExporterError
    from ._registry import converter_for, supported_ops

    builder = Builder(opset)
    placeholders = [p for p in graph.placeholders if p.tensor_meta is not None]
    outputs = graph.outputs
    in_names = _names(input_names, [p.name for p in placeholders], "input_names")
    out_names = _names(output_names, [f"output_{i}" if len(outputs) > 1 else "output"
                                      for i in range(len(outputs))], "output_names")
    # dynamic_shapes may name inputs by position
    dynamic = {in_names[k] if isinstance(k, int) and k < len(in_names) else k: v
               for k, v in dynamic.items()}
    unknown = set(dynamic) - set(in_names) - set(out_names)
    if unknown:
        raise ValueError(f"dynamic_axes names {sorted(map(str, unknown))}, which are neither "
                         f"input_names {in_names} nor output_names {out_names}")
    for p, name in zip(placeholders, in_names):
        builder.values[p] = name
        builder.used_names.add(name)
    # the name each output node's value must have (when that node is an op of its own)
    wanted = {}
    for node, name in zip(outputs, out_names):
        if node.op == "call_function" and node not in wanted:
            wanted[node] = name
    for name in out_names:
        builder.used_names.add(name)
    params = []
    for node in graph.nodes:
        if node.op == "get_attr":
            array = graph.attributes[node.target].detach().cpu().numpy()
            builder.values[node] = node.target
            builder.used_names.add(node.target)
            if export_params or node.meta.get("attribute") == "constant":
                builder.add_initializer(node.target, array)
                if keep_initializers_as_inputs:
                    params.append(_value_info(helper, node.target, node.tensor_meta, {}))
            else:
                params.append(_value_info(helper, node.target, node.tensor_meta, {}))
        elif node.op == "call_function":
            if node.kind == "getitem":
                source, i = node.args
                builder.values[node] = builder.values[source][i]
                continue
            matched, convert = converter_for(node.target)
            ctx = NodeContext(builder, node, matched, wanted.get(node))
            if convert is None:
                ctx.unsupported(
                    "learntorch has no ONNX translation for this op",
                    f"Compute it outside the exported model (before its input or after its "
                    f"output), or rewrite that part of forward with ops that have one: "
                    f"{', '.join(supported_ops())}.")
            builder.values[node] = convert(ctx)
    onnx_inputs = [_value_info(helper, name, p.tensor_meta, dynamic.get(name, {}))
                   for p, name in zip(placeholders, in_names)] + params
    onnx_outputs = []
    for node, name in zip(outputs, out_names):
        value = builder.values[node]
        if value != name:  # an input, a parameter, or an output given twice: copy it
            builder.op("Identity", [value], name, outputs=[name])
        meta = node.tensor_meta
        if meta is None:
            raise OnnxExporterError(f"output {name!r} is not a tensor: export returns tensors")
        onnx_outputs.append(_value_info(helper, name, meta, dynamic.get(name, {})))
    model = make_model(builder, onnx_inputs, onnx_outputs, __version__)
    if any(dynamic.get(name) for name in in_names):
        _propagate_dynamic_dims(model, [n for n in out_names if n not in dynamic])
    return model


def _propagate_dynamic_dims(model, names):
    """Outputs whose dimensions the caller did not name get the inputs' symbolic ones
    where they flow through (a dynamic batch in, a dynamic batch out), as ONNX's shape
    inference follows them; a dimension it cannot follow is left unnamed, never pinned
    to the example's size.  Without inference the captured sizes stay."""
    import onnx
    from onnx import shape_inference
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for output in probe.graph.output:
        if output.name in names:
            output.type.tensor_type.ClearField("shape")
    try:
        inferred = shape_inference.infer_shapes(probe, strict_mode=True)
    except Exception:  # inference is a refinement: the captured sizes are still right
        return
    found = {o.name: o for o in inferred.graph.output}
    for output in model.graph.output:
        guess = found.get(output.name)
        if output.name not in names or guess is None or \
                not guess.type.tensor_type.HasField("shape"):
            continue
        for dim, inferred_dim in zip(output.type.tensor_type.shape.dim,
                                     guess.type.tensor_type.shape.dim):
            if inferred_dim.HasField("dim_param"):
                dim.dim_param = inferred_dim.dim_param
            elif not inferred_dim.HasField("dim_value"):
                dim.ClearField("dim_value")
    onnx.checker.check_model(model)


def _names(given, defaults, what):
    if given is None:
        return defaults
    given = list(given)
    if len(given) > len(defaults):
        raise ValueError(f"{what} has {len(given)} names but the model has {len(defaults)} "
                         f"{'inputs' if what == 'input_names' else 'outputs'}")
    return given + defaults[len(given):]


def _value_info(helper, name, meta, dynamic):
    from ._builder import element_type
    dims = [dynamic.get(axis, size) for axis, size in enumerate(meta.shape)]
    bad = [a for a in dynamic if not 0 <= a < len(meta.shape)]
    if bad:
        raise ValueError(f"dynamic_axes for {name!r} names axes {bad}, but it has "
                         f"{len(meta.shape)} dimensions {list(meta.shape)}")
    return helper.make_tensor_value_info(name, element_type(meta.dtype), dims)

