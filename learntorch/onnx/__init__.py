"""``learntorch.onnx``: export a model to ONNX, to run it outside learntorch.

``export(model, args, f, input_names=..., output_names=..., dynamic_axes=...)``
takes torch.onnx.export's arguments.  The ``onnx`` package (and ONNX Runtime,
to run the result) is the optional ``deploy`` extra, imported only when
``export`` is called: ``import learntorch`` never needs it.
"""
from . import errors
from .errors import OnnxExporterError
from ._exporter import OperatorExportTypes, TrainingMode, export, is_in_onnx_export
from ._program import ONNXProgram

__all__ = ["export", "is_in_onnx_export", "ONNXProgram", "TrainingMode", "OperatorExportTypes",
           "errors", "OnnxExporterError"]
