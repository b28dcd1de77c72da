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

**How checks are graded -- a new check must go through ``_verdict``.**  Every
comparison a check makes goes through one function, ``_verdict(kind, actual,
expected, ...)``, with both sides already turned into plain-data *observations*
(``course/observation.py``).  In a learner's kernel it compares them on the spot.
In grading (``learntorch-course grade``, see ``course/grading/``) the same cells run
twice: in the instructor's notebook, where ``_verdict`` also reports what it compared,
and in the submission's sandboxed kernel, where it only *reports* what the learner's
code gave -- the grader then compares that with the instructor's run in its own
process.  A check written on top of ``check_close``/``check_equal``/``check_shape``/
``check_raises``, or calling ``_verdict`` itself, is graded this way without anything
more; one that raises ``ExerciseCheckFailed`` on its own still fails a submission
when it fires, but grading cannot tell that it passed.  Declare with ``@_reports``
which arguments hold the expected values (by default the parameters named
``expected`` or ``expected_...``): grading withholds those from the submission's copy
of the check cells, so its kernel never sees them.
"""
import functools
import inspect
import os

from . import observation as _obs
from .observation import describe  # noqa: F401 (chapters and new checks describe values)

from . import observe

__all__ = ["ExerciseCheckFailed", "exercise", "check_close", "check_equal", "check_shape",
           "check_raises", "check_function", "check_not_used", "check_not_called",
           "check_error_mentions", "check_saved_for_backward"]

# the helpers this module had before observation.py took them over
_is_tensor_like, _kind, _as_array, _plain = (_obs.is_tensor_like, _obs.kind, _obs.as_array,
                                             _obs.plain_number)
_describe_inputs = _obs.describe_inputs


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


def _fail(what, name, inputs, expected, actual, detail=""):
    raise ExerciseCheckFailed(_obs.Failure(what, expected, actual, detail).message(
        name, _describe_inputs(inputs)))


def _passed(exercise_id):
    print(f"✓ {exercise_id} passed")


# --- the one point every comparison goes through -------------------------------------

class _Grading:
    """How checks behave in this kernel: ``mode`` is None in a learner's kernel;
    ``learntorch-course grade`` sets it to "trusted" (the instructor's notebook) or
    "sandbox" (a submission) through ``course/grading/in_kernel.py``."""
    mode = None
    channel = None      # file descriptor of the pipe to the grader
    site = None         # the numbered check call (grading labels each one) now running

    def report(self, record):
        data = (_obs.to_wire(record) + "\n").encode("utf-8")
        while data:  # a pipe takes big records in pieces; the grader reads as we write
            data = data[os.write(self.channel, data):]


_grading = _Grading()

# what a check receives, in a submission's copy of a check cell, instead of an
# expected value that grading keeps to itself
_WITHHELD = type("Withheld", (), {"__repr__": lambda self: "<withheld by the grader>"})()


def _verdict(check_kind, actual, expected, *, name, inputs=None, options=None):
    """Compare ``actual`` with ``expected`` (observations, or for "raises" an outcome
    and a ``raises_spec``) and raise ExerciseCheckFailed when they differ.

    Every check's comparison goes through here: in grading it reports the
    observations to the grader instead of (in a submission) or as well as (in the
    instructor's run) judging them itself.  ``expected`` is None when grading
    withheld it."""
    if _grading.mode is not None:
        record = {"site": _grading.site, "kind": check_kind, "name": _obs.cap(name),
                  "inputs": _obs.cap(_describe_inputs(inputs)),
                  "actual": _obs.complete(actual),
                  "expected": None if expected is None else _complete_expected(expected),
                  "options": options or {}}
        if _grading.mode == "sandbox":
            # the grader judges; here the cell only goes on as the learner's would
            _grading.report({"check": record})
            if expected is None or check_kind == "call":
                return
    failure = _obs.compare(check_kind, actual, expected, options)
    if _grading.mode == "trusted":
        record["failure"] = None if failure is None else failure.message(name)
        _grading.report({"check": record})
    if failure is not None:
        raise ExerciseCheckFailed(failure.message(name, _describe_inputs(inputs)))


def _complete_expected(expected):
    return _obs.complete(expected) if "kind" in expected else expected


def _expected(value, make):
    """``make(value)``, or None where grading withheld the value."""
    return None if value is _WITHHELD else make(value)


def _reports(check=None, *, withheld=None):
    """Mark ``check`` as a check and give it an ``exercise=`` keyword: with it, the
    check runs inside ``with exercise(...)`` (the ✓ line on success, the id in a
    failure's message).

    ``withheld`` names the parameters that hold expected values (default: those named
    ``expected`` or ``expected_...``); ``"cases[*][1]"`` is the second item of each
    pair of a literal list.  Grading replaces those arguments by ``_WITHHELD`` in the
    submission's copy of a check cell."""
    if check is None:
        return lambda function: _reports(function, withheld=withheld)

    @functools.wraps(check)
    def wrapper(*args, exercise=None, **kwargs):
        if exercise is None:
            return check(*args, **kwargs)
        with _Exercise(exercise):
            return check(*args, **kwargs)
    if withheld is None:
        withheld = tuple(p for p in inspect.signature(check).parameters
                         if p == "expected" or p.startswith("expected_"))
    wrapper._learntorch_withheld = tuple(withheld)
    return wrapper


def _at_site(site, check):
    """``check``, numbered: grading labels each check call of the instructor's cells
    so that an observation is matched to the call it came from."""
    @functools.wraps(check)
    def at_site(*args, **kwargs):
        outer, _grading.site = _grading.site, site
        try:
            return check(*args, **kwargs)
        finally:
            _grading.site = outer
    return at_site


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
    _verdict("close", _obs.observe(actual), _expected(expected, _obs.observe), name=name,
             inputs=inputs, options={"atol": atol, "rtol": rtol, "check_dtype": check_dtype})


@_reports
def check_equal(actual, expected, *, name="result", inputs=None):
    """``actual == expected`` exactly: same shape and values for arrays and tensors;
    for everything else (ints, strings, tuples such as a shape, dicts, None, ...) the
    values compared as plain data -- numbers by value, lists and tuples item by item,
    other objects by type and repr (never by their own ``__eq__``)."""
    _verdict("equal", _obs.observe(actual), _expected(expected, _obs.observe), name=name,
             inputs=inputs)


@_reports(withheld=("expected_shape",))
def check_shape(actual, expected_shape, *, name="result", inputs=None):
    """``actual.shape`` (or ``np.shape(actual)``) equals ``expected_shape``."""
    _verdict("shape", _obs.observe(actual),
             _expected(expected_shape, lambda shape: {"shape": [int(n) for n in shape]}),
             name=name, inputs=inputs)


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


def _outcome(fn, inputs, let_through=()):
    """What calling ``fn`` with ``inputs`` did: returned a value or raised an Exception
    (an exception of ``let_through`` is raised again, as are non-Exceptions)."""
    try:
        result = _call(fn, inputs)
    except let_through:
        raise
    except Exception as error:
        return _obs.outcome_raised(error)
    return _obs.outcome_returned(result)


@_reports(withheld=("raises", "match"))
def check_raises(fn, inputs=(), *, raises, name=None, match=None):
    """Calling ``fn`` with ``inputs`` raises ``raises`` (an exception class or tuple of
    them), with ``match`` (a substring) in its message when given.

    ``inputs`` as for ``check_function``: a tuple of positional arguments, a dict of
    keyword arguments, or a single argument.
    """
    name = name or getattr(fn, "__name__", "the function")
    spec = None if raises is _WITHHELD else _obs.raises_spec(
        raises, None if match is _WITHHELD else match)
    # the learner copy's stub: let its own message speak (unless it is what is expected)
    stub = () if _grading.mode == "sandbox" or (spec and any(
        issubclass(NotImplementedError, c) for c in (raises if isinstance(raises, tuple)
                                                     else (raises,)))) \
        else (NotImplementedError,)
    _verdict("raises", _outcome(fn, inputs, stub), spec, name=name,
             inputs=_show_call(name, inputs))


@_reports(withheld=("cases[*][1]",))
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
        shown = _show_call(name, inputs)
        if expected is _WITHHELD:
            # a submission in grading: report what the call did; the grader knows
            # whether it had to raise or return what
            _verdict("call", _outcome(fn, inputs), None, name=name, inputs=shown)
            continue
        if isinstance(expected, type) and issubclass(expected, BaseException):
            check_raises(fn, inputs, raises=expected, name=name)
            continue
        result = _call(fn, inputs)
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
