"""``ONNXProgram``: what ``export`` returns -- the ONNX model, and a way to run it.

As torch's: ``.model_proto`` is the ``onnx.ModelProto``, ``.save(path)`` writes
it, and calling the program runs it in ONNX Runtime (learntorch tensors in,
learntorch tensors out).  ``.graph`` is the captured learntorch graph it was
made from, and ``print(program)`` shows the ONNX graph as text.
"""
import os

import numpy as np


class ONNXProgram:
    def __init__(self, model_proto, graph, export_seconds):
        self.model_proto = model_proto
        self.graph = graph                    # the learntorch.fx.Graph that was exported
        self.export_seconds = export_seconds  # capture + conversion + check, in seconds
        self._session = None

    def save(self, destination):
        """Write the model to a path or a binary file object."""
        data = self.model_proto.SerializeToString()
        if isinstance(destination, (str, os.PathLike)):
            with open(destination, "wb") as handle:
                handle.write(data)
        else:
            destination.write(data)

    def __call__(self, *args):
        """Run the model in ONNX Runtime on learntorch tensors (or arrays)."""
        from .. import from_numpy
        session = self._inference_session()
        feeds = {i.name: np.ascontiguousarray(_as_array(a))
                 for i, a in zip(session.get_inputs(), args)}
        return [from_numpy(np.asarray(out)) for out in session.run(None, feeds)]

    def verify(self, *args, rtol=1e-5, atol=1e-5):
        """Compare ONNX Runtime's outputs on ``args`` with the captured graph's; raises
        ``OnnxExporterError`` naming the output that differs."""
        from .errors import OnnxExporterError
        from ..autograd.grad_mode import no_grad
        with no_grad():
            expected = self.graph(*args)
        flat = []
        _flatten(expected, flat)
        for i, (e, g) in enumerate(zip(flat, self(*args))):
            a, b = e.detach().cpu().numpy(), g.numpy()
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
                worst = np.abs(a - b).max() if a.shape == b.shape else "shapes differ"
                raise OnnxExporterError(f"verify: ONNX Runtime's output {i} differs from "
                                        f"learntorch's (max difference {worst})")

    def _inference_session(self):
        if self._session is None:
            try:
                import onnxruntime
            except ImportError:
                raise ImportError("running an exported model needs onnxruntime: pip install "
                                  "'learntorch[deploy]'") from None
            self._session = onnxruntime.InferenceSession(
                self.model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
        return self._session

    def __str__(self):
        """The ONNX graph as text (onnx.printer's), initializers listed by name and shape
        instead of printed value by value."""
        import onnx
        import onnx.printer
        graph = onnx.GraphProto()
        graph.CopyFrom(self.model_proto.graph)
        del graph.initializer[:]
        lines = [f"  {t.name}: {onnx.TensorProto.DataType.Name(t.data_type).lower()}"
                 f"{list(t.dims)}" for t in self.model_proto.graph.initializer]
        return (onnx.printer.to_text(graph) + "\ninitializers:\n" + "\n".join(lines)).rstrip()

    def __repr__(self):
        g = self.model_proto.graph
        return (f"ONNXProgram({len(g.input)} inputs, {len(g.node)} nodes, "
                f"{len(g.initializer)} initializers, opset "
                f"{self.model_proto.opset_import[0].version})")


def _as_array(value):
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _flatten(value, out):
    if isinstance(value, (tuple, list)):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten(v, out)
    elif hasattr(value, "detach"):
        out.append(value)
