"""Run one fuzz program in learntorch and in torch, and say how they differ (if they do).

Every step runs in both libraries.  Then, step by step:

* both raised: the exception types must be the same           (class ``exception-type``)
* one raised:  learntorch refused what torch ran, or the reverse
                                                    (``spurious-error`` / ``missing-error``)
* both ran:    shape, dtype, requires_grad, then the values -- to the dtype's precision,
  nan where torch has nan                  (``shape``, ``dtype``, ``metadata``, ``value``)

The first difference ends the program (what follows would only repeat it).  For the
autograd area, the gradients of the leaves after ``backward()`` (``grad``) and after a
second-order pass (``grad2``) are compared too.  ``value`` and ``grad`` mismatches are
the silent wrong values the fuzzer exists to catch.
"""
import collections
import math

import numpy as np

import learntorch

try:
    import torch
except ImportError:  # pragma: no cover - the oracle is installed wherever the tests run
    torch = None

from fuzz_programs import AREAS, make_tensor

TOLERANCE = {"float16": (2e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}


class Failed(Exception):
    """Raised by ``compare`` with the mismatch class and a description."""

    def __init__(self, kind, detail):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


def _dtype_name(t):
    return t.dtype.name if isinstance(t, learntorch.Tensor) else str(t.dtype).replace("torch.", "")


def _same_value(lt, th, what, precision=None, slack=1, operands=None):
    """Raise ``Failed`` unless learntorch's result ``lt`` is torch's ``th``.

    ``precision`` (for gradients): compare at that float dtype's tolerance, relative to
    the largest magnitude in the tensor -- a gradient is a sum of products, and rounding
    in a different (equally valid) order leaves an error of the size of its largest
    terms, not of each element; a program mixing float32 and float64 rounds some
    float64 gradients through float32 intermediates.  ``slack`` widens the tolerance:
    a second derivative goes through about twice as many roundings, and where it is 0
    exactly, either library may return rounding noise (a few float32 ulps) instead.
    ``operands`` (for a step): the least precise float dtype among the step's operands;
    a float64 result of a float32 operand (``x64 * softmax(x32)``) carries that operand's
    last-bit differences (compared, and accepted, at float32 precision one step before),
    so it is compared at that precision.
    """
    if isinstance(th, (tuple, list)):
        if not isinstance(lt, (tuple, list)) or len(lt) != len(th):
            raise Failed("type", f"{what}: {lt!r} vs torch's {th!r}")
        for k, (a, b) in enumerate(zip(lt, th)):
            _same_value(a, b, f"{what}[{k}]", precision, slack, operands)
        return
    if torch is not None and isinstance(th, torch.Tensor):
        if not isinstance(lt, learntorch.Tensor):
            raise Failed("type", f"{what}: {type(lt).__name__} where torch has a tensor")
        if tuple(lt.shape) != tuple(th.shape):
            raise Failed("shape", f"{what}: {list(lt.shape)} vs torch's {list(th.shape)}")
        if _dtype_name(lt) != _dtype_name(th):
            raise Failed("dtype", f"{what}: {_dtype_name(lt)} vs torch's {_dtype_name(th)}")
        if lt.requires_grad != th.requires_grad:
            raise Failed("metadata", f"{what}: requires_grad {lt.requires_grad} vs "
                                     f"{th.requires_grad}")
        a = lt.detach().numpy()
        b = th.detach().numpy(force=True)  # (force: torch's lazy ZeroTensor gradients)
        if a.dtype.kind == "f":
            name = precision or a.dtype.name
            if operands is not None and TOLERANCE[operands][0] > TOLERANCE[name][0]:
                name = operands
            rtol, atol = (slack * t for t in TOLERANCE[name])
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if precision is not None:
                finite = np.abs(b64[np.isfinite(b64)])
                atol += rtol * (finite.max() if finite.size else 0.0)
            same = np.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True) | (a64 == b64)
            if not same.all():
                raise Failed("value", f"{what}: {a.tolist()} vs torch's {b.tolist()}")
        elif not np.array_equal(a, b):
            raise Failed("value", f"{what}: {a.tolist()} vs torch's {b.tolist()}")
        return
    if isinstance(th, float) and isinstance(lt, float) and math.isnan(th) and math.isnan(lt):
        return
    if (lt is None) != (th is None) or (torch is not None and isinstance(lt, learntorch.Tensor)):
        raise Failed("type", f"{what}: {lt!r} vs torch's {th!r}")
    if lt != th:
        raise Failed("value", f"{what}: {lt!r} vs torch's {th!r}")


def _least_precise(operands):
    """The least precise float dtype among ``operands`` (tensors or dtype names; or None)."""
    names = [_dtype_name(t) if hasattr(t, "dtype") else t for t in operands]
    names = [n for n in names if n in TOLERANCE]
    return max(names, key=lambda n: TOLERANCE[n][0]) if names else None


def _call(fn):
    try:
        return fn(), None
    except Exception as e:  # the exception type is part of the comparison
        return None, e


