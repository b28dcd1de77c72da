"""The exceptions of ``learntorch.onnx``, with torch.onnx's names and bases.

``OnnxExporterError`` is a ``RuntimeError`` and ``UnsupportedOperatorError`` one
of it, as in torch, so code that catches torch's catches these.  The message is
learntorch's: which op could not be exported, where in the model it ran, why,
and what to do.
"""


class OnnxExporterError(RuntimeError):
    """Exporting to ONNX failed (the message says why)."""


class UnsupportedOperatorError(OnnxExporterError):
    """The model ran an op that the exporter cannot write as ONNX."""
