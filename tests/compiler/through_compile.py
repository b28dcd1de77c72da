"""The torch-oracle op tests run through ``learntorch.compile``: ``pytest --through-compile``.

    pytest tests/ops --through-compile=numba            # or reference, or eager
    pytest tests/ops --through-compile=numba,reference,eager

Every oracle helper of ``tests/oracle.py`` (``check_against_torch``,
``check_against_finite_differences``, ``both``) runs learntorch's side through
``oracle.learntorch_side``.  Under this option that is a ``ThroughCompile``: each program
runs eagerly on *twins* of its inputs (the same values in the same strides), then through
``learntorch.compile(fn, backend=...)`` -- the first backend on the inputs themselves,
any further backend on twins -- and compiled and eager must agree before the test goes
on to compare the (compiled) result with torch.  Most oracle programs are one op, which
the compiler leaves to the engine (a kernel of one op saves nothing: fusion.py's rule 4);
here ``fusion.MIN_OPS = 1`` makes a kernel even of one op, so that every op with a scalar
formula (lowering.py) runs as generated code on the oracle's inputs.  They agree:

* **bit for bit** -- forward values and every input's gradient -- when each kernel of the
  compiled program keeps the engine's operation order (``Kernel.exact``: arithmetic,
  comparisons, selections, casts; ``backend="eager"`` has no kernels at all);
* **within 16 epsilons of the dtype** (relative, or absolute at the values' scale) when
  a kernel does not: a transcendental computed in float64 and rounded once, a pow, a sum
  or mean accumulated in float64 (``KernelSource.approximate`` names which);
* **the same exception type** where eager raises.

A function ``learntorch.compile`` declines to compile (it draws random numbers, a capture
fails, ...) runs eagerly with a warning: that is counted, not failed, and the summary at
the end of the session lists why, next to how many programs were fused and how many
compared bit for bit.
"""
import collections
import warnings

import numpy as np

import learntorch
from learntorch import random as lt_random
from learntorch.compiler import fusion

import oracle
from compile_compare import same_bits

BACKENDS = ("numba", "reference", "eager")
_DECLINED = "learntorch.compile: "   # the start of compile's "runs eagerly" warning


def install(backends):
    """Make every oracle program in this session run through ``backends`` (a list)."""
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown or not backends:
        raise ValueError(f"--through-compile takes {', '.join(BACKENDS)} (comma-separated), "
                         f"not {','.join(backends)!r}")
    fusion.MIN_OPS = 1  # a kernel even for a program of one op: every scalar formula is tried
    oracle.learntorch_side = ThroughCompile(backends)
    return oracle.learntorch_side


# ---------------------------------------------------------------- inputs' twins
def twin(value):
    """A new tensor with ``value``'s values, dtype, strides and ``requires_grad`` (a leaf),
    sharing no memory with it; anything else is returned as it is."""
    if not isinstance(value, learntorch.Tensor):
        return value
    a = value.detach().numpy()
    if a.ndim and all(s > 0 for s in a.strides) and a.size:
        # a fresh buffer spanning the same bytes, viewed with the same strides
        span = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.itemsize
        buffer = np.zeros(span // a.itemsize + 1, dtype=a.dtype)
        copy = np.lib.stride_tricks.as_strided(buffer, a.shape, a.strides)
        copy[...] = a
    else:
        copy = a.copy()
    t = learntorch.from_numpy(copy)
    return t.requires_grad_(True) if value.requires_grad else t


# ---------------------------------------------------------------- comparing results
def _tolerance(dtype):
    return 16 * float(np.finfo(dtype).eps)


def agree(got, expected, exact, what):
    """``got`` (compiled) equals ``expected`` (eager): tensors, numbers and containers."""
    if isinstance(expected, learntorch.Tensor):
        assert isinstance(got, learntorch.Tensor), f"{what}: {type(got).__name__}, eager gives a tensor"
        assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} vs eager {expected.dtype}"
        a, e = got.detach().numpy(), expected.detach().numpy()
        if exact or a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
            same_bits(a, e, what)
        else:
            assert a.shape == e.shape, f"{what}: shape {a.shape} vs eager {e.shape}"
            tol = _tolerance(a.dtype)
            scale = float(np.nanmax(np.abs(e[np.isfinite(e)]), initial=1.0))
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale, equal_nan=True,
                                       err_msg=f"{what} (kernels not bit for bit)")
    elif isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), \
            f"{what}: {got!r} vs eager {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            agree(g, e, exact, f"{what}[{i}]")
    elif isinstance(expected, float) and np.isnan(expected):
        assert isinstance(got, float) and np.isnan(got), f"{what}: {got!r} vs eager nan"
    else:
        assert type(got) is type(expected) and got == expected, \
            f"{what}: {got!r} vs eager {expected!r}"


def _grad_leaves(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, learntorch.Tensor)
            and t.requires_grad and t.grad_fn is None]


# ---------------------------------------------------------------- the hook
class Run:
    """One program run eagerly and compiled: what the backward step compares next."""

    def __init__(self, out, eager_out, eager_inputs, exact, twins):
        self.out, self.eager_out, self.eager_inputs = out, eager_out, eager_inputs
        self.exact, self.twins = exact, twins   # twins: [(backend, inputs, out, exact)]