def run(program):
    """Run ``program`` in both libraries; None when they agree, else ``Failed``."""
    table = AREAS[program["area"]]
    variables = {}
    for lib in (learntorch, torch):
        variables[lib] = [make_tensor(lib, spec) for spec in program["inputs"]]
    # each variable's least precise float ancestor (see _same_value's ``operands``)
    precision = [_least_precise([t]) for t in variables[torch]]
    try:
        for k, step in enumerate(program["steps"]):
            arity, _, fn = table[step["op"]]
            results = {}
            for lib in (learntorch, torch):
                pool = variables[lib]
                operands = [pool[i % len(pool)] for i in step["operands"]]
                results[lib] = _call(lambda: fn(lib, *operands, step["param"]))
            at = [i % len(variables[torch]) for i in step["operands"]]
            inherited = _least_precise(precision[i] for i in at)
            (lt, lt_error), (th, th_error) = results[learntorch], results[torch]
            what = f"step {k} ({step['op']})"
            if th_error is not None or lt_error is not None:
                if th_error is None:
                    raise Failed("spurious-error", f"{what}: learntorch raised "
                                 f"{type(lt_error).__name__}: {lt_error}")
                if lt_error is None:
                    raise Failed("missing-error", f"{what}: torch raised "
                                 f"{type(th_error).__name__}: {th_error}")
                if not isinstance(lt_error, type(th_error)):
                    raise Failed("exception-type", f"{what}: {type(lt_error).__name__} vs "
                                 f"torch's {type(th_error).__name__}: {th_error}")
                continue
            _same_value(lt, th, what, operands=inherited)
            for i in at:  # an in-place step: its operand now holds the result
                if variables[torch][i] is th:
                    precision[i] = _least_precise([precision[i], inherited])
            for lib, out in ((learntorch, lt), (torch, th)):
                new = [o for o in (out if isinstance(out, tuple) else (out,))
                       if hasattr(o, "shape")]
                variables[lib].extend(new[:1])
                if lib is torch and new:
                    precision.append(_least_precise([_least_precise(new[:1]), inherited]))
        # every input (in-place steps may have changed it) must still agree
        for k, (a, b) in enumerate(zip(variables[learntorch], variables[torch])):
            _same_value(a, b, f"variable {k} at the end", operands=precision[k])
        if program["area"] == "autograd":
            _compare_gradients(program, variables)
    except Failed as failure:
        return failure
    return None


def _leaves(pool, n):
    return pool[:n]


def _loss(lib, pool):
    total = None
    for t in pool:
        if t.requires_grad and t.dtype.is_floating_point and t.numel():
            part = t.sum()
            total = part if total is None else total + part
    return total


def _compare_gradients(program, variables):
    n = len(program["inputs"])
    for order in (1, 2):
        grads = {}
        for lib in (learntorch, torch):
            pool = [make_tensor(lib, spec) for spec in program["inputs"]]
            table = AREAS["autograd"]
            for step in program["steps"]:
                fn = table[step["op"]][2]
                operands = [pool[i % len(pool)] for i in step["operands"]]
                try:
                    out = fn(lib, *operands, step["param"])
                except Exception:
                    continue  # (compared already, step by step)
                pool.append(out)
            loss = _loss(lib, pool)
            if loss is None:
                return
            leaves = _leaves(pool, n)
            grads[lib] = _call(lambda: _backward(lib, loss, leaves, order))
        (lt, lt_error), (th, th_error) = grads[learntorch], grads[torch]
        kind = "grad" if order == 1 else "grad2"
        if (lt_error is None) != (th_error is None):
            raise Failed(kind + "-error", f"learntorch {lt_error!r} vs torch {th_error!r}")
        if th_error is not None:
            if not isinstance(lt_error, type(th_error)):
                raise Failed("exception-type", f"{kind}: {type(lt_error).__name__} vs "
                             f"{type(th_error).__name__}")
            continue
        # the least precise input's float dtype (see _same_value)
        precision = max((spec["dtype"] for spec in program["inputs"]),
                        key=lambda name: TOLERANCE[name][0])
        try:
            _same_value(lt, th, f"{kind} of the leaves", precision, slack=10 ** (order - 1))
        except Failed as failure:
            raise Failed(kind, failure.detail) from None


def _backward(lib, loss, leaves, order):
    if order == 1:
        loss.backward()
        return tuple(leaf.grad for leaf in leaves)
    first = lib.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    second = None
    for g in first:
        if g is not None and g.requires_grad:
            part = (g * g).sum()
            second = part if second is None else second + part
    if second is None:
        return ()
    second.backward()
    return tuple(leaf.grad for leaf in leaves)


class Summary:
    """Cases run per area and mismatches by class (``area / class / first op``)."""

    def __init__(self):
        self.cases = collections.Counter()
        self.mismatches = collections.Counter()
        self.examples = {}

    def record(self, program, failure):
        self.cases[program["area"]] += 1
        if failure is None:
            return
        op = failure.detail.split("(")[1].split(")")[0] if "(" in failure.detail else "-"
        key = (program["area"], failure.kind, op)
        self.mismatches[key] += 1
        self.examples.setdefault(key, (program, failure))

    def silent_wrong_values(self):
        return sum(n for (_, kind, _), n in self.mismatches.items()
                   if kind in ("value", "grad", "grad2"))

    def table(self):
        lines = ["| area | cases | mismatches |", "| --- | ---: | ---: |"]
        for area in sorted(self.cases):
            bad = sum(n for (a, _, _), n in self.mismatches.items() if a == area)
            lines.append(f"| {area} | {self.cases[area]} | {bad} |")
        lines += ["", "| area | class | op | count | example |", "| --- | --- | --- | ---: | --- |"]
        for key, n in sorted(self.mismatches.items(), key=lambda kv: (-kv[1], kv[0])):
            detail = self.examples[key][1].detail.replace("|", "/")[:160]
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {n} | {detail} |")
        return "\n".join(lines)
