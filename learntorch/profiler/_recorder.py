"""Recording op events: the ``profile`` context manager and ``record_function`` labels.

How it measures: while a ``profile`` is active, ``Function.apply`` (every op's
forward) and ``BackwardNode.apply`` with the fast tier's ``engine.apply_raw`` (every
node's backward, on Tensors or on arrays) are replaced by
wrappers that read ``time.perf_counter_ns`` before and after the call.  A
stack of open events gives each event its parent, so an event's *self* time is
its total minus the totals of the events opened inside it.
"""
import time

from .._fast import engine as _engine
from ..autograd import function as _function
from ._events import EventList, FunctionEvent, ProfilerActivity

_active = []  # the profiles currently recording (innermost last)


class _Recorder:
    """The open events (a stack) and the finished ones of one profile."""

    def __init__(self, record_shapes):
        self.record_shapes = record_shapes
        self.stack = []
        self.events = []

    def open(self, name, kind, shapes):
        event = FunctionEvent(name, kind, shapes, start_ns=time.perf_counter_ns())
        if self.stack:
            event.parent = self.stack[-1]
        self.stack.append(event)
        return event

    def close(self, event):
        event.end_ns = time.perf_counter_ns()
        self.stack.pop()
        if event.parent is not None:
            event.parent.child_ns += event.end_ns - event.start_ns
        self.events.append(event)


def _shapes(values):
    return [list(v.shape) if hasattr(v, "shape") and v is not None else [] for v in values]


def _forward_name(fn_cls):
    """``SumBackward0`` -> ``Sum``: an op's forward is named after the node it records,
    so forward and backward rows pair up (a Function without a node name: its class name)."""
    node_name = fn_cls.node_name
    if not node_name:
        return fn_cls.__name__
    base, sep, _ = node_name.rpartition("Backward")
    return base if sep else node_name


def _record(name, kind, args, call):
    recorder = _active[-1]
    event = recorder.open(name, kind, _shapes(args) if recorder.record_shapes else None)
    try:
        return call()
    finally:
        recorder.close(event)


class _Patches:
    """Install / remove the timing wrappers (once, however deeply profiles nest)."""

    installed = 0
    # kept in a dict, not as class attributes: a classmethod stored on this class
    # would bind to it when read back
    originals = {}

    @classmethod
    def install(cls):
        cls.installed += 1
        if cls.installed > 1:
            return
        BackwardNode = _function.BackwardNode
        cls.originals = {"backward": BackwardNode.__dict__["apply"]}
        backward = cls.originals["backward"]
        in_raw = []  # the node whose array backward is being timed (it may call node.apply)

        def timed_forward(forward):
            def timed(fn_cls, *args, **kwargs):
                return _record(_forward_name(fn_cls), "forward", args,
                               lambda: forward(fn_cls, *args, **kwargs))
            return timed

        def timed_backward(node, grad_outputs):
            if in_raw and in_raw[-1] is node:  # already timed by timed_backward_raw
                return backward(node, grad_outputs)
            return _record(node.name(), "backward", grad_outputs,
                           lambda: backward(node, grad_outputs))

        def timed_backward_raw(backward_raw):
            # the fast engine's path for plain backward(): gradients as arrays, not Tensors
            def timed(node, grad_arrays):
                in_raw.append(node)
                try:
                    return _record(node.name(), "backward", grad_arrays,
                                   lambda: backward_raw(node, grad_arrays))
                finally:
                    in_raw.pop()
            return timed

        cls.originals["restore_forward"] = _function.wrap_apply(timed_forward)
        BackwardNode.apply = timed_backward
        cls.originals["restore_raw"] = _engine.wrap_apply_raw(timed_backward_raw)

    @classmethod
    def remove(cls):
        cls.installed -= 1
        if cls.installed > 0:
            return
        cls.originals["restore_forward"]()
        _function.BackwardNode.apply = cls.originals["backward"]
        cls.originals["restore_raw"]()


class profile:
    """Record every op's forward and backward time, calls and (optionally) input shapes.

    Arguments follow ``torch.profiler.profile``: ``activities`` (only
    ``ProfilerActivity.CPU`` is recorded; asking for CUDA alone is an error),
    ``record_shapes`` (``profile_memory`` and ``with_stack`` are accepted and
    ignored: only time is recorded).  After the ``with`` block, ``key_averages()`` groups the
    events by name and ``table()`` prints them.
    """

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False):
        activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if ProfilerActivity.CPU not in activities:
            raise ValueError("learntorch.profiler records CPU time only: pass "
                             "activities=[ProfilerActivity.CPU] (or leave it out)")
        self.record_shapes = record_shapes
        self._recorder = None
        self._events = None

    def __enter__(self):
        self._recorder = _Recorder(self.record_shapes)
        _active.append(self._recorder)
        _Patches.install()
        return self

    def __exit__(self, *exc):
        _Patches.remove()
        _active.remove(self._recorder)
        self._events = EventList(self._recorder.events)
        return False

    def events(self):
        """Every recorded event, in the order they finished."""
        if self._events is None:
            raise RuntimeError("the profile is still recording (or was never entered): "
                               "read its events after the `with profile() as prof:` block")
        return self._events

    def key_averages(self, group_by_input_shape=False):
        """The events grouped by name (and input shapes when asked): an ``EventList``."""
        return self.events().key_averages(group_by_input_shape)

    def table(self, sort_by="cpu_time_total", row_limit=100):
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit)


class record_function:
    """Label a region of code; it shows in the table as one row (e.g. ``"train_step"``)."""

    def __init__(self, name):
        self.name = name
        self._event = None

    def __enter__(self):
        if _active:
            self._event = _active[-1].open(self.name, "user", None)
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            _active[-1].close(self._event)
            self._event = None
        return False
