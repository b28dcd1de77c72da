"""Checks for exercise check cells: specific feedback on what went wrong.

A check cell calls the learner's code on a few inputs and compares what came back
with what was expected.  When they differ it raises ``ExerciseCheckFailed`` (an
``AssertionError``) whose message names the input, what was expected and what came
back (kind, shape, dtype and a compact view of the values), so the learner knows
what to fix without reading the check.  When everything matches it prints one line,
``✓ 02.1 passed``.

    from course.checks import exercise, check_close, check_function

    with exercise("02.1"):                      # prints "✓ 02.1 passed" at the end
        x = torch.tensor([-1.0, 0.0, 2.0])
        check_close(my_relu(x), [0.0, 0.0, 2.0], name="my_relu(x)", inputs={"x": x})

    check_function(my_relu, [((torch.tensor([-1.0, 3.0]),), [0.0, 3.0]),
                             (("not a tensor",), TypeError)],   # must raise TypeError
                   name="my_relu", exercise="02.2")

**How, not only what.**  When the text sets a rule about *how* (use plain arithmetic,
not autograd; do not call ``F.cross_entropy``; the error message names both shapes),
the check enforces it with the three "how" checks below, and its feedback says it
read the learner's code or watched the calls::

    check_not_used(df_dx, ["backward", "grad", "autograd"], rule="plain arithmetic, not autograd")
    loss = check_not_called(stable_cross_entropy, (logits, target), ["F.cross_entropy"],
                            rule="build it from max, exp, sum, log and indexing")
    check_error_mentions(sum_to_shape, (torch.ones(2, 3), (4,)), raises=RuntimeError,
                         mentions={"the gradient's shape": (2, 3), "the shape asked for": (4,)})

Like every check, they turn what they saw into plain data (``course.observe`` makes
the observations: the names the code refers to, the calls it made, what a message
leaves out) and compare that with ``check_equal``.

Every check takes ``exercise=`` too (it then prints the ✓ line itself), so a check
cell with a single check needs no ``with`` block.  Values may be learntorch tensors,
torch tensors (or anything with ``detach()`` and ``numpy()``), numpy arrays, Python
numbers and (nested) lists.

How a chapter source marks its exercises (cell metadata, read by
``learntorch-course release`` and ``grade``; see course/notebook.py)::

    {"learntorch": {"exercise": "02.1", "role": "solution", "points": 2,
                    "hint": "max(x, 0) elementwise: look at Tensor.clamp"}}
    {"learntorch": {"exercise": "02.1", "role": "check"}}
    {"learntorch": {"exercise": "02.1", "role": "hidden-check"}}

- ``role: solution`` -- the one cell per exercise that the learner writes.  The
  answer sits between a line ``### BEGIN SOLUTION`` and a line ``### END SOLUTION``;
  the learner copy replaces it with a stub that raises ``NotImplementedError``
  naming the exercise and the ``hint``.  ``points`` (default 1) is what the
  exercise is worth.
- ``role: check`` -- visible to the learner, who runs it for feedback; uses the
  helpers of this module.
- ``role: hidden-check`` -- only in the instructor source and in grading (the
  learner copy has no trace of it).

An exercise earns its points when every one of its checks and hidden checks passes.
"""
import functools

import numpy as np

from . import observe

__all__ = ["ExerciseCheckFailed", "exercise", "check_close", "check_equal", "check_shape",
           "check_raises", "check_function", "check_not_used", "check_not_called",
           "check_error_mentions", "check_saved_for_backward"]


class ExerciseCheckFailed(AssertionError):
    """A check found a wrong answer; the message says which input, what was expected
    and what came back.  ``exercise`` is the exercise id when the check knew it."""

    def __init__(self, message, exercise_id=None):
        super().__init__(message)
        self.exercise = exercise_id


