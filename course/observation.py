"""What a check saw, as plain data, and how two such observations compare.

A check compares what the learner's code gave (``actual``) with what it should give
(``expected``).  Both are first turned into an *observation*: plain data that says
what the value is (its kind, shape, dtype and values as a numpy array of a fixed set
of dtypes, or a tagged structure of numbers, strings, lists, tuples, dicts and sets)
and how the learner's feedback describes it.  The comparisons below only ever look
at observations, never at the values themselves.

That is what lets grading trust a comparison.  In the learner's own kernel the
checks observe and compare on the spot, so the learner sees instant, specific
feedback.  In grading, the submission's kernel only *reports* its observations, as
JSON (``to_wire``), and the grader rebuilds them with ``from_wire`` -- a strict
reader that accepts nothing but this plain data -- and compares them with the
instructor's in its own process.  An ``__eq__`` that is always True, a tensor-like
whose ``numpy()`` lies or a patched ``numpy.isclose`` never takes part: they live in
the submission's process, and only numbers and strings leave it.

An observation of a value is a dict::

    {"describe": "learntorch Tensor, shape (2,), float32: [1., 2.]",
     "kind": "learntorch Tensor", "tensor": True, "none": False,
     "array": {"dtype": "float32", "shape": [2], "data": ndarray | None},
     "shape": [2], "plain": ["array", ...]}

What a call did (``check_raises``, ``check_function``) is an *outcome*:
``{"returned": observation}`` or ``{"raised": {"types": [...], "message": ...}}``.
"""
import base64
import json
import math
import operator
import re

import numpy as np

# how much of a learner's text (a repr, an exception message) an observation keeps
TEXT_LIMIT = 2000
# how much of a structure ``plain`` encodes before it stops (deeper or longer: "cut")
_DEPTH_LIMIT, _ITEMS_LIMIT = 12, 200_000


# --- describing values compactly (the learner's feedback shows these) ------------

def is_tensor_like(value):
    # learntorch.Tensor and torch.Tensor both have these; numpy arrays do not
    return hasattr(value, "detach") and hasattr(value, "numpy") and hasattr(value, "shape")


def kind(value):
    if is_tensor_like(value):
        module = type(value).__module__.split(".")[0]
        return f"{module} {type(value).__name__}"
    return type(value).__name__


def as_array(value):
    """A numpy view of a tensor-like, array, number or nested list (None if impossible)."""
    if is_tensor_like(value):
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


def plain_number(value):
    """A numpy scalar as the Python number it holds (``3``, not ``np.int64(3)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _values(array):
    text = np.array2string(array, precision=4, threshold=12, edgeitems=2,
                           max_line_width=88, separator=", ")
    return text.replace("\n", "\n" + " " * 12)


def cap(text, limit=TEXT_LIMIT):
    """``text`` cut to ``limit`` characters, saying so."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 20] + f"... ({len(text)} chars)"


def describe(value):
    """``learntorch Tensor, shape (2, 3), float32: [[...]]`` -- kind, shape, dtype, values."""
    if value is None:
        return "None (did the function forget to `return` its result?)"
    array = as_array(value)
    if array is None:
        text = repr(value)
        return f"{kind(value)}: {text if len(text) <= 200 else text[:197] + '...'}"
    if isinstance(value, (bool, int, float, np.generic)) and array.ndim == 0:
        return f"{kind(value)} {plain_number(value)!r}"
    if isinstance(value, (list, tuple)) and array.size <= 12:
        return f"{kind(value)} {value!r}"
    return f"{kind(value)}, shape {tuple(array.shape)}, {array.dtype}: {_values(array)}"


def describe_inputs(inputs):
    """The ``  input:    x = ...`` lines of a failure message (one string)."""
    if inputs is None or (isinstance(inputs, dict) and not inputs):
        return ""
    if isinstance(inputs, dict):
        lines = [f"  input:    {key} = {describe(val)}" for key, val in inputs.items()]
        return "\n".join(lines) + "\n"
    return f"  input:    {describe(inputs)}\n"


# --- observing ----------------------------------------------------------------------

# dtypes an observation may carry; anything else is converted (bfloat16 -> float32) or
# kept out.  from_wire accepts exactly these, so a reader never builds other objects.
_NUMERIC = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
            "uint64", "float16", "float32", "float64", "complex64", "complex128"}
_TEXT_DTYPE = re.compile(r"^[<>|]?[US]\d{1,5}$")


