"""What the differential fuzzer generates: small programs over tensors, as plain data.

A program is a list of input tensors (dtype, shape, values, layout, requires_grad) and a
list of steps; each step names an op from the tables below and the variables it reads
(by position, modulo how many there are), plus its own parameters.  Being plain data,
one program runs unchanged against learntorch and against torch (``fuzz_runner.py``),
and hypothesis shrinks a failing one to a short one.

Areas (one table each):

* ``elementwise`` -- arithmetic with tensors and Python scalars, unary math,
  comparisons, bit and logical ops, clamp, where, masked_fill, over every dtype;
* ``reductions``  -- sums, extremes, statistics, sorts and scans along dims;
* ``views``       -- view ops and in-place ops through views, reads and writes by index;
* ``autograd``    -- differentiable programs on float leaves: first and second order.

Inputs cover 0-d and empty tensors, non-contiguous layouts (transposed, strided) and
nan / inf / -0.0 among the floats.
"""
import math

import numpy as np
from hypothesis import strategies as st

FLOATS = ("float16", "float32", "float64")
INTEGERS = ("uint8", "int8", "int16", "int32", "int64")
DTYPES = FLOATS + INTEGERS + ("bool",)
SPECIAL = (math.nan, math.inf, -math.inf, 0.0, -0.0)


# ---------------------------------------------------------------- inputs
@st.composite
def values_of(draw, dtype, shape):
    """An array of ``dtype`` and ``shape``: small numbers, some special floats."""
    n = int(np.prod(shape)) if shape else 1
    if dtype in FLOATS:
        plain = st.floats(-4, 4, width=16).map(lambda v: round(v, 2))
        element = st.one_of(plain, plain, plain, st.sampled_from(SPECIAL))
    elif dtype == "bool":
        element = st.booleans()
    elif dtype == "uint8":
        element = st.one_of(st.integers(0, 9), st.sampled_from([0, 1, 127, 200, 255]))
    else:
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        element = st.one_of(st.integers(-9, 9), st.sampled_from([lo, hi, -1, 0, 1]))
    flat = draw(st.lists(element, min_size=n, max_size=n))
    return np.array(flat, dtype=dtype).reshape(shape)


SHAPES = st.sampled_from([(), (1,), (3,), (0,), (2, 3), (3, 1), (1, 4), (2, 0), (2, 2, 3),
                          (4, 3)])


