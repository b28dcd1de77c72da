"""The ONNX graph under construction, and what a converter may ask of it.

A converter (``_ops/``) turns one captured node into ONNX nodes.  It receives
a ``NodeContext``: ``ctx.value(arg)`` is the ONNX value name of a tensor
argument, ``ctx.meta(arg)`` its captured shape and dtype, ``ctx.op(...)`` adds
an ONNX node, ``ctx.constant(...)`` / ``ctx.scalar(...)`` add initializers, and
``ctx.unsupported(...)`` raises the exporter's error naming the op and where in
the model it ran.  Values are named after the captured nodes (``linear``,
``relu_1``), parameters after their module paths (``0.weight``), so the ONNX
graph reads like the learntorch one.

``onnx`` is imported here, and this module only by ``export``: ``import
learntorch`` never needs the package.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..fx.graph import unique_name
from .errors import UnsupportedOperatorError

# learntorch dtype name -> ONNX element type
ELEMENT_TYPES = {
    "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "float16": TensorProto.FLOAT16,
    "int64": TensorProto.INT64, "int32": TensorProto.INT32, "int16": TensorProto.INT16,
    "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL,
}


def element_type(dtype):
    try:
        return ELEMENT_TYPES[dtype.name]
    except KeyError:
        raise UnsupportedOperatorError(f"learntorch.onnx.export: tensors of dtype {dtype} have "
                                       "no ONNX element type learntorch writes") from None


class Builder:
    """The nodes, initializers and value names of the ONNX graph being written."""

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.used_names = set()
        self.values = {}        # captured node -> ONNX value name (or list, several outputs)

    def fresh(self, hint):
        """A value name not used yet, close to ``hint``."""
        return unique_name(hint, self.used_names)

    def add_initializer(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type, inputs, hint, n_outputs=1, outputs=None, **attributes):
        """Add one ONNX node; returns its output name (a list when ``n_outputs`` > 1)."""
        if outputs is None:
            outputs = [self.fresh(hint if n_outputs == 1 else f"{hint}_{i}")
                       for i in range(n_outputs)]
        attributes = {k: v for k, v in attributes.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs),
                                           name=self.fresh(f"/{hint}/{op_type}"), **attributes))
        return outputs[0] if n_outputs == 1 else outputs


class NodeContext:
    """What the converter of one captured node works with (see the module docstring)."""

    def __init__(self, builder, node, matched, output_name=None):
        self.builder, self.node = builder, node
        self.matched = matched          # the op name the converter was registered under
        self.opset = builder.opset
        self.output_name = output_name  # the name this node's result must have, if any
        self.hint = node.name

    # ---- reading the captured node ----
    @property
    def args(self):
        return self.node.args

    @property
    def out(self):
        """TensorMeta of the node's result (a tuple of them for a multi-output op)."""
        return self.node.tensor_meta

    def value(self, arg):
        """The ONNX value name of a tensor argument (a captured node)."""
        name = self.builder.values[arg]
        if isinstance(name, list):
            raise AssertionError(f"{arg.name} has several outputs: read one through getitem")
        return name

    @staticmethod
    def meta(arg):
        return arg.tensor_meta

    # ---- writing ----
    def op(self, op_type, *inputs, n_outputs=1, last=False, **attributes):
        """Add an ONNX node reading ``inputs`` (value names; ``""`` for an omitted one).

        ``last=True`` marks the node making this converter's result: it gets the
        name the result must have (a graph output's name), if any.
        """
        outputs = None
        if last and self.output_name is not None and n_outputs == 1:
            outputs = [self.output_name]
            self.builder.used_names.add(self.output_name)
        return self.builder.op(op_type, inputs, self.hint, n_outputs, outputs, **attributes)

    def constant(self, array, hint="const"):
        """An initializer holding ``array`` (kept as it is: dtype and shape)."""
        return self.builder.add_initializer(self.builder.fresh(f"{self.hint}.{hint}"), array)

    def scalar(self, number, dtype):
        """A 0-d initializer holding ``number`` in the learntorch ``dtype`` (an op's constant)."""
        return self.constant(np.array(number, dtype=dtype.np), "scalar")

    def ints(self, values, hint="shape"):
        """A 1-D int64 initializer: the shape/axes input of Reshape, Squeeze, ReduceSum, ..."""
        return self.constant(np.array(list(values), dtype=np.int64), hint)

    def cast(self, value, from_dtype, to_dtype):
        """``value`` converted to ``to_dtype`` (no node when it already is)."""
        if from_dtype is to_dtype:
            return value
        return self.op("Cast", value, to=element_type(to_dtype))

    def operand(self, arg, dtype):
        """A tensor argument cast to ``dtype``, or a number as a constant of ``dtype``."""
        if hasattr(arg, "tensor_meta"):
            return self.cast(self.value(arg), arg.tensor_meta.dtype, dtype)
        if arg is None:
            return ""
        return self.scalar(arg, dtype)

    def unsupported(self, reason, fix=None):
        """Raise the exporter's error for this node: which op, where, why, what to do."""
        node = self.node
        message = (f"learntorch.onnx.export cannot export {node.op_name} (graph node "
                   f"{node.name!r}, run by {node.where()}) at opset {self.opset}: {reason}.")
        if fix:
            message += f" {fix}"
        raise UnsupportedOperatorError(message)


def make_model(builder, inputs, outputs, producer_version):
    """The ``onnx.ModelProto`` of a finished builder (inputs/outputs: ValueInfoProtos)."""
    graph = helper.make_graph(builder.nodes, "learntorch", inputs, outputs,
                              initializer=builder.initializers)
    opset = helper.make_opsetid("", builder.opset)
    model = helper.make_model(graph, opset_imports=[opset], producer_name="learntorch",
                              producer_version=producer_version,
                              ir_version=helper.find_min_ir_version_for([opset]))
    onnx.checker.check_model(model)
    return model