def _array_part(array):
    """The ``array`` entry of an observation: dtype name as the learner sees it, shape,
    and the values (None when they are not numbers, e.g. strings)."""
    name = str(array.dtype)
    shape = [int(n) for n in array.shape]
    if name in _NUMERIC:
        return {"dtype": name, "shape": shape, "data": np.asarray(array, order="C")}
    if array.dtype.kind == "f":     # bfloat16 and other float extensions: exact in float32
        return {"dtype": name, "shape": shape,
                "data": np.asarray(array.astype(np.float32), order="C")}
    if _TEXT_DTYPE.match(array.dtype.str):
        return {"dtype": name, "shape": shape, "data": np.asarray(array, order="C"),
                "text": True}
    return {"dtype": name, "shape": shape, "data": None}


def _shape_of(value, array):
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, type):
        try:
            return [operator.index(n) for n in tuple(shape)]
        except Exception:
            return None
    return None if array is None else [int(n) for n in array.shape]


def observe(value):
    """The observation of ``value`` (see the module docstring).  Its description and
    plain structure are filled in lazily (``describe_of``/``plain_of``): a passing
    check in the learner's kernel never pays for them."""
    array = as_array(value)
    return {"describe": None, "kind": kind(value), "tensor": is_tensor_like(value),
            "none": value is None,
            "array": None if array is None else _array_part(array),
            "shape": _shape_of(value, array), "plain": None, "_value": value}


def describe_of(observation):
    if observation.get("describe") is None:
        observation["describe"] = cap(describe(observation.get("_value")))
    return observation["describe"]


def plain_of(observation):
    if observation.get("plain") is None:
        observation["plain"] = plain(observation.get("_value"))
    return observation["plain"]


def outcome_returned(value):
    return {"returned": observe(value)}


def outcome_raised(error):
    types = [f"{c.__module__}.{c.__qualname__}" for c in type(error).__mro__]
    return {"raised": {"types": types, "name": type(error).__name__,
                       "message": cap(str(error))}}


def plain(value, depth=0, budget=None):
    """``value`` as a tagged structure of JSON types, for ``==`` comparisons."""
    budget = budget if budget is not None else [_ITEMS_LIMIT]
    budget[0] -= 1
    if budget[0] < 0 or depth > _DEPTH_LIMIT:
        return ["cut"]
    if value is None:
        return ["none"]
    if isinstance(value, (bool, np.bool_)):
        return ["num", bool(value)]
    if isinstance(value, (int, np.integer)):
        return ["num", int(value)]
    if isinstance(value, (float, np.floating)):
        return ["num", float(value)]
    if isinstance(value, (complex, np.complexfloating)):
        return ["complex", float(value.real), float(value.imag)]
    if isinstance(value, str):
        return ["str", cap(value, 100_000)]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes", bytes(value[:50_000]).hex()]
    if isinstance(value, np.ndarray) or is_tensor_like(value):
        array = as_array(value)
        part = None if array is None else _array_part(array)
        return ["cut"] if part is None or part["data"] is None else ["array", part]
    if isinstance(value, (list, tuple)):
        tag = "list" if isinstance(value, list) else "tuple"
        return [tag, [plain(v, depth + 1, budget) for v in value[:_ITEMS_LIMIT]]]
    if isinstance(value, dict):
        return ["dict", [[plain(k, depth + 1, budget), plain(v, depth + 1, budget)]
                         for k, v in list(value.items())[:_ITEMS_LIMIT]]]
    if isinstance(value, (set, frozenset)):
        items = [plain(v, depth + 1, budget) for v in list(value)[:_ITEMS_LIMIT]]
        return ["set", sorted(items, key=_canonical)]
    if isinstance(value, type):
        return ["type", f"{value.__module__}.{value.__qualname__}"]
    text = repr(value)
    return ["object", f"{type(value).__module__}.{type(value).__qualname__}", cap(text)]


def _canonical(item):
    return json.dumps(_jsonable(item), sort_keys=True, allow_nan=True)


def same(a, b):
    """Do two plain structures stand for equal values?  As Python's ``==`` on numbers,
    strings, lists, tuples, dicts and sets (``1 == 1.0 == True``, a list never equals
    a tuple, NaN equals nothing); arrays by shape and values; other objects by type
    and repr."""
    tag = a[0]
    if tag == "cut" or b[0] == "cut":
        return False
    if tag == "num" and b[0] == "num":
        return a[1] == b[1]
    if tag == "array" and b[0] == "array":
        x, y = a[1], b[1]
        return x["shape"] == y["shape"] and bool(np.all(x["data"] == y["data"]))
    if tag != b[0]:
        return False
    if tag in ("list", "tuple"):
        return len(a[1]) == len(b[1]) and all(same(x, y) for x, y in zip(a[1], b[1]))
    if tag == "dict":
        if len(a[1]) != len(b[1]):
            return False
        others = {_canonical(k): v for k, v in b[1]}
        return all(_canonical(k) in others and same(v, others[_canonical(k)])
                   for k, v in a[1])
    if tag == "set":
        return len(a[1]) == len(b[1]) and all(same(x, y) for x, y in zip(a[1], b[1]))
    return a == b


