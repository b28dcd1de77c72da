"""Test oracles shared by the op tests.

* ``torch`` -- PyTorch, when installed (CI installs the CPU wheel torch==2.13.0).
  ``require_torch()`` skips a test *with the reason printed* when it is absent.
* ``finite_difference_grads`` -- central differences in float64, needing nothing.
* ``arrays`` -- a hypothesis strategy for numpy arrays that are often
  non-contiguous (transposed, strided slices), so every op is exercised on views.
* ``check_against_torch`` -- run one op in learntorch and torch on the same
  inputs and compare the forward value and the gradient of every input.
"""
import numpy as np
import pytest

import learntorch

try:
    import torch
except ImportError:  # the oracle is optional outside CI
    torch = None

from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def require_torch():
    if torch is None:
        pytest.skip("PyTorch is not installed: this test compares with it "
                    "(pip install torch==2.13.0)")
    return torch


# ---------------------------------------------------------------- conversions
def lt_tensor(array, requires_grad=False):
    """A learntorch tensor over a copy of ``array`` that keeps its strides (a view if strided)."""
    t = learntorch.from_numpy(array)
    return t.requires_grad_(requires_grad) if requires_grad else t


def torch_tensor(array, requires_grad=False):
    t = torch.from_numpy(np.array(array, order="C", copy=True))
    return t.requires_grad_(requires_grad) if requires_grad else t


def as_numpy(t):
    if t is None:
        return None
    if torch is not None and isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return t.detach().numpy()


# ---------------------------------------------------------------- strategies
def noncontiguous(draw, array):
    """Return ``array`` or a non-contiguous view holding the same values."""
    kind = draw(st.sampled_from(["plain", "transposed", "strided"]))
    if kind == "transposed" and array.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(array, -1, -2))
        return np.swapaxes(base, -1, -2)
    if kind == "strided" and array.ndim >= 1:
        shape = list(array.shape)
        shape[-1] *= 2
        base = np.zeros(shape, dtype=array.dtype)
        base[..., ::2] = array
        return base[..., ::2]
    return array


@st.composite
def arrays(draw, shape=None, dtype=np.float64, min_dims=0, max_dims=3, min_side=1, max_side=4,
           elements=None, contiguous=False):
    """Arrays of ``dtype`` with small shapes, often non-contiguous views."""
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                      max_side=max_side))
    if elements is None:
        if np.issubdtype(dtype, np.floating):
            elements = st.floats(-3, 3, allow_nan=False, width=32)
        elif dtype == np.bool_:
            elements = st.booleans()
        else:
            elements = st.integers(-5, 5)
    a = draw(hnp.arrays(dtype, shape, elements=elements))
    return a if contiguous else noncontiguous(draw, a)


@st.composite
def broadcastable_pair(draw, dtype=np.float64, max_dims=3, elements=None):
    """Two arrays whose shapes broadcast together (one side often has size-1 or missing dims)."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=max_dims, max_side=4))
    a = draw(arrays(shape=shapes.input_shapes[0], dtype=dtype, elements=elements))
    b = draw(arrays(shape=shapes.input_shapes[1], dtype=dtype, elements=elements))
    return a, b


# ---------------------------------------------------------------- learntorch's side
class Eager:
    """How the learntorch side of an oracle program runs: here, eagerly.

    Every helper below runs learntorch's side through ``learntorch_side``.
    ``pytest --through-compile=BACKEND`` puts another object there
    (tests/compiler/through_compile.py) that runs each program through
    ``learntorch.compile(..., backend=BACKEND)`` and checks it against eager first.
    """

    def forward(self, fn, inputs):
        return fn(*inputs)

    def backward(self, out, inputs, grad):
        out.backward(grad)

    def program(self, program):
        return program(learntorch)


learntorch_side = Eager()


# ---------------------------------------------------------------- comparisons
def assert_close(actual, expected, rtol=1e-5, atol=1e-6, what="value"):
    a, e = as_numpy(actual), as_numpy(expected)
    if a is None or e is None:
        assert a is None and e is None, f"{what}: one gradient is None ({a!r} vs {e!r})"
        return
    assert a.shape == e.shape, f"{what}: shape {a.shape} != expected {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


def check_against_torch(lt_fn, torch_fn, *arrays_in, grad=True, rtol=1e-5, atol=1e-6,
                        grad_output_seed=0):
    """Compare forward and all input gradients of an op with torch's on the same arrays."""
    require_torch()
    differentiable = [grad and np.issubdtype(a.dtype, np.floating) for a in arrays_in]
    lt_in = [lt_tensor(a, d) for a, d in zip(arrays_in, differentiable)]
    th_in = [torch_tensor(a, d) for a, d in zip(arrays_in, differentiable)]
    lt_out, th_out = learntorch_side.forward(lt_fn, lt_in), torch_fn(*th_in)
    assert_close(lt_out, th_out, rtol, atol, "forward")
    assert lt_out.dtype.name == str(th_out.dtype).replace("torch.", ""), \
        f"dtype {lt_out.dtype} != torch's {th_out.dtype}"
    if not any(differentiable) or not th_out.requires_grad:
        return lt_out
    rng = np.random.default_rng(grad_output_seed)
    g = rng.standard_normal(tuple(th_out.shape)).astype(as_numpy(th_out).dtype)
    learntorch_side.backward(lt_out, lt_in, learntorch.from_numpy(g.copy()))
    th_out.backward(torch.from_numpy(g.copy()))
    for i, (a, b) in enumerate(zip(lt_in, th_in)):
        if differentiable[i]:
            assert_close(a.grad, b.grad, rtol, atol, f"grad of input {i}")
    return lt_out


