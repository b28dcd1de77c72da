"""Grad mode: whether new operations are recorded on the tape.

``no_grad``, ``enable_grad`` and ``set_grad_enabled`` work as context managers
and as decorators, exactly like torch's.  The flag is a per-thread value read on
every operation, so reading it must stay cheap: ``is_grad_enabled()``.
"""
import functools
import threading

class InferenceVersionCounter(list):
    """The version counter of a tensor made under ``inference_mode`` (and of its views, which
    share it): its type marks an *inference tensor*, which torch never lets require grad."""


class _GradState(threading.local):
    """Grad mode is per thread, as in torch: a no_grad block in one thread (a data-loading
    thread, a widget's timer) must not switch recording off in another."""

    enabled = True
    # makes a new tensor's version counter ([0]); a C-level call, so tensor creation stays
    # cheap and the reading walk does not step into it; inference_mode swaps it
    new_counter = functools.partial(list, (0,))
    inference = False


_state = _GradState()


def is_grad_enabled():
    return _state.enabled


def is_inference_mode_enabled():
    return _state.inference


class _GradModeContext:
    """Base for the three grad-mode switches; ``_target`` is the mode inside."""

    _target = True

    def __enter__(self):
        self._previous = _state.enabled
        _state.enabled = self._target
        return None

    def __exit__(self, *exc):
        _state.enabled = self._previous
        return False

    def __call__(self, fn):
        # used as a decorator: a fresh context for every call, so recursion nests correctly
        factory = self._clone

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with factory():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        return type(self)()


class _NoArgumentContext(_GradModeContext):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()`` (torch allows both)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoArgumentContext):
    """Operations inside do not record a graph: results have ``requires_grad=False``."""

    _target = False


class enable_grad(_NoArgumentContext):
    """Turn recording back on inside a ``no_grad`` block."""

    _target = True


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` is ``no_grad()``; also usable as a plain call."""

    def __init__(self, mode):
        self._target = bool(mode)
        # like torch, calling it (not only entering it) switches the mode at once
        self._previous = _state.enabled
        _state.enabled = self._target

    def __enter__(self):
        return None

    def __call__(self, fn):
        _state.enabled = self._previous  # decorating must not flip the mode now
        return super().__call__(fn)

    def _clone(self):
        return set_grad_enabled(self._target)


class inference_mode(_GradModeContext):
    """Accepted for compatibility; behaves as ``no_grad`` here (``inference_mode(False)``: no-op)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: ``mode`` is the function

    def __init__(self, mode=True):
        # inference_mode(False) leaves the current mode as it is
        self._mode = mode

    def __enter__(self):
        self._previous = _state.enabled
        self._previous_inference = _state.inference, _state.new_counter
        if self._mode:
            _state.enabled = False
            _state.inference = True
            _state.new_counter = functools.partial(InferenceVersionCounter, (0,))

    def __exit__(self, *exc):
        _state.inference, _state.new_counter = self._previous_inference
        return super().__exit__(*exc)

    def _clone(self):
        return inference_mode(self._mode)
