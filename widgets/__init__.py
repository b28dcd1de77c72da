"""Widgets that show the learntorch engine at work, for Jupyter.

Each public name is one call with good defaults::

    from widgets import show_graph, BackpropStepper, OptimizerExplorer
    from widgets import TrainingDashboard, TensorExplorer, ConvExplorer, RingAllReduce
    from widgets import KernelGrid, ProfilerView   # CUDA threads and blocks; a profile's ops
    from widgets import QuantizationExplorer, PrecisionExplorer
    from widgets import show_program           # a captured or exported program's graph
    from widgets import show_compiled          # a compiled function's graph and kernels

A widget is a Python-side state object (``step`` / ``reset`` / ``history``,
testable without a browser) plus a thin ipywidgets view.  Widgets read the
engine only through its public introspection API (``learntorch.autograd.graph``,
``grad_fn.next_functions``, optimizer ``state``); the engine never imports them.

The names are imported on first use, so ``import widgets`` stays cheap and a
chapter that only draws a graph never loads matplotlib.
"""
import importlib

# public name -> the module (one idea per file) that defines it
_EXPORTS = {
    "show_graph": "graph",
    "GraphView": "graph",
    "BackpropStepper": "backprop_stepper",
    "OptimizerExplorer": "optimizer_explorer",
    "momentum_phase_diagram": "optimizer_explorer",
    "TrainingDashboard": "training_dashboard",
    "TensorExplorer": "tensor_explorer",
    "ConvExplorer": "conv_explorer",
    "RingAllReduce": "ring_allreduce",
    "show_program": "program",
    "ProgramView": "program",
    "show_compiled": "compile_view",
    "CompiledView": "compile_view",
    "QuantizationExplorer": "quantization_explorer",
    "KernelGrid": "kernel_grid",
    "ProfilerView": "profiler_view",
    "PrecisionExplorer": "precision_explorer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'widgets' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