class ThroughCompile(oracle.Eager):
    """``oracle.learntorch_side`` under ``--through-compile`` (module docstring)."""

    def __init__(self, backends):
        self.backends = list(backends)
        self.last = None
        self.stats = {b: collections.Counter() for b in self.backends}
        self.declined = {b: collections.Counter() for b in self.backends}
        self.approximate = collections.Counter()

    # -- oracle.Eager's three entry points
    def forward(self, fn, inputs):
        return self._run(fn, list(inputs))

    def backward(self, out, inputs, grad):
        run, self.last = self.last, None
        out.backward(grad)
        if run is None or run.out is not out:
            return  # not a program this hook ran (the test built it itself)
        run.eager_out.backward(grad)
        leaves = _grad_leaves(inputs)
        for i in leaves:
            agree(inputs[i].grad, run.eager_inputs[i].grad, run.exact,
                  f"through compile({self.backends[0]}): gradient of input {i}")
        for backend, twins, twin_out, exact in run.twins:
            twin_out.backward(grad)
            for i in leaves:
                agree(twins[i].grad, run.eager_inputs[i].grad, exact,
                      f"through compile({backend}): gradient of input {i}")

    def program(self, program):
        return self._run(lambda: program(learntorch), [])

    # -- one program, eagerly and compiled
    def _run(self, fn, inputs):
        rng = lt_random.get_rng_state()
        eager_inputs = [twin(x) for x in inputs]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the compiled run below warns as the test expects
                eager_out = fn(*eager_inputs)
        except Exception as eager_error:  # noqa: BLE001 -- the compiled call must raise it too
            for k, backend in enumerate(self.backends):
                lt_random.set_rng_state(rng)
                args = inputs if k == 0 else [twin(x) for x in inputs]
                try:
                    self._compiled(fn, args, backend)
                except type(eager_error) as compiled_error:
                    self.stats[backend]["raised as eager"] += 1
                    if k == 0:
                        first_error = compiled_error
                    continue
                except Exception as other:
                    raise AssertionError(f"through compile({backend}): raised "
                                         f"{type(other).__name__}: {other}, eager raised "
                                         f"{type(eager_error).__name__}: {eager_error}") from other
                raise AssertionError(f"through compile({backend}): returned where eager raised "
                                     f"{type(eager_error).__name__}: {eager_error}")
            raise first_error
        after_eager = lt_random.get_rng_state()
        results = []
        for k, backend in enumerate(self.backends):
            lt_random.set_rng_state(rng)  # the compiled run draws the numbers eager drew
            args = inputs if k == 0 else [twin(x) for x in inputs]
            out, exact = self._compiled(fn, args, backend)
            agree(out, eager_out, exact, f"through compile({backend}): forward")
            results.append((backend, args, out, exact))
        lt_random.set_rng_state(after_eager)
        (_, _, out, exact), twins = results[0], results[1:]
        self.last = Run(out, eager_out, eager_inputs, exact, twins)
        return out

    def _compiled(self, fn, args, backend):
        """``compile(fn, backend)(*args)`` and whether its kernels keep the engine's order;
        compile's own "runs eagerly" warning is counted, the op's warnings pass through."""
        compiled = learntorch.compile(fn, backend=backend)
        stats = self.stats[backend]
        stats["programs"] += 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = compiled(*args)
        seen = set()
        for w in caught:
            message = str(w.message)
            if issubclass(w.category, UserWarning) and message.startswith(_DECLINED):
                self.declined[backend][_reason(message)] += 1
                continue
            if (w.category, message) not in seen:
                seen.add((w.category, message))
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        kernels = [k for p in compiled.programs for k in p.kernels]
        if kernels:
            stats["fused"] += 1
        if not compiled.programs:
            stats["ran eagerly"] += 1
        exact = all(k.exact for k in kernels)
        stats["bit for bit" if exact else "within tolerance"] += 1
        for k in kernels:
            self.approximate.update(k.source.approximate)
        return out, exact

    # -- the session's summary (with pytest-xdist: each worker's figures, added up)
    def figures(self):
        return {"stats": {b: dict(c) for b, c in self.stats.items()},
                "declined": {b: dict(c) for b, c in self.declined.items()},
                "approximate": dict(self.approximate)}

    def add(self, figures):
        for b, c in figures["stats"].items():
            self.stats[b].update(c)
        for b, c in figures["declined"].items():
            self.declined[b].update(c)
        self.approximate.update(figures["approximate"])

    def summary(self):
        lines = ["oracle programs run through learntorch.compile (tests/compiler/through_compile.py):"]
        for backend in self.backends:
            s = self.stats[backend]
            lines.append(f"  backend={backend!r}: {s['programs']} programs, {s['fused']} with "
                         f"fused kernels; compared with eager bit for bit: {s['bit for bit']}, "
                         f"within tolerance: {s['within tolerance']}; raised as eager did: "
                         f"{s['raised as eager']}; run eagerly by compile: {s['ran eagerly']}")
            for reason, n in self.declined[backend].most_common(8):
                lines.append(f"    {n:5d} ran eagerly: {reason}")
        if self.approximate:
            lines.append("  why kernels were compared within tolerance: " + ", ".join(
                f"{what} ({n})" for what, n in self.approximate.most_common()))
        return lines


def _reason(message):
    """compile's warning without the function's name: ``... runs eagerly under these guards: why``."""
    reason = message.split("guards: ", 1)[-1]
    return reason.split(":", 1)[0].split(" (File ", 1)[0][:100]