class exercise:
    """``with exercise("02.1"): ...`` -- group the checks of one exercise.

    On success it prints ``✓ 02.1 passed``; a failed check's message is prefixed with
    the exercise id, and any other error (the stub's NotImplementedError, a bug in
    the learner's code) gets a note naming the exercise, so the traceback says which
    exercise it came from.
    """

    def __init__(self, exercise_id):
        self.exercise_id = str(exercise_id)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None:
            _passed(self.exercise_id)
        elif isinstance(exc, ExerciseCheckFailed):
            if exc.exercise is None:
                exc.exercise = self.exercise_id
                exc.args = (f"{self.exercise_id} {exc.args[0]}",) + exc.args[1:]
        elif isinstance(exc, Exception):
            exc.add_note(f"(while checking exercise {self.exercise_id})")
        return False  # never swallow the exception


_Exercise = exercise  # the checks' ``exercise=`` keyword hides the class's name


# --- describing values compactly -------------------------------------------

def _is_tensor_like(value):
    # learntorch.Tensor and torch.Tensor both have these; numpy arrays do not
    return hasattr(value, "detach") and hasattr(value, "numpy") and hasattr(value, "shape")


def _kind(value):
    if _is_tensor_like(value):
        module = type(value).__module__.split(".")[0]
        return f"{module} {type(value).__name__}"
    return type(value).__name__


def _as_array(value):
    """A numpy view of a tensor-like, array, number or nested list (None if impossible)."""
    if _is_tensor_like(value):
        value = value.detach()
        if hasattr(value, "cpu"):
            value = value.cpu()
        return np.asarray(value.numpy())
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex, list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError:  # ragged nested lists
            return None
        return array if array.dtype != object else None
    return None