# --- comparing ------------------------------------------------------------------------

class Failure:
    """Why a comparison failed: the words of the learner's message."""

    def __init__(self, what, expected, got, detail=""):
        self.what, self.expected, self.got, self.detail = what, expected, got, detail

    def message(self, name, inputs_text=""):
        text = (f"{name}: {self.what}\n" + inputs_text
                + f"  expected: {self.expected}\n  got:      {self.got}")
        return text + ("\n  " + self.detail if self.detail else "")


def _data(observation):
    part = observation.get("array")
    return None if part is None else part.get("data")


def _array(observation):
    """(values, dtype name) of an observation's array part, or (None, None)."""
    part = observation.get("array")
    if part is None:
        return None, None
    return part.get("data"), part["dtype"]


def compare_close(actual, expected, atol=1e-6, rtol=1e-5, check_dtype=False):
    got, got_dtype = _array(actual)
    want, want_dtype = _array(expected)
    if want is None or expected["array"].get("text"):
        raise TypeError(f"check_close compares numbers, arrays and tensors; expected is "
                        f"{expected['kind']} (use check_equal for other objects)")
    if actual.get("array") is None:
        return Failure("not a number, array or tensor", describe_of(expected),
                       describe_of(actual))
    if expected["tensor"] and not actual["tensor"]:
        return Failure("expected a tensor", describe_of(expected), describe_of(actual),
                       "return a tensor (an array or number has no autograd graph)")
    got_shape, want_shape = tuple(actual["array"]["shape"]), tuple(expected["array"]["shape"])
    if got_shape != want_shape:
        return Failure("wrong shape", describe_of(expected), describe_of(actual),
                       f"shape {got_shape} instead of {want_shape}")
    if check_dtype and got_dtype != want_dtype:
        return Failure("wrong dtype", describe_of(expected), describe_of(actual),
                       f"dtype {got_dtype} instead of {want_dtype}")
    if got is None or actual["array"].get("text"):
        return Failure("not numeric", describe_of(expected), describe_of(actual))
    got64 = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
    want64 = want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    close = np.isclose(got64, want64, atol=atol, rtol=rtol, equal_nan=False)
    if np.all(close):
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    with np.errstate(invalid="ignore"):
        diff = np.abs(got64 - want64)
    worst = float(np.nanmax(diff)) if np.any(np.isfinite(diff)) else float("nan")
    where = f" at index {first}" if got64.ndim else ""
    detail = (f"{len(bad)} of {got64.size} values differ; first{where}: got "
              f"{got64[first]:.6g}, expected {want64[first]:.6g} (largest difference "
              f"{worst:.3g}; atol={atol:g}, rtol={rtol:g})")
    return Failure("wrong values", describe_of(expected), describe_of(actual), detail)


def compare_equal(actual, expected):
    got, want = _data(actual), _data(expected)
    array_path = expected.get("array") is not None and (actual.get("array") is not None
                                                       or expected["tensor"])
    if not array_path:
        if same(plain_of(actual), plain_of(expected)):
            return None
        return Failure("wrong result", describe_of(expected), describe_of(actual))
    if actual.get("array") is None:
        return Failure("not a number, array or tensor", describe_of(expected),
                       describe_of(actual))
    got_shape, want_shape = tuple(actual["array"]["shape"]), tuple(expected["array"]["shape"])
    if got_shape != want_shape:
        return Failure("wrong shape", describe_of(expected), describe_of(actual),
                       f"shape {got_shape} instead of {want_shape}")
    if got is None or want is None:   # values of a dtype an observation cannot hold
        differ = np.ones(got_shape, dtype=bool)
    else:
        try:
            differ = np.asarray(got != want)
        except Exception:   # e.g. numbers against strings
            differ = np.ones(got_shape, dtype=bool)
        if differ.shape != got_shape:
            differ = np.ones(got_shape, dtype=bool)
    if not np.any(differ):
        return None
    first = tuple(int(i) for i in np.argwhere(differ)[0]) if differ.ndim else ()
    where = f" at index {first}" if differ.ndim else ""
    shown = (f"; first{where}: got {plain_number(got[first])!r}, expected "
             f"{plain_number(want[first])!r}") if got is not None and want is not None else ""
    return Failure("wrong values", describe_of(expected), describe_of(actual),
                   f"{int(np.sum(differ))} of {differ.size} values differ{shown}")


