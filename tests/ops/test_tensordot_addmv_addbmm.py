"""``tensordot``, ``addmv`` and ``addbmm`` against torch 2.13: values and gradients over
hypothesis shapes (non-contiguous views too), every form of ``dims``, ``beta``/``alpha``,
torch's errors, and the dtype under CPU autocast (tensordot and addbmm in 16 bits, addmv in
its inputs' dtype)."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import arrays, both_raise, check_against_torch, require_torch, torch


@st.composite
def tensordot_case(draw):
    """Two arrays and a ``dims`` that pairs dims of equal size (an int or two lists)."""
    contracted = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    free_a = draw(st.lists(st.integers(1, 3), max_size=2))
    free_b = draw(st.lists(st.integers(1, 3), max_size=2))
    as_int = draw(st.booleans())
    if as_int:  # a's last dims against b's first
        shape_a, shape_b = free_a + contracted, contracted + free_b
        dims = len(contracted)
    else:       # the contracted dims anywhere, in any order
        order_a = draw(st.permutations(range(len(free_a) + len(contracted))))
        order_b = draw(st.permutations(range(len(free_b) + len(contracted))))
        sizes_a, sizes_b = free_a + contracted, free_b + contracted
        shape_a = [sizes_a[i] for i in order_a]
        shape_b = [sizes_b[i] for i in order_b]
        pos_a = [order_a.index(len(free_a) + j) for j in range(len(contracted))]
        pos_b = [order_b.index(len(free_b) + j) for j in range(len(contracted))]
        negative = draw(st.booleans())
        dims = ([p - len(shape_a) if negative else p for p in pos_a], pos_b)
    a = draw(arrays(shape=tuple(shape_a)))
    b = draw(arrays(shape=tuple(shape_b)))
    return a, b, dims


@given(tensordot_case())
def test_tensordot_values_and_gradients_are_torchs(case):
    a, b, dims = case
    check_against_torch(lambda x, y: learntorch.tensordot(x, y, dims=dims),
                        lambda x, y: torch.tensordot(x, y, dims=dims), a, b,
                        rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dims", [[[1], [0]], ([-1], [-2]), "tensor-pair", "tensor-int"])
def test_tensordot_takes_every_form_of_dims_as_torch(dims):
    require_torch()
    a, b = np.random.RandomState(3).randn(2, 3), np.random.RandomState(4).randn(3, 5)
    results = []
    for lib in (learntorch, torch):
        d = (lib.tensor([[1], [0]]) if dims == "tensor-pair" else
             lib.tensor(1) if dims == "tensor-int" else dims)
        results.append(lib.tensordot(lib.tensor(a), lib.tensor(b), dims=d).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 5), dims=1),
     r"contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4"),
    (lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 5), dims=3), "dims < ndim_a or ndim_b"),
    (lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 5), dims=-1), "dims >= 0"),
    (lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 5), dims=([1], [0, 1])),
     "both dimension lists should have same length"),
    (lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 5, dtype=m.float64), dims=1),
     "both inputs should have same dtype"),
    (lambda m: m.tensordot(m.ones(2, 3, 3), m.ones(3, 3, 5), dims=([1, 1], [0, 1])),
     "dim 1 appears multiple times"),
    (lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 5), dims=1.5), "tensordot expects dims to be"),
])
def test_tensordot_errors_are_torchs(call, message):
    assert re.search(message, both_raise(call))


def test_tensordot_of_empty_contraction_is_zeros_as_torch():
    require_torch()
    got = learntorch.tensordot(learntorch.ones(2, 0), learntorch.ones(0, 5), dims=1)
    want = torch.tensordot(torch.ones(2, 0), torch.ones(0, 5), dims=1)
    assert got.shape == tuple(want.shape) and got.tolist() == want.tolist()


@given(st.integers(1, 4), st.integers(1, 4), st.sampled_from(["full", "one", "scalar"]),
       st.sampled_from([(1, 1), (0.5, -2.0), (0, 1.5)]), st.data())
def test_addmv_values_and_gradients_are_torchs(n, m, input_kind, scales, data):
    beta, alpha = scales
    shape = {"full": (n,), "one": (1,), "scalar": ()}[input_kind]
    check_against_torch(
        lambda i, a, v: learntorch.addmv(i, a, v, beta=beta, alpha=alpha),
        lambda i, a, v: torch.addmv(i, a, v, beta=beta, alpha=alpha),
        data.draw(arrays(shape=shape)), data.draw(arrays(shape=(n, m))),
        data.draw(arrays(shape=(m,))), rtol=1e-10, atol=1e-12)


@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4),
       st.sampled_from([(3, 2), (1, 2), (2,), (1,)]),
       st.sampled_from([(1, 1), (0.5, -2.0), (0, 1.5)]), st.data())
def test_addbmm_values_and_gradients_are_torchs(b, n, k, p, input_pattern, scales, data):
    beta, alpha = scales
    shape = tuple(n if s == 3 else p if s == 2 else 1 for s in input_pattern)
    check_against_torch(
        lambda i, x, y: learntorch.addbmm(i, x, y, beta=beta, alpha=alpha),
        lambda i, x, y: torch.addbmm(i, x, y, beta=beta, alpha=alpha),
        data.draw(arrays(shape=shape)), data.draw(arrays(shape=(b, n, k))),
        data.draw(arrays(shape=(b, k, p))), rtol=1e-10, atol=1e-12)


def test_addmv_and_addbmm_are_tensor_methods_as_torchs():
    require_torch()
    rs = np.random.RandomState(5)
    i, a, v = rs.randn(3), rs.randn(3, 4), rs.randn(4)
    j, x, y = rs.randn(3, 5), rs.randn(2, 3, 4), rs.randn(2, 4, 5)
    for lt_out, th_out in [
        (learntorch.tensor(i).addmv(learntorch.tensor(a), learntorch.tensor(v), alpha=2),
         torch.tensor(i).addmv(torch.tensor(a), torch.tensor(v), alpha=2)),
        (learntorch.tensor(j).addbmm(learntorch.tensor(x), learntorch.tensor(y), beta=3),
         torch.tensor(j).addbmm(torch.tensor(x), torch.tensor(y), beta=3)),
    ]:
        np.testing.assert_allclose(lt_out.numpy(), th_out.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda m: m.addmv(m.ones(3, dtype=m.float64), m.ones(3, 4), m.ones(4)),
     "addmv input tensors must have the same dtype"),
    (lambda m: m.addmv(m.ones(2), m.ones(3, 4), m.ones(4)),
     r"size mismatch, got input \(2\), mat \(3x4\), vec \(4\)"),
    (lambda m: m.addmv(m.ones(3), m.ones(3, 4), m.ones(5)),
     r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)"),
    (lambda m: m.addmv(m.ones(3), m.ones(3, 4, 1), m.ones(4)),
     r"vector \+ matrix @ vector expected, got 1, 3, 1"),
    (lambda m: m.addbmm(m.ones(3, 5), m.ones(2, 3, 4), m.ones(3, 4, 5)),
     "batch1 and batch2 must have same number of batches, got 2 and 3"),
    (lambda m: m.addbmm(m.ones(3, 5), m.ones(2, 3, 4), m.ones(2, 3, 5)),
     r"Incompatible matrix sizes for bmm \(3x4 and 3x5\)"),
    (lambda m: m.addbmm(m.ones(5, dtype=m.float64), m.ones(2, 3, 4), m.ones(2, 4, 5)),
     "self and mat2 must have the same dtype"),
    (lambda m: m.addbmm(m.ones(5), m.ones(3, 4), m.ones(2, 4, 5)), "batch1 must be a 3D tensor"),
    (lambda m: m.addbmm(m.ones(4, 5), m.ones(2, 3, 4), m.ones(2, 4, 5)),
     r"The expanded size of the tensor \(3\) must match the existing size \(4\)"),
])
def test_addmv_addbmm_errors_are_torchs(call, message):
    assert re.search(message, both_raise(call))


@pytest.mark.parametrize("name, call", [
    ("tensordot", lambda m, r: m.tensordot(m.tensor(r.randn(3, 4), dtype=m.float32),
                                           m.tensor(r.randn(4, 2), dtype=m.float32), dims=1)),
    ("addbmm", lambda m, r: m.addbmm(m.tensor(r.randn(3, 5), dtype=m.float32),
                                     m.tensor(r.randn(2, 3, 4), dtype=m.float32),
                                     m.tensor(r.randn(2, 4, 5), dtype=m.float32))),
    ("addmv", lambda m, r: m.addmv(m.tensor(r.randn(3), dtype=m.float32),
                                   m.tensor(r.randn(3, 4), dtype=m.float32),
                                   m.tensor(r.randn(4), dtype=m.float32))),
])
def test_cpu_autocast_dtype_and_values_are_torchs(name, call):
    require_torch()
    seen = []
    for lib in (learntorch, torch):
        with lib.autocast("cpu"):
            out = call(lib, np.random.RandomState(7))
        seen.append((str(out.dtype).split(".")[-1], out.float().numpy()))
    assert seen[0][0] == seen[1][0] == ("float32" if name == "addmv" else "bfloat16")
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=2e-2, atol=2e-2)