@st.composite
def input_spec(draw, dtypes=DTYPES, shape=None, requires_grad=False):
    """(dtype, shape, values, layout, requires_grad) of one input tensor."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(SHAPES) if shape is None else shape
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    if layout == "transposed" and len(shape) < 2:
        layout = "contiguous"
    if layout == "strided" and not shape:
        layout = "contiguous"
    values = draw(values_of(dtype, shape))
    return {"dtype": dtype, "shape": shape, "values": values, "layout": layout,
            "requires_grad": requires_grad and dtype in ("float32", "float64")}


def make_tensor(lib, spec):
    """The input tensor of ``spec`` in ``lib``: same values, same layout in memory."""
    values = spec["values"]
    if spec["layout"] == "transposed":
        t = lib.tensor(np.ascontiguousarray(np.swapaxes(values, -1, -2))).transpose(-1, -2)
    elif spec["layout"] == "strided":
        wide = np.repeat(values, 2, axis=-1)
        t = lib.tensor(wide)[..., ::2]
    else:
        t = lib.tensor(values)
    if spec["requires_grad"]:
        t = t.detach().requires_grad_(True)
    return t


# ---------------------------------------------------------------- the op tables
# Each op: (number of tensor operands, parameter strategy, function(lib, *tensors, p)).
SCALARS = st.one_of(st.integers(-3, 300), st.sampled_from([0.5, -1.5, 2.0, 0.37, 1e-3, 2049,
                                                           True, False, -1, 256]))
DIM = st.integers(-3, 2)


def _binary(name):
    ops = {"add": lambda lib, a, b: a + b, "sub": lambda lib, a, b: a - b,
           "mul": lambda lib, a, b: a * b, "div": lambda lib, a, b: a / b,
           "floordiv": lambda lib, a, b: a // b, "mod": lambda lib, a, b: a % b,
           "pow": lambda lib, a, b: a ** b, "eq": lambda lib, a, b: a == b,
           "lt": lambda lib, a, b: a < b, "ge": lambda lib, a, b: a >= b,
           "and": lambda lib, a, b: a & b, "or": lambda lib, a, b: a | b,
           "xor": lambda lib, a, b: a ^ b}
    return ops[name]


ELEMENTWISE = {}
for _name in ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "eq", "lt", "ge", "and",
              "or", "xor"):
    ELEMENTWISE[_name] = (2, st.none(), lambda lib, a, b, p, f=_binary(_name): f(lib, a, b))
    ELEMENTWISE[_name + " scalar"] = (1, SCALARS,
                                      lambda lib, a, p, f=_binary(_name): f(lib, a, p))
    ELEMENTWISE["scalar " + _name] = (1, SCALARS,
                                      lambda lib, a, p, f=_binary(_name): f(lib, p, a))
ELEMENTWISE.update({
    "add alpha": (2, st.sampled_from([-1, 2, 0.5, True]),
                  lambda lib, a, b, p: lib.add(a, b, alpha=p)),
    "div floor": (2, st.none(), lambda lib, a, b, p: lib.div(a, b, rounding_mode="floor")),
    "div trunc": (2, st.none(), lambda lib, a, b, p: lib.div(a, b, rounding_mode="trunc")),
    "maximum": (2, st.none(), lambda lib, a, b, p: lib.maximum(a, b)),
    "minimum": (2, st.none(), lambda lib, a, b, p: lib.minimum(a, b)),
    "where": (2, st.none(), lambda lib, a, b, p: lib.where(a > 0, a, b)),
    "fmod": (2, st.none(), lambda lib, a, b, p: lib.fmod(a, b)),
    "fmod scalar": (1, SCALARS, lambda lib, a, p: lib.fmod(a, p)),
    "atan2": (2, st.none(), lambda lib, a, b, p: lib.atan2(a, b)),
    "hypot": (2, st.none(), lambda lib, a, b, p: lib.hypot(a, b)),
    "xlogy": (2, st.none(), lambda lib, a, b, p: lib.xlogy(a, b)),
    "logical_and": (2, st.none(), lambda lib, a, b, p: lib.logical_and(a, b)),
    "isclose": (2, st.none(), lambda lib, a, b, p: lib.isclose(a, b)),
    "masked_fill": (2, SCALARS, lambda lib, a, b, p: a.masked_fill(b > 0, p)),
    "clamp": (1, st.tuples(st.sampled_from([None, -1, 0.5, 2]), st.sampled_from([None, 1, 3.5])),
              lambda lib, a, p: a.clamp(*p)),
    "lerp": (2, st.sampled_from([0.0, 0.3, 1.0]), lambda lib, a, b, p: lib.lerp(a, b, p)),
    "addcmul": (2, st.sampled_from([1, 0.5, 2]),
                lambda lib, a, b, p: lib.addcmul(a, a, b, value=p)),
    "nan_to_num": (1, st.none(), lambda lib, a, p: lib.nan_to_num(a)),
    "bitwise_not": (1, st.none(), lambda lib, a, p: lib.bitwise_not(a)),
    "logical_not": (1, st.none(), lambda lib, a, p: lib.logical_not(a)),
    "round decimals": (1, st.sampled_from([1, 2]), lambda lib, a, p: lib.round(a, decimals=p)),
    "to": (1, st.sampled_from(DTYPES), lambda lib, a, p: a.to(getattr(lib, p))),
})
for _name in ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
              "sigmoid", "relu", "floor", "ceil", "round", "trunc", "sign", "reciprocal",
              "log1p", "expm1", "isnan", "isinf", "asin", "atan", "sinh", "asinh", "erf",
              "lgamma", "digamma", "square", "logit", "signbit"):
    ELEMENTWISE[_name] = (1, st.none(), lambda lib, a, p, n=_name: getattr(lib, n)(a))

REDUCTIONS = {
    "sum": (1, st.none(), lambda lib, a, p: a.sum()),
    "sum dim": (1, DIM, lambda lib, a, p: a.sum(p)),
    "sum keepdim": (1, DIM, lambda lib, a, p: a.sum(p, keepdim=True)),
    "mean": (1, st.none(), lambda lib, a, p: a.mean()),
    "mean dim": (1, DIM, lambda lib, a, p: a.mean(p)),
    "prod": (1, st.none(), lambda lib, a, p: a.prod()),
    "prod dim": (1, DIM, lambda lib, a, p: a.prod(p)),
    "amax": (1, DIM, lambda lib, a, p: a.amax(p)),
    "amin all": (1, st.none(), lambda lib, a, p: a.amin()),
    "max": (1, st.none(), lambda lib, a, p: a.max()),
    "max dim": (1, DIM, lambda lib, a, p: a.max(p)),
    "min dim keepdim": (1, DIM, lambda lib, a, p: a.min(p, keepdim=True)),
    "argmax": (1, DIM, lambda lib, a, p: a.argmax(p)),
    "argmin all": (1, st.none(), lambda lib, a, p: a.argmin()),
    "var": (1, st.none(), lambda lib, a, p: a.var()),
    "std dim": (1, DIM, lambda lib, a, p: a.std(p)),
    "var_mean": (1, DIM, lambda lib, a, p: lib.var_mean(a, p)),
    "logsumexp": (1, DIM, lambda lib, a, p: a.logsumexp(p)),
    "norm": (1, st.sampled_from([1, 2, 3, math.inf, -math.inf, 0]),
             lambda lib, a, p: a.norm(p=p)),
    "all": (1, st.none(), lambda lib, a, p: a.all()),
    "any dim": (1, DIM, lambda lib, a, p: a.any(p)),
    "count_nonzero": (1, st.none(), lambda lib, a, p: lib.count_nonzero(a)),
    "nansum": (1, st.none(), lambda lib, a, p: lib.nansum(a)),
    "cumsum": (1, DIM, lambda lib, a, p: a.cumsum(p)),
    "cumprod": (1, DIM, lambda lib, a, p: a.cumprod(p)),
    "cummax": (1, DIM, lambda lib, a, p: a.cummax(p)),
    "sort stable": (1, st.tuples(DIM, st.booleans()),
                    lambda lib, a, p: a.sort(dim=p[0], descending=p[1], stable=True)),
    "sort values": (1, DIM, lambda lib, a, p: a.sort(p).values),
    "argsort": (1, DIM, lambda lib, a, p: a.argsort(dim=p, stable=True)),
    "topk": (1, st.tuples(st.integers(0, 3), st.booleans(), st.booleans()),
             lambda lib, a, p: a.topk(min(p[0], a.shape[-1] if a.ndim else 1),
                                      largest=p[1], sorted=p[2])),
    "median": (1, st.none(), lambda lib, a, p: a.median()),
    "median dim": (1, DIM, lambda lib, a, p: a.median(p)),
    "kthvalue": (1, st.integers(1, 3), lambda lib, a, p: a.kthvalue(p)),
    "mode": (1, st.none(), lambda lib, a, p: a.mode()),
    "unique": (1, st.none(), lambda lib, a, p: lib.unique(a, return_counts=True)),
    "quantile": (1, st.sampled_from([0.0, 0.3, 1.0]), lambda lib, a, p: lib.quantile(a, p)),
}

VIEWS = {
    "t": (1, st.none(), lambda lib, a, p: a.t()),
    "transpose": (1, st.tuples(DIM, DIM), lambda lib, a, p: a.transpose(*p)),
    "reshape": (1, st.sampled_from([(-1,), (1, -1), (-1, 1)]), lambda lib, a, p: a.reshape(p)),
    "view": (1, st.sampled_from([(-1,), (1, -1)]), lambda lib, a, p: a.view(p)),
    "unsqueeze": (1, DIM, lambda lib, a, p: a.unsqueeze(p)),
    "squeeze": (1, DIM, lambda lib, a, p: a.squeeze(p)),
    "expand": (1, st.sampled_from([(2, -1), (3, 1, -1)]),
               lambda lib, a, p: a.reshape(-1)[:1].expand(*p[:-1], a.reshape(-1)[:1].shape[0])),
    "narrow": (1, st.tuples(DIM, st.integers(0, 2), st.integers(0, 2)),
               lambda lib, a, p: a.narrow(*p)),
    "select": (1, st.tuples(DIM, st.integers(-2, 2)), lambda lib, a, p: a.select(*p)),
    "slice": (1, st.integers(1, 2), lambda lib, a, p: a[::p]),
    "index 0": (1, st.none(), lambda lib, a, p: a[0]),
    "index list": (1, st.none(), lambda lib, a, p: a[[0, 0, -1]]),
    "mask": (1, st.none(), lambda lib, a, p: a[a > 0]),
    "flip": (1, DIM, lambda lib, a, p: a.flip(p)),
    "diagonal": (1, st.integers(-1, 1), lambda lib, a, p: a.diagonal(p)),
    "clone": (1, st.none(), lambda lib, a, p: a.clone()),
    "contiguous": (1, st.none(), lambda lib, a, p: a.contiguous()),
    "add_": (1, SCALARS, lambda lib, a, p: a.add_(p)),
    "mul_": (1, SCALARS, lambda lib, a, p: a.mul_(p)),
    "fill_": (1, SCALARS, lambda lib, a, p: a.fill_(p)),
    "zero_": (1, st.none(), lambda lib, a, p: a.zero_()),
    "clamp_": (1, st.sampled_from([(0, 1), (None, 2)]), lambda lib, a, p: a.clamp_(*p)),
    "copy_": (2, st.none(), lambda lib, a, b, p: a.copy_(b)),
    "add_ tensor": (2, st.none(), lambda lib, a, b, p: a.add_(b)),
    "setitem": (1, SCALARS, lambda lib, a, p: a.__setitem__(0, p) or a),
    "setitem mask": (1, SCALARS, lambda lib, a, p: a.__setitem__(a > 0, p) or a),
    "masked_fill_": (1, SCALARS, lambda lib, a, p: a.masked_fill_(a > 0, p)),
    "eq_": (1, SCALARS, lambda lib, a, p: a.eq_(p)),
    "index_add": (1, st.none(), lambda lib, a, p: a.index_add(0, lib.tensor([0]), a[:1])),
    "gather": (1, st.none(), lambda lib, a, p: a.gather(-1, lib.zeros_like(a, dtype=lib.int64))),
    "scatter": (1, SCALARS, lambda lib, a, p: a.scatter(-1, lib.zeros_like(a, dtype=lib.int64),
                                                        p)),
}

def _points(lib, t):
    flat = t.reshape(-1)
    return lib.stack([flat, flat.sin()], -1)


# differentiable steps on float tensors (the autograd area)
AUTOGRAD = {
    "mul": (2, st.none(), lambda lib, a, b, p: a * b),
    "div": (2, st.none(), lambda lib, a, b, p: a / (b.abs() + 0.5)),
    "add scalar": (1, st.sampled_from([0.5, -2.0]), lambda lib, a, p: a + p),
    "pow": (1, st.sampled_from([2, 3, 0.5, -1]), lambda lib, a, p: a.abs().add(0.1) ** p),
    "exp": (1, st.none(), lambda lib, a, p: (a * 0.5).exp()),
    "log": (1, st.none(), lambda lib, a, p: (a.abs() + 0.1).log()),
    "tanh": (1, st.none(), lambda lib, a, p: a.tanh()),
    "sigmoid": (1, st.none(), lambda lib, a, p: a.sigmoid()),
    "relu": (1, st.none(), lambda lib, a, p: a.relu()),
    "gelu": (1, st.none(), lambda lib, a, p: lib.nn.functional.gelu(a)),
    "softplus": (1, st.none(), lambda lib, a, p: lib.nn.functional.softplus(a)),
    "sin": (1, st.none(), lambda lib, a, p: a.sin()),
    "atan": (1, st.none(), lambda lib, a, p: a.atan()),
    "abs": (1, st.none(), lambda lib, a, p: a.abs()),
    "clamp": (1, st.none(), lambda lib, a, p: a.clamp(-0.5, 0.5)),
    "maximum": (2, st.none(), lambda lib, a, b, p: lib.maximum(a, b)),
    "where": (2, st.none(), lambda lib, a, b, p: lib.where(a > b, a, b * 2)),
    "sum": (1, DIM, lambda lib, a, p: a.sum(p)),
    "mean": (1, st.none(), lambda lib, a, p: a.mean()),
    "amax": (1, DIM, lambda lib, a, p: a.amax(p)),
    "max dim": (1, DIM, lambda lib, a, p: a.max(p).values),
    "var": (1, DIM, lambda lib, a, p: a.var(p)),
    "norm": (1, st.sampled_from([1, 2, 3]), lambda lib, a, p: a.norm(p=p)),
    "logsumexp": (1, DIM, lambda lib, a, p: a.logsumexp(p)),
    "softmax": (1, DIM, lambda lib, a, p: a.softmax(p)),
    "log_softmax": (1, DIM, lambda lib, a, p: a.log_softmax(p)),
    "cumsum": (1, DIM, lambda lib, a, p: a.cumsum(p)),
    "cumprod": (1, DIM, lambda lib, a, p: a.cumprod(p)),
    "prod": (1, DIM, lambda lib, a, p: a.prod(p)),
    "matmul": (2, st.none(), lambda lib, a, b, p: a.reshape(-1, 1) @ b.reshape(1, -1)),
    "t": (1, st.none(), lambda lib, a, p: a.t() if a.ndim <= 2 else a),
    "index": (1, st.none(), lambda lib, a, p: a[..., :1]),
    "gather": (1, st.none(), lambda lib, a, p: a.reshape(-1)[lib.tensor([0, 0])]),
    "expand": (1, st.none(), lambda lib, a, p: a.reshape(-1)[:1].expand(3)),
    "sort": (1, st.none(), lambda lib, a, p: a.sort(-1).values),
    "topk": (1, st.none(), lambda lib, a, p: a.reshape(-1).topk(1).values),
    "cat": (2, st.none(), lambda lib, a, b, p: lib.cat([a.reshape(-1), b.reshape(-1)])),
    "in-place mul_": (1, st.none(), lambda lib, a, p: (a * 1).mul_(2)),
    "in-place view add_": (1, st.none(), lambda lib, a, p: (lambda y: (y.reshape(-1)[:1]
                                                                      .add_(1), y)[1])(a * 1)),
    "masked_fill": (1, st.none(), lambda lib, a, p: a.masked_fill(a > 0, 0.5)),
    "lerp": (2, st.none(), lambda lib, a, b, p: lib.lerp(a, b, 0.3)),
    "quantile": (1, st.none(), lambda lib, a, p: lib.quantile(a, 0.4)),
    # points in the plane (with one coordinate, the second derivative is 0 and both libraries
    # return rounding noise): over 25 of them, torch's cdist is a matmul, twice differentiable
    "cdist": (2, st.none(), lambda lib, a, b, p: lib.cdist(_points(lib, a), _points(lib, b))),
}

AREAS = {"elementwise": ELEMENTWISE, "reductions": REDUCTIONS, "views": VIEWS,
         "autograd": AUTOGRAD}


@st.composite
def step(draw, table):
    name = draw(st.sampled_from(sorted(table)))
    arity, params, _ = table[name]
    operands = draw(st.lists(st.integers(0, 5), min_size=arity, max_size=arity))
    return {"op": name, "operands": operands, "param": draw(params)}


@st.composite
def program(draw, area):
    """Inputs and steps of one program of ``area``."""
    table = AREAS[area]
    if area == "autograd":
        shape = draw(st.sampled_from([(), (3,), (2, 3), (3, 1)]))
        inputs = [draw(input_spec(("float32", "float64"), shape=shape, requires_grad=True))
                  for _ in range(draw(st.integers(1, 2)))]
        for spec in inputs:  # gradients of nan/inf inputs are compared elsewhere
            spec["values"] = np.nan_to_num(spec["values"], nan=0.5, posinf=2.0, neginf=-2.0)
    else:
        first = draw(input_spec())
        inputs = [first]
        for _ in range(draw(st.integers(0, 2))):
            same_shape = draw(st.booleans())
            inputs.append(draw(input_spec(shape=first["shape"] if same_shape else None)))
    steps = draw(st.lists(step(table), min_size=1, max_size=3 if area != "autograd" else 4))
    return {"area": area, "inputs": inputs, "steps": steps}