def compare_shape(actual, expected_shape):
    want = tuple(expected_shape)
    if actual["none"]:
        return Failure("wrong shape", f"shape {want}", describe_of(actual))
    if actual.get("shape") is None:
        return Failure("has no shape", f"shape {want}", describe_of(actual))
    shape = tuple(actual["shape"])
    if shape != want:
        return Failure("wrong shape", f"shape {want}",
                       f"shape {shape} ({describe_of(actual)})")
    return None


def raises_spec(raises, match=None):
    """What ``check_raises(..., raises=, match=)`` expects, as plain data."""
    classes = raises if isinstance(raises, tuple) else (raises,)
    return {"raises": [f"{c.__module__}.{c.__qualname__}" for c in classes],
            "wanted": " or ".join(c.__name__ for c in classes), "match": match}


def expected_text(spec):
    return f"raises {spec['wanted']}" + (f" with {spec['match']!r} in its message"
                                         if spec["match"] else "")


def compare_raises(outcome, spec):
    wanted = expected_text(spec)
    if "returned" in outcome:
        return Failure("no exception raised", wanted,
                       f"returned {describe_of(outcome['returned'])}")
    raised = outcome["raised"]
    shown = f"{raised['name']}: {raised['message']}"
    if not set(raised["types"]) & set(spec["raises"]):
        return Failure("wrong exception type", wanted, shown)
    if spec["match"] is not None and spec["match"] not in raised["message"]:
        return Failure("wrong error message", wanted, shown)
    return None


def compare(check_kind, actual, expected, options=None):
    """The failure (or None) of one comparison; ``actual`` is an outcome for "raises"
    and a value observation otherwise."""
    options = options or {}
    if check_kind == "close":
        return compare_close(actual, expected, **options)
    if check_kind == "equal":
        return compare_equal(actual, expected)
    if check_kind == "shape":
        return compare_shape(actual, expected["shape"])
    if check_kind == "raises":
        return compare_raises(actual, expected)
    raise ValueError(f"unknown comparison {check_kind!r}")


# --- crossing a process boundary ---------------------------------------------------------

def _jsonable(item):
    """An observation (or part) with its arrays as base64 and its private parts gone."""
    if isinstance(item, dict):
        out = {}
        for key, value in item.items():
            if key.startswith("_"):
                continue
            if key == "data" and isinstance(value, np.ndarray):
                value = base64.b64encode(value.astype(value.dtype.newbyteorder("<"),
                                                      copy=False).tobytes()).decode("ascii")
            else:
                value = _jsonable(value)
            out[key] = value
        return out
    if isinstance(item, (list, tuple)):
        return [_jsonable(v) for v in item]
    return item


def complete(observation):
    """Fill in an observation's lazy parts (description, plain structure) before its
    value is gone."""
    if "raised" in observation:
        return observation
    if "returned" in observation:
        complete(observation["returned"])
        return observation
    describe_of(observation)
    if observation.get("array") is None or observation["array"].get("data") is None \
            or not (observation["tensor"] or isinstance(observation.get("_value"), np.ndarray)):
        plain_of(observation)
    return observation


def to_wire(record):
    """One JSON line for ``record`` (a dict that may hold observations)."""
    return json.dumps(_jsonable(record), allow_nan=True, separators=(",", ":"))


class WireError(ValueError):
    """A line that is not a well-formed record: the reader refuses it whole."""


def _check(condition, what):
    if not condition:
        raise WireError(what)


def text_field(value, limit=TEXT_LIMIT + 100):
    """``value`` when it is a string of at most ``limit`` characters (WireError otherwise)."""
    _check(isinstance(value, str) and len(value) <= limit, "a text field is not a short string")
    return value