def finite_difference_grads(fn, *arrays_in, eps=1e-6):
    """d(sum(fn(*arrays) * g))/d(array) by central differences in float64, for a fixed g."""
    arrays_in = [np.array(a, dtype=np.float64, order="C") for a in arrays_in]
    out = fn(*[learntorch.from_numpy(a.copy()) for a in arrays_in])
    g = np.random.default_rng(1).standard_normal(out.shape)
    grads = []
    for a in arrays_in:
        grad = np.zeros_like(a)
        flat, gflat = a.reshape(-1), grad.reshape(-1)
        for k in range(flat.size):
            orig = flat[k]
            flat[k] = orig + eps
            plus = (fn(*[learntorch.from_numpy(x.copy()) for x in arrays_in]).numpy() * g).sum()
            flat[k] = orig - eps
            minus = (fn(*[learntorch.from_numpy(x.copy()) for x in arrays_in]).numpy() * g).sum()
            flat[k] = orig
            gflat[k] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return g, grads


def check_against_finite_differences(fn, *arrays_in, rtol=1e-5, atol=1e-6):
    """Autograd's gradients of ``fn`` in float64 against central differences."""
    g, expected = finite_difference_grads(fn, *arrays_in)
    inputs = [learntorch.tensor(np.array(a, dtype=np.float64), requires_grad=True)
              for a in arrays_in]
    out = learntorch_side.forward(fn, inputs)
    learntorch_side.backward(out, inputs, learntorch.from_numpy(g))
    for i, (t, e) in enumerate(zip(inputs, expected)):
        actual = t.grad.numpy() if t.grad is not None else np.zeros_like(e)
        np.testing.assert_allclose(actual, e, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i} vs finite differences")


def both_raise(call):
    """Call ``call(lib)`` for torch and learntorch: both must raise the same exception type.

    Returns learntorch's message, for the caller to check that it names shapes/dtypes.
    """
    require_torch()
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as mine:
        call(learntorch)
    return str(mine.value)


def both(program):
    """``program(m)`` run with m = learntorch and with m = torch: the two results."""
    return learntorch_side.program(program), program(require_torch())


def assert_same(lt, th, what="result", rtol=1e-5, atol=1e-6):
    """learntorch's result equals torch's: tensors (values and dtype), numbers, strings,
    None, and tuples/lists of them."""
    if isinstance(th, (tuple, list)):
        assert isinstance(lt, (tuple, list)) and len(lt) == len(th), f"{what}: {lt!r} vs {th!r}"
        for i, (a, b) in enumerate(zip(lt, th)):
            assert_same(a, b, f"{what}[{i}]", rtol, atol)
    elif th is None or isinstance(th, (bool, str, int)):
        assert lt == th, f"{what}: {lt!r} != torch's {th!r}"
    elif isinstance(th, float):
        assert lt == pytest.approx(th, rel=1e-6), f"{what}: {lt!r} != torch's {th!r}"
    else:
        assert lt is not None, f"{what}: None but torch gives {th!r}"
        assert lt.dtype.name == str(th.dtype).replace("torch.", ""), f"{what}: dtype"
        np.testing.assert_allclose(as_numpy(lt), as_numpy(th), rtol=rtol, atol=atol,
                                   err_msg=what)
