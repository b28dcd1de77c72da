"""``addmm`` and ``baddbmm``: ``beta * input + alpha * (mat1 @ mat2)`` (and its batched form),
and ``mv`` (matrix @ vector), as torch 2.13 computes them -- values and gradients, broadcasting
of ``input``, ``beta=0`` ignoring ``input``'s nan, the Tensor methods, torch's errors, and the
dtype under CPU autocast (16 bits for addmm and baddbmm, the inputs' for mv)."""
import numpy as np
import pytest

import learntorch
from oracle import require_torch, torch


def _arrays(seed, *shapes):
    rs = np.random.RandomState(seed)
    return [rs.randn(*s) for s in shapes]


def _addmm(lib, i, a, b, **k):
    return lib.addmm(i, a, b, **k)


def _baddbmm(lib, i, a, b, **k):
    return lib.baddbmm(i, a, b, **k)


# name -> (the call, the shapes of input, mat1 / batch1, mat2 / batch2)
CASES = {
    "addmm": (_addmm, [(5,), (3, 4), (4, 5)]),
    "addmm_full_input": (_addmm, [(3, 5), (3, 4), (4, 5)]),
    "addmm_column_input": (_addmm, [(3, 1), (3, 4), (4, 5)]),
    "addmm_method": (lambda lib, i, a, b, **k: i.addmm(a, b, **k), [(3, 5), (3, 4), (4, 5)]),
    "baddbmm": (_baddbmm, [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "baddbmm_broadcast_input": (_baddbmm, [(5,), (2, 3, 4), (2, 4, 5)]),
    "baddbmm_method": (lambda lib, i, a, b, **k: i.baddbmm(a, b, **k),
                       [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
}


@pytest.mark.parametrize("method", [False, True])
def test_mv_values_gradients_and_cpu_autocast_dtype_are_torchs(method):
    require_torch()
    m, v = _arrays(2, (3, 4), (4,))
    seen = []
    for lib in (learntorch, torch):
        a, b = lib.tensor(m, requires_grad=True), lib.tensor(v, requires_grad=True)
        out = a.mv(b) if method else lib.mv(a, b)
        (out * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum().backward()
        with lib.autocast("cpu"):
            autocast_dtype = lib.mv(a.float(), b.float()).dtype
        seen.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy(),
                     str(autocast_dtype).split(".")[-1]))
    for got, want in zip(seen[0][:3], seen[1][:3]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert seen[0][3] == seen[1][3] == "float32"      # mv is on no CPU autocast list
    for lib in (learntorch, torch):
        with pytest.raises(RuntimeError,
                           match=r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"):
            lib.mv(lib.ones(2, 3), lib.ones(4))
        with pytest.raises(RuntimeError, match=r"vector \+ matrix @ vector expected, got 1, 1, 1"):
            lib.mv(lib.ones(3), lib.ones(3))


@pytest.mark.parametrize("scales", [{}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0, "alpha": -1.5}])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_are_torchs(name, scales):
    require_torch()
    op, shapes = CASES[name]
    arrays = _arrays(0, *shapes)
    results = []
    for lib in (learntorch, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]   # float64: exact comparisons
        out = op(lib, *ts, **scales)
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        (out * weights).sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in ts]
        results.append((out.detach().numpy(), grads))
    (got, got_grads), (want, want_grads) = results
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for g, w in zip(got_grads, want_grads):   # beta=0: input's gradient is zeros, not None
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_beta_zero_ignores_nan_and_inf_in_input_as_torch():
    require_torch()
    for lib in (learntorch, torch):
        out = lib.addmm(lib.tensor([float("nan"), float("inf")]), lib.ones(3, 2), lib.ones(2, 2),
                        beta=0)
        assert out.tolist() == [[2.0, 2.0]] * 3


@pytest.mark.parametrize("call, message", [
    (lambda lib: lib.addmm(lib.ones(4, dtype=lib.float64), lib.ones(2, 3), lib.ones(3, 4)),
     "self and mat2 must have the same dtype"),
    (lambda lib: lib.addmm(lib.ones(3), lib.ones(2, 3), lib.ones(3, 4)),
     r"The expanded size of the tensor \(4\) must match the existing size \(3\) at "
     r"non-singleton dimension 1"),
    (lambda lib: lib.addmm(lib.ones(4), lib.ones(2, 3), lib.ones(2, 4)), "cannot be multiplied"),
    (lambda lib: lib.baddbmm(lib.ones(2, 2, 4, dtype=lib.float64), lib.ones(2, 2, 3),
                             lib.ones(2, 3, 4)), "Input dtypes must be the same"),
])
def test_errors_are_torchs(call, message):
    require_torch()
    for lib in (learntorch, torch):
        with pytest.raises(RuntimeError, match=message):
            call(lib)


@pytest.mark.parametrize("name", ["addmm", "baddbmm"])
def test_under_cpu_autocast_the_result_is_bfloat16_with_float32_gradients_as_torch(name):
    require_torch()
    op, shapes = CASES[name]
    arrays = [a.astype(np.float32) for a in _arrays(1, *shapes)]
    seen = []
    for lib in (learntorch, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        with lib.autocast("cpu"):
            out = op(lib, *ts)
        out.float().sum().backward()
        grad_dtypes = [str(t.grad.dtype).split(".")[-1] for t in ts]
        seen.append((str(out.dtype).split(".")[-1], grad_dtypes, out.float().detach().numpy()))
    assert seen[0][:2] == seen[1][:2] == ("bfloat16", ["float32"] * 3)
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=2 ** -6, atol=2 ** -6)