def _read_array(part):
    _check(isinstance(part, dict), "array is not an object")
    _check(set(part) <= {"dtype", "shape", "data", "text"}, "unknown array field")
    dtype_name = text_field(part.get("dtype"), 40)
    shape = part.get("shape")
    _check(isinstance(shape, list) and len(shape) <= 32
           and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in shape),
           "array shape is not a list of sizes")
    size = math.prod(shape)
    _check(size <= 50_000_000, "array too large")
    data = part.get("data")
    text = part.get("text", False)
    _check(isinstance(text, bool), "array text flag is not a bool")
    if data is None:
        return {"dtype": dtype_name, "shape": shape, "data": None}
    _check(isinstance(data, str), "array data is not base64 text")
    if text:
        _check(bool(_TEXT_DTYPE.match(dtype_name if dtype_name[0] in "<>|" else "<" + dtype_name))
               or dtype_name.startswith(("<U", "|S", "str", "bytes")), "bad text dtype")
        dtype = None
        for candidate in (dtype_name, "<" + dtype_name.lstrip("<>|")):
            if _TEXT_DTYPE.match(candidate):
                dtype = np.dtype(candidate)
                break
        _check(dtype is not None, "bad text dtype")
    elif dtype_name in _NUMERIC:
        dtype = np.dtype(dtype_name)
    else:
        dtype = np.dtype("float32")   # an extension float, sent as float32 (see _array_part)
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    wire_dtype = dtype.newbyteorder("<") if dtype.byteorder not in ("|",) else dtype
    _check(len(raw) == size * wire_dtype.itemsize, "array data does not match its shape")
    values = np.frombuffer(raw, dtype=wire_dtype).astype(dtype.newbyteorder("="),
                                                          copy=True).reshape(shape)
    out = {"dtype": dtype_name, "shape": shape, "data": values}
    if text:
        out["text"] = True
    return out


def _read_plain(item, depth=0):
    _check(depth <= _DEPTH_LIMIT + 2, "structure too deep")
    _check(isinstance(item, list) and item and isinstance(item[0], str), "bad plain value")
    tag = item[0]
    if tag in ("none", "cut"):
        _check(len(item) == 1, "bad plain value")
    elif tag == "num":
        _check(len(item) == 2 and isinstance(item[1], (bool, int, float)), "bad number")
    elif tag == "complex":
        _check(len(item) == 3 and all(isinstance(v, (int, float)) for v in item[1:]),
               "bad complex")
    elif tag in ("str", "bytes", "type"):
        _check(len(item) == 2 and isinstance(item[1], str) and len(item[1]) <= 200_000,
               "bad text value")
    elif tag == "object":
        _check(len(item) == 3, "bad object")
        text_field(item[1]), text_field(item[2])
    elif tag == "array":
        _check(len(item) == 2, "bad array value")
        return ["array", _read_array(item[1])]
    elif tag in ("list", "tuple", "set"):
        _check(len(item) == 2 and isinstance(item[1], list), "bad sequence")
        return [tag, [_read_plain(v, depth + 1) for v in item[1]]]
    elif tag == "dict":
        _check(len(item) == 2 and isinstance(item[1], list), "bad dict")
        pairs = []
        for pair in item[1]:
            _check(isinstance(pair, list) and len(pair) == 2, "bad dict item")
            pairs.append([_read_plain(pair[0], depth + 1), _read_plain(pair[1], depth + 1)])
        return ["dict", pairs]
    else:
        raise WireError(f"unknown plain tag {tag[:20]!r}")
    return item


def read_observation(item):
    """A value observation from parsed JSON, checked field by field."""
    _check(isinstance(item, dict), "observation is not an object")
    _check(set(item) <= {"describe", "kind", "tensor", "none", "array", "shape", "plain"},
           "unknown observation field")
    out = {"describe": text_field(item.get("describe")),
           "kind": text_field(item.get("kind"), 300),
           "tensor": item.get("tensor"), "none": item.get("none")}
    _check(isinstance(out["tensor"], bool) and isinstance(out["none"], bool),
           "tensor/none are not booleans")
    out["array"] = None if item.get("array") is None else _read_array(item["array"])
    shape = item.get("shape")
    _check(shape is None or (isinstance(shape, list) and len(shape) <= 32 and all(
        isinstance(n, int) and not isinstance(n, bool) for n in shape)), "bad shape")
    out["shape"] = shape
    out["plain"] = None if item.get("plain") is None else _read_plain(item["plain"])
    if out["plain"] is None:
        # a value sent without its plain structure: its array stands for it
        out["plain"] = ["cut"] if out["array"] is None or out["array"]["data"] is None \
            else ["array", out["array"]]
    return out


def read_outcome(item):
    _check(isinstance(item, dict) and len(item) == 1, "outcome is not a one-field object")
    if "returned" in item:
        return {"returned": read_observation(item["returned"])}
    raised = item.get("raised")
    _check(isinstance(raised, dict) and set(raised) == {"types", "name", "message"},
           "bad raised outcome")
    types = raised["types"]
    _check(isinstance(types, list) and len(types) <= 64, "bad exception types")
    return {"raised": {"types": [text_field(t, 300) for t in types],
                       "name": text_field(raised["name"], 300),
                       "message": text_field(raised["message"])}}