def _plain(value):
    """A numpy scalar as the Python number it holds (``3``, not ``np.int64(3)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _values(array):
    text = np.array2string(array, precision=4, threshold=12, edgeitems=2,
                           max_line_width=88, separator=", ")
    return text.replace("\n", "\n" + " " * 12)


def describe(value):
    """``learntorch Tensor, shape (2, 3), float32: [[...]]`` -- kind, shape, dtype, values."""
    if value is None:
        return "None (did the function forget to `return` its result?)"
    array = _as_array(value)
    if array is None:
        text = repr(value)
        return f"{_kind(value)}: {text if len(text) <= 200 else text[:197] + '...'}"
    if isinstance(value, (bool, int, float, np.generic)) and array.ndim == 0:
        return f"{_kind(value)} {_plain(value)!r}"
    if isinstance(value, (list, tuple)) and array.size <= 12:
        return f"{_kind(value)} {value!r}"
    return f"{_kind(value)}, shape {tuple(array.shape)}, {array.dtype}: {_values(array)}"


def _describe_inputs(inputs):
    if inputs is None or (isinstance(inputs, dict) and not inputs):
        return ""
    if isinstance(inputs, dict):
        lines = [f"  input:    {key} = {describe(val)}" for key, val in inputs.items()]
        return "\n".join(lines) + "\n"
    return f"  input:    {describe(inputs)}\n"


def _fail(what, name, inputs, expected, actual, detail=""):
    message = (f"{name}: {what}\n" + _describe_inputs(inputs)
               + f"  expected: {expected}\n  got:      {actual}")
    if detail:
        message += "\n  " + detail
    raise ExerciseCheckFailed(message)


def _passed(exercise_id):
    print(f"✓ {exercise_id} passed")


def _reports(check):
    """Give ``check`` an ``exercise=`` keyword: with it, the check runs inside
    ``with exercise(...)`` (the ✓ line on success, the id in a failure's message)."""
    @functools.wraps(check)
    def wrapper(*args, exercise=None, **kwargs):
        if exercise is None:
            return check(*args, **kwargs)
        with _Exercise(exercise):
            return check(*args, **kwargs)
    return wrapper


# --- the checks ----------------------------------------------------------------

@_reports
def check_close(actual, expected, *, name="result", inputs=None, atol=1e-6, rtol=1e-5,
                check_dtype=False):
    """``actual`` has ``expected``'s shape and values within ``atol + rtol * |expected|``.

    Shapes must match exactly (no broadcasting: a (3, 1) answer for a (3,) question
    is wrong even where the numbers agree).  NaN matches nothing.  When ``expected``
    is a tensor, ``actual`` must be a tensor too (a numpy array loses the autograd
    graph).  ``check_dtype=True`` also compares dtypes.
    """
    got_array, want_array = _as_array(actual), _as_array(expected)
    if want_array is None:
        raise TypeError(f"check_close compares numbers, arrays and tensors; expected is "
                        f"{_kind(expected)} (use check_equal for other objects)")
    if got_array is None:
        _fail("not a number, array or tensor", name, inputs, describe(expected),
              describe(actual))
    if _is_tensor_like(expected) and not _is_tensor_like(actual):
        _fail("expected a tensor", name, inputs, describe(expected), describe(actual),
              "return a tensor (an array or number has no autograd graph)")
    if got_array.shape != want_array.shape:
        _fail("wrong shape", name, inputs, describe(expected), describe(actual),
              f"shape {tuple(got_array.shape)} instead of {tuple(want_array.shape)}")
    if check_dtype and got_array.dtype != want_array.dtype:
        _fail("wrong dtype", name, inputs, describe(expected), describe(actual),
              f"dtype {got_array.dtype} instead of {want_array.dtype}")
    if got_array.dtype == object or not (np.issubdtype(got_array.dtype, np.number)
                                         or got_array.dtype == bool):
        _fail("not numeric", name, inputs, describe(expected), describe(actual))
    got64 = got_array.astype(np.float64) if got_array.dtype != np.complex128 else got_array
    want64 = want_array.astype(np.float64) if want_array.dtype != np.complex128 else want_array
    close = np.isclose(got64, want64, atol=atol, rtol=rtol, equal_nan=False)
    if not np.all(close):
        bad = np.argwhere(~close)
        first = tuple(int(i) for i in bad[0])
        with np.errstate(invalid="ignore"):
            diff = np.abs(got64 - want64)
        worst = float(np.nanmax(diff)) if np.any(np.isfinite(diff)) else float("nan")
        where = f" at index {first}" if got_array.ndim else ""
        detail = (f"{len(bad)} of {got_array.size} values differ; first{where}: got "
                  f"{got64[first]:.6g}, expected {want64[first]:.6g} (largest difference "
                  f"{worst:.3g}; atol={atol:g}, rtol={rtol:g})")
        _fail("wrong values", name, inputs, describe(expected), describe(actual), detail)


@_reports
def check_equal(actual, expected, *, name="result", inputs=None):
    """``actual == expected`` exactly: same shape and values for arrays and tensors,
    ``==`` for everything else (ints, strings, tuples such as a shape, ...)."""
    got_array, want_array = _as_array(actual), _as_array(expected)
    if want_array is not None and (got_array is not None or _is_tensor_like(expected)):
        if got_array is None:
            _fail("not a number, array or tensor", name, inputs, describe(expected),
                  describe(actual))
        if got_array.shape != want_array.shape:
            _fail("wrong shape", name, inputs, describe(expected), describe(actual),
                  f"shape {tuple(got_array.shape)} instead of {tuple(want_array.shape)}")
        differ = got_array != want_array
        if np.any(differ):
            first = tuple(int(i) for i in np.argwhere(differ)[0]) if differ.ndim else ()
            where = f" at index {first}" if differ.ndim else ""
            _fail("wrong values", name, inputs, describe(expected), describe(actual),
                  f"{int(np.sum(differ))} of {differ.size} values differ; first{where}: got "
                  f"{_plain(got_array[first])!r}, expected {_plain(want_array[first])!r}")
    else:
        try:
            same = bool(actual == expected)
        except Exception:  # e.g. comparing a tensor with a string
            same = False
        if not same:
            _fail("wrong result", name, inputs, describe(expected), describe(actual))


@_reports
def check_shape(actual, expected_shape, *, name="result", inputs=None):
    """``actual.shape`` (or ``np.shape(actual)``) equals ``expected_shape``."""
    want = tuple(expected_shape)
    if actual is None:
        _fail("wrong shape", name, inputs, f"shape {want}", describe(None))
    shape = getattr(actual, "shape", None)
    if shape is None:
        array = _as_array(actual)
        if array is None:
            _fail("has no shape", name, inputs, f"shape {want}", describe(actual))
        shape = array.shape
    if tuple(shape) != want:
        _fail("wrong shape", name, inputs, f"shape {want}",
              f"shape {tuple(shape)} ({describe(actual)})")


def _call(fn, inputs):
    """Call ``fn`` with ``inputs``: a tuple is positional arguments, a dict keyword
    arguments, anything else the one positional argument."""
    if isinstance(inputs, tuple):
        return fn(*inputs)
    if isinstance(inputs, dict):
        return fn(**inputs)
    return fn(inputs)


def _show_call(name, inputs):
    if isinstance(inputs, tuple):
        return {f"{name} argument {i + 1}": value for i, value in enumerate(inputs)}
    if isinstance(inputs, dict):
        return inputs
    return {f"{name} argument": inputs}


@_reports
def check_raises(fn, inputs=(), *, raises, name=None, match=None):
    """Calling ``fn`` with ``inputs`` raises ``raises`` (an exception class or tuple of
    them), with ``match`` (a substring) in its message when given.

    ``inputs`` as for ``check_function``: a tuple of positional arguments, a dict of
    keyword arguments, or a single argument.
    """
    name = name or getattr(fn, "__name__", "the function")
    wanted = raises.__name__ if isinstance(raises, type) else " or ".join(
        r.__name__ for r in raises)
    expected = f"raises {wanted}" + (f" with {match!r} in its message" if match else "")
    shown = _show_call(name, inputs)
    try:
        result = _call(fn, inputs)
    except raises as error:
        if match is not None and match not in str(error):
            _fail("wrong error message", name, shown, expected,
                  f"{type(error).__name__}: {error}")
    except NotImplementedError:
        raise  # the learner copy's stub: let its own message speak
    except Exception as error:
        _fail("wrong exception type", name, shown, expected,
              f"{type(error).__name__}: {error}")
    else:
        _fail("no exception raised", name, shown, expected,
              f"returned {describe(result)}")


@_reports
def check_function(fn, cases, *, name=None, atol=1e-6, rtol=1e-5):
    """Call ``fn`` on each case and compare with what it should give.

    ``cases`` is a list of ``(inputs, expected)``: ``inputs`` is a tuple of positional
    arguments, a dict of keyword arguments, or a single argument; ``expected`` is

    - an exception class: the call must raise it (``check_raises``);
    - a number, array, tensor or list of numbers: compared with ``check_close``;
    - anything else: compared with ``==`` (``check_equal``).

    The first wrong case fails, naming its inputs.
    """
    name = name or getattr(fn, "__name__", "the function")
    for inputs, expected in cases:
        if isinstance(expected, type) and issubclass(expected, BaseException):
            check_raises(fn, inputs, raises=expected, name=name)
            continue
        result = _call(fn, inputs)
        shown = _show_call(name, inputs)
        if _as_array(expected) is not None and not isinstance(expected, (str, bytes)):
            check_close(result, expected, name=name, inputs=shown, atol=atol, rtol=rtol)
        else:
            check_equal(result, expected, name=name, inputs=shown)


# --- "how" checks: rules about how the code does its job ---------------------------------

def _label(code):
    return getattr(code, "__qualname__", None) or getattr(code, "__name__", None) or "the code"


def _listed(items):
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@_reports
def check_not_used(code, forbidden, *, rule, name=None):
    """The code of ``code`` (a function, or a class: every method it defines) refers to
    none of ``forbidden`` -- read from its compiled code, without running it.

    ``forbidden`` lists names as the learner would write them: ``"logsumexp"`` (any
    function, method or attribute of that name), ``"F.cross_entropy"`` (also when reached
    under another name), ``"torch"`` (a module: any use of it).  ``rule`` is the exercise's
    rule in words; the feedback quotes it, with each use and its line in the cell.
    See ``course.observe.uses``.
    """
    label = name or _label(code)
    found = observe.uses(code, forbidden)
    nothing = "nothing the exercise rules out"
    what = f"{label} uses {_listed(found)}" if found else label
    check_equal(", ".join(found) or nothing, nothing,
                name=f"{what}, which the exercise rules out: {rule} (the check reads the code "
                     f"of {label})")


@_reports
def check_not_called(fn, inputs, forbidden, *, rule, name=None):
    """Calling ``fn`` with ``inputs`` calls none of the functions ``forbidden`` names
    (dotted names looked up in ``fn``'s globals: ``"F.log_softmax"``,
    ``"torch.Tensor.logsumexp"``); returns what ``fn`` returned, for further checks.

    The functions are watched while ``fn`` runs (``course.observe.spying``), so a call
    from a helper of the learner's counts too.  A function bound to another name *before*
    the call escapes the watch (``ce = F.cross_entropy`` in an earlier cell, and library
    code that imported it by name: watch ``"torch.nn.CrossEntropyLoss.forward"`` as well):
    pair this check with ``check_not_used``, which sees the names.
    """
    label = name or getattr(fn, "__name__", "the function")
    namespace = getattr(fn, "__globals__", None) or getattr(
        getattr(fn, "__call__", None), "__globals__", {})
    with observe.spying(forbidden, namespace) as calls:
        result = _call(fn, inputs)
    called = list(dict.fromkeys(calls))
    nothing = "no call the exercise rules out"
    what = f"{label} called {_listed(called)}" if called else label
    check_equal(", ".join(called) or nothing, nothing, inputs=_show_call(label, inputs),
                name=f"{what}, which the exercise rules out: {rule} (the check watched the "
                     f"calls {label} made)")
    return result


@_reports
def check_error_mentions(fn, inputs=(), *, raises, mentions, name=None):
    """Calling ``fn`` with ``inputs`` raises ``raises`` (as ``check_raises``), and the
    message mentions every fact of ``mentions``: a dict description -> fact, where a
    tuple is a shape (``(2, 3)``, also written ``[2, 3]`` or ``torch.Size([2, 3])``), an
    int a number of its own, a string a text, and a list alternatives (``[1, -1]``: a
    dimension counted from the left or from the right).
    """
    label = name or getattr(fn, "__name__", "the function")
    check_raises(fn, inputs, raises=raises, name=label)
    try:
        _call(fn, inputs)
    except raises as error:
        message = str(error)
    missing = observe.missing_mentions(message, mentions)
    everything = "mentions " + _listed(list(mentions))
    check_equal("leaves out " + _listed(missing) if missing else everything, everything,
                inputs={**_show_call(label, inputs), "its message": message},
                name=f"the {_kind_name(raises)} message of {label}")


def _kind_name(raises):
    return raises.__name__ if isinstance(raises, type) else " or ".join(r.__name__ for r in raises)


@_reports
def check_saved_for_backward(output, *, name=None):
    """``output`` came out of a custom ``autograd.Function`` whose forward saved what its
    backward needs with ``ctx.save_for_backward`` -- read from the recorded graph node
    (``output.grad_fn``, which is the ``ctx``): at least one tensor saved that way, and no
    tensor kept as a plain attribute of ``ctx`` (``ctx.t = t`` escapes the checks that
    ``save_for_backward`` makes: a tensor changed in place before backward, a graph freed
    by an earlier backward).
    """
    label = name or "the Function's forward"
    node = getattr(output, "grad_fn", None)
    if node is None:
        check_equal(describe(output), "a tensor with a grad_fn (the node of your Function)",
                    name=f"{label}: the output is not part of a recorded graph (did forward "
                         f"get an input that requires grad, and return a tensor?)")
        return
    kept = observe.tensor_attributes(node)
    check_equal(", ".join(f"ctx.{attribute}" for attribute in kept) or "none", "none",
                name=f"{label}: tensors kept as attributes of ctx instead of saved with "
                     f"ctx.save_for_backward (read from the recorded node, output.grad_fn)")
    saved = len(node.saved_tensors)
    check_equal(saved > 0, True, inputs={"tensors saved with ctx.save_for_backward": saved},
                name=f"{label}: saves what backward needs with ctx.save_for_backward (read "
                     f"from the recorded node, output.grad_fn)")
