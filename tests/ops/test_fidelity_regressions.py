"""Fidelity: every silent wrong value, spurious error, exception type and metadata difference
that differential fuzzing against torch found (issue "Fidelity"), each pinned by a case
run in both libraries.

A case is ``program(lib)`` run with lib = learntorch and lib = torch: the results must
be equal (values, dtypes, shapes -- bit for bit where the computation is the same), or
both must raise the same exception type.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import as_numpy, both, both_raise, require_torch


def same(got, want, exact=True):
    """learntorch's result ``got`` equals torch's ``want`` (tensors, numbers, tuples)."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, exact)
        return
    if not hasattr(want, "dtype"):
        assert got == want or (isinstance(want, float) and math.isnan(want) and math.isnan(got))
        return
    assert got.dtype.name == str(want.dtype).replace("torch.", ""), (got.dtype, want.dtype)
    g, w = as_numpy(got), as_numpy(want)
    assert g.shape == w.shape
    if exact:
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, equal_nan=True)


def check(program, exact=True):
    got, want = both(program)
    same(got, want, exact)


def grads_of(lib, values, fn, dtype="float64"):
    """x.grad of ``fn(x).sum()`` for x = values."""
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    fn(lib, x).sum().backward()
    return x.grad


NAN, INF = float("nan"), float("inf")


# ---------------------------------------------------------------- silent wrong values
@pytest.mark.parametrize("program", [
    lambda lib: lib.tensor([0, 128, 255], dtype=lib.uint8) / 256,
    lambda lib: lib.tensor([5, -100], dtype=lib.int8) / 1000,
    lambda lib: 256 / lib.tensor([1, 2], dtype=lib.uint8),
    lambda lib: lib.tensor([0, 128, 255], dtype=lib.uint8) / lib.tensor(256),
    lambda lib: lib.div(lib.tensor([7, 9], dtype=lib.int16), 100000),
    lambda lib: lib.true_divide(lib.tensor([3], dtype=lib.uint8), -300),
], ids=["uint8/256", "int8/1000", "256/uint8", "uint8/tensor(256)", "div int16", "true_divide"])
def test_integer_divided_by_an_int_that_does_not_fit_its_dtype(program):
    check(program)


@pytest.mark.parametrize("value", [2.0, "tensor"])
def test_masked_fill_of_a_0d_tensor_stays_0d(value):
    check(lambda lib: lib.tensor(1.0).masked_fill(
        lib.tensor(True), lib.tensor(2.0) if value == "tensor" else value))


@pytest.mark.parametrize("program", [
    lambda lib: lib.tensor([297.0], dtype=lib.float16) * 0.37,
    lambda lib: 0.37 * lib.tensor([297.0], dtype=lib.float16),
    lambda lib: lib.tensor([297.0], dtype=lib.float16) / 0.37,
    lambda lib: lib.tensor([5.0], dtype=lib.float16) // 0.1,
    lambda lib: lib.div(lib.tensor([5.0], dtype=lib.float16), 0.1, rounding_mode="floor"),
    lambda lib: lib.tensor([297.0], dtype=lib.float16) * lib.tensor(0.37),
    lambda lib: lib.tensor([297.0], dtype=lib.float16) * 2049,
    lambda lib: lib.tensor([297.0], dtype=lib.float16) + 2049,  # torch rounds 2049 first here
    lambda lib: lib.tensor([5.0], dtype=lib.float16) % 0.3,
], ids=["mul", "rmul", "div", "floordiv", "div floor", "mul 0-d float32", "mul int",
        "add int", "remainder"])
def test_float16_with_a_scalar_rounds_like_torch(program):
    check(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.tensor(0.37) * lib.tensor([297.0], dtype=lib.float16),
    lambda lib: lib.mul(lib.tensor(0.37), lib.tensor([297.0], dtype=lib.float16)),
    lambda lib: lib.tensor(0.37) / lib.tensor([297.0], dtype=lib.float16),
    lambda lib: lib.tensor(2 ** 31 - 1, dtype=lib.int32) // lib.tensor(0.24, dtype=lib.float16),
    lambda lib: lib.tensor(2 ** 31 - 1, dtype=lib.int32) / lib.tensor(0.24, dtype=lib.float16),
    lambda lib: lib.tensor(0.24, dtype=lib.float16) // lib.tensor(2 ** 31 - 1, dtype=lib.int32),
    lambda lib: lib.tensor([0.24], dtype=lib.float16) / lib.tensor(70001, dtype=lib.int32),
    lambda lib: 0.37 // lib.tensor([297.0], dtype=lib.float16),
], ids=["0-d times", "mul", "0-d divided", "int32 floordiv", "int32 div", "by int32",
        "by 0-d int", "number floordiv"])
def test_float16_reads_only_a_second_scalar_operand_in_float32_as_torch(program):
    """torch's kernels read the *second* operand, when a scalar, in float32; the first is
    converted to float16 first (2**31 - 1 becomes inf)."""
    check(program)


def test_division_differentiates_twice_with_torchs_rounding():
    """d(a/b)/db = -grad * ((a / b) / b), in torch's order: the prod of one factor, whose
    second derivative is exactly 0 in torch, is exactly 0 here too."""
    def program(lib):
        x = lib.tensor([[-4.0], [-0.33], [2.52]], requires_grad=True)
        g, = lib.autograd.grad(x.prod(-1).sum(), x, create_graph=True)
        (g * g).sum().backward()
        return x.grad
    check(program)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_variance_and_std_round_once_from_double_as_torch(dtype):
    """torch accumulates var/std of float32 and float16 in double: bit for bit here too, so
    a later sort or quantile orders equal variances as torch does."""
    values = np.random.default_rng(0).normal(size=(50, 7)).round(2) * 3

    def program(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        tied = lib.tensor([[2.0, -0.0, 2.0], [-2.0, -0.0, -0.0]], dtype=getattr(lib, dtype))
        return (lib.var_mean(x, 0), lib.std_mean(x, 0, correction=0), x.std(0), x.var(1),
                tied.var(-1), lib.quantile(tied.float().var(-1), 0.3))
    check(program)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_var_mean_of_a_row_with_nan_before_its_one_infinity_is_nan_as_torch(dtype):
    values = [[NAN, -0.0, INF], [1.0, 2.0, INF], [INF, 1.0, NAN], [0.5, NAN, -INF]]
    check(lambda lib: lib.var_mean(lib.tensor(values, dtype=getattr(lib, dtype)), 1))


def test_kthvalue_of_a_0d_bool_is_its_value_as_torch():
    check(lambda lib: tuple(lib.tensor(True).kthvalue(1)))
    both_raise(lambda lib: lib.tensor([True, False]).kthvalue(1))


@pytest.mark.parametrize("shape, dim", [((3, 1), 1), ((1,), 0), ((), 0), ((3, 1), 0)])
def test_cumprod_along_one_element_passes_the_gradient_on_as_torch(shape, dim):
    def program(lib):
        x = lib.full(shape, 2.0, dtype=lib.float64).requires_grad_()
        g, = lib.autograd.grad(x.cumprod(dim).sum(), x, create_graph=True)
        return g, g.requires_grad
    check(program)


@given(st.lists(st.floats(-60000, 60000, width=16, allow_nan=False), min_size=1, max_size=8),
       st.sampled_from([0.37, 1.1, 3, 7.77, 0.1, 2049, -2.5]),
       st.sampled_from(["mul", "div", "floordiv", "add", "sub", "rsub", "rdiv", "mod"]))
def test_float16_scalar_arithmetic_matches_torch_bit_for_bit(values, scalar, op):
    ops = {"mul": lambda x: x * scalar, "div": lambda x: x / scalar,
           "floordiv": lambda x: x // scalar, "add": lambda x: x + scalar,
           "sub": lambda x: x - scalar, "rsub": lambda x: scalar - x,
           "rdiv": lambda x: scalar / x, "mod": lambda x: x % scalar}
    check(lambda lib: ops[op](lib.tensor(values, dtype=lib.float16)))


def test_a_number_divided_by_a_tensor_is_a_reciprocal_times_the_number():
    """torch computes 3 / x as x.reciprocal() * 3 (two roundings): the same values here."""
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    check(lambda lib: 3 / lib.tensor(values))
    got, want = both(lambda lib: (3 / lib.tensor([2.0], requires_grad=True)).grad_fn.name())
    assert got == want == "MulBackward0"


@pytest.mark.parametrize("alpha", [-1, 0, 2])
def test_add_of_bools_with_an_int_alpha_is_a_logical_or(alpha):
    check(lambda lib: lib.add(lib.tensor([True, False, True]), lib.tensor([True, True, False]),
                              alpha=alpha))


@given(st.lists(st.integers(0, 3), min_size=1, max_size=40), st.data())
def test_topk_picks_the_same_indices_among_ties_as_torch(values, data):
    n = len(values)
    k = data.draw(st.integers(1, n), label="k")
    largest, sorted_ = data.draw(st.booleans(), label="largest"), data.draw(st.booleans())
    check(lambda lib: lib.topk(lib.tensor(values, dtype=lib.float32), k, largest=largest,
                               sorted=sorted_))


@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, NAN]), min_size=17, max_size=120),
       st.sampled_from(["float32", "float64", "int64", "uint8"]), st.booleans(), st.data())
def test_unstable_sort_orders_ties_as_torch(values, dtype, descending, data):
    """torch's default sort is std::sort: beyond 16 elements, ties come in its order."""
    if dtype in ("int64", "uint8"):
        values = [0.0 if v != v else v for v in values]
    rows = data.draw(st.sampled_from([1, 2, 3]), label="rows")
    dim = data.draw(st.sampled_from([0, -1]), label="dim")

    def program(lib):
        x = lib.tensor(values * rows, dtype=getattr(lib, dtype)).reshape(rows, -1)
        x = x if dim == -1 else x.t()
        return x.sort(dim, descending=descending), x.argsort(dim, descending=descending)
    check(program)


def test_quantile_of_ties_sends_the_gradient_to_torchs_elements():
    values = [float(v % 4) for v in range(7, 47)]  # 40 elements, each value ten times
    check(lambda lib: grads_of(lib, values, lambda lib, x: lib.quantile(x, 0.4)))
    check(lambda lib: grads_of(lib, values, lambda lib, x: x.sort(descending=True).values[:7]))


@pytest.mark.parametrize("shape, dim", [((3, 1), 1), ((3, 1), -1), ((1,), None), ((1, 1), 0)])
def test_prod_of_one_factor_with_a_zero_passes_the_gradient_on_as_torch(shape, dim):
    """torch's gradient there is the incoming one: no graph, so no second derivative."""
    def program(lib):
        x = lib.zeros(shape, dtype=lib.float64).requires_grad_()
        y = x.prod() if dim is None else x.prod(dim)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        return g, g.requires_grad
    check(program)


@pytest.mark.parametrize("rows, mode", [(26, None), (3, "use_mm_for_euclid_dist"),
                                        (30, "donot_use_mm_for_euclid_dist"), (25, None)])
def test_cdist_takes_torchs_path_and_so_has_its_second_derivatives(rows, mode):
    """Over 25 rows (or when asked) torch's cdist is a matmul, twice differentiable; the
    direct one has first derivatives only (both libraries refuse the second there)."""
    a = np.random.default_rng(0).normal(size=(2, rows, 3))
    b = np.random.default_rng(1).normal(size=(4, 3))

    def program(lib):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        d = lib.cdist(x, y) if mode is None else lib.cdist(x, y, compute_mode=mode)
        gx, gy = lib.autograd.grad(d.sum(), (x, y), create_graph=True)
        return (d, gx, gy) + lib.autograd.grad((gx ** 2).sum() + (gy ** 2).sum(), (x, y))
    if rows <= 25 and mode is None or mode == "donot_use_mm_for_euclid_dist":
        both_raise(program)
    else:
        check(program, exact=False)


def test_cdist_compute_mode_is_checked_as_torch():
    both_raise(lambda lib: lib.cdist(lib.ones(2, 2), lib.ones(2, 2), compute_mode="fast"))
    both_raise(lambda lib: lib.cdist(lib.ones(2, 2), lib.ones(2, 2), compute_mode=None))


def test_topk_ties_with_nan_and_the_gradient_reaches_torchs_element():
    values = [1.0, NAN, 3.0, 3.0, NAN, 2.0, 3.0] * 5

    def program(lib):
        x = lib.tensor(values, requires_grad=True)
        v, i = x.topk(9)
        (v * lib.arange(9.0)).nansum().backward()
        return i, x.grad
    check(program)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=30), st.data())
def test_kthvalue_and_mode_pick_torchs_index_among_ties(values, data):
    k = data.draw(st.integers(1, len(values)), label="k")
    check(lambda lib: lib.tensor(values, dtype=lib.float64).kthvalue(k))
    check(lambda lib: lib.tensor(values, dtype=lib.float64).mode())
    check(lambda lib: lib.tensor(values, dtype=lib.float64).median(0))


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.relu(),
    lambda lib, x: x.max(),
    lambda lib, x: x.min(),
    lambda lib, x: x.amax(),
    lambda lib, x: x.max(0).values,
    lambda lib, x: x.norm(p=math.inf),
    lambda lib, x: x.norm(p=-math.inf),
    lambda lib, x: lib.maximum(x, lib.tensor([1.0, 5.0, 0.0, 2.0], dtype=lib.float64)),
    lambda lib, x: lib.minimum(x, lib.tensor([1.0, 5.0, 0.0, 2.0], dtype=lib.float64)),
    lambda lib, x: x.median(),
], ids=["relu", "max", "min", "amax", "max(dim)", "norm inf", "norm -inf", "maximum",
        "minimum", "median"])
@pytest.mark.parametrize("values", [[NAN, 1.0, 2.0, 2.0], [2.0, NAN, 2.0, NAN], [1.0, 2.0, 2.0, -3.0]],
                         ids=["one nan", "two nans", "ties"])
def test_gradients_at_nan_and_ties_follow_torchs_conventions(fn, values):
    check(lambda lib: grads_of(lib, values, fn))


@pytest.mark.parametrize("values", [[INF, 1.0, 2.0], [1.0, 2.0, INF], [1.0, -INF, INF],
                                    [NAN, 1.0, 2.0], [1.0, 2.0, 3.0]])
@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
@pytest.mark.parametrize("use", ["both", "first", "second"])
def test_var_mean_with_infinities_gives_torchs_values_and_gradients(values, op, use):
    def program(lib):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        a, b = getattr(lib, op)(x)
        {"both": a + b, "first": a, "second": b}[use].backward()
        return a, b, x.grad
    check(program, exact=False)


# ---------------------------------------------------------------- spurious errors
def test_in_place_on_a_0d_view_of_a_graph_tensor():
    def program(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        b = w * 1
        b[0].mul_(10)
        b.sum().backward()
        return b, w.grad
    check(program)


def test_double_backward_through_relu_gives_a_differentiable_gradient():
    def program(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        g, = lib.autograd.grad((x.relu() ** 2).sum(), x, create_graph=True)
        assert g.requires_grad
        g.sum().backward()
        return g, x.grad
    check(program)


@pytest.mark.parametrize("op", [lambda a, b: a @ b, lambda a, b: a.mm(b)],
                         ids=["matmul", "mm"])
def test_matmul_does_not_save_an_operand_no_gradient_needs(op):
    def program(lib):
        leaf = lib.tensor([[1.0, 2.0]], requires_grad=True)
        a = leaf * 1                      # needs a gradient; w does not, so a is not needed
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        y = op(a, w)
        a.mul_(2)                         # allowed: no formula reads a
        y.sum().backward()
        return leaf.grad
    check(program)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        x = learntorch.tensor([[1.0, 2.0]])
        w = learntorch.tensor([[1.0], [3.0]], requires_grad=True)
        y = x @ w                          # dw reads x: changing x is an error, as in torch
        x.mul_(2)
        y.sum().backward()


def test_dot_does_not_save_an_operand_no_gradient_needs():
    def program(lib):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        a = leaf * 1
        y = lib.dot(a, lib.tensor([3.0, 4.0]))
        a.add_(1)
        y.backward()
        return leaf.grad
    check(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.full((2,), -1, dtype=lib.uint8),
    lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(-255),
    lambda lib: lib.zeros(2, dtype=lib.int8).fill_(-128),
    lambda lib: lib.tensor([-1, 255], dtype=lib.uint8),
    lambda lib: lib.tensor(-1.5, dtype=lib.int8),
    lambda lib: lib.zeros(3, dtype=lib.uint8).masked_fill(lib.tensor([True, False, True]), -2),
    lambda lib: lib.zeros(3, dtype=lib.uint8).scatter(0, lib.tensor([1]), -3),
    lambda lib: lib.zeros(2, dtype=lib.uint8) + 300,
    lambda lib: lib.zeros(2, dtype=lib.uint8) - 1,
    lambda lib: (lambda t: (t.__setitem__(0, -1), t)[1])(lib.zeros(2, dtype=lib.uint8)),
    lambda lib: lib.full((1,), 1e10, dtype=lib.float16),
], ids=["full", "fill_ -255", "fill_ int8", "tensor", "tensor float", "masked_fill", "scatter",
        "add 300", "sub 1", "setitem", "float16 overflow"])
def test_negative_and_large_ints_wrap_into_small_integer_dtypes_as_in_torch(program):
    check(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(256),
    lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(-256),
    lambda lib: lib.zeros(2, dtype=lib.int8).fill_(128),
    lambda lib: lib.full((2,), 300, dtype=lib.int8),
    lambda lib: lib.zeros(2, dtype=lib.int32).fill_(2 ** 40),
    lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(-0.5),
    lambda lib: lib.tensor([1, 256], dtype=lib.uint8),
    lambda lib: lib.tensor(math.nan, dtype=lib.int64),
    lambda lib: lib.tensor([math.inf], dtype=lib.int64),
    lambda lib: lib.tensor(2 ** 70),
    lambda lib: lib.zeros(2, dtype=lib.int64).fill_(math.nan),
], ids=["uint8 256", "uint8 -256", "int8 128", "full int8", "int32 2**40", "uint8 -0.5",
        "tensor 256", "tensor nan", "tensor inf", "tensor 2**70", "fill nan"])
def test_numbers_out_of_a_dtypes_range_raise_torchs_error(program):
    both_raise(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.tensor([0, 5, 200], dtype=lib.uint8).clamp(-1, 1),
    lambda lib: lib.tensor([0, 5, 200], dtype=lib.uint8).clamp_(-1, 2),
    lambda lib: lib.tensor([0, 5, 200], dtype=lib.uint8).clamp(-255, 2),
    lambda lib: lib.tensor([-5, 5, 100], dtype=lib.int8).clamp(max=True),
], ids=["uint8 -1", "uint8 -1 in place", "uint8 -255", "int8 max=True"])
def test_clamp_bounds_are_stored_in_the_tensors_dtype_as_torch(program):
    check(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.tensor([0, 5, 200], dtype=lib.uint8).clamp(-256, 2),
    lambda lib: lib.tensor([0, 5, 100], dtype=lib.int8).clamp(None, 300),
    lambda lib: lib.tensor([1.0, 5.0], dtype=lib.float16).clamp(0.1, 70000),
    lambda lib: lib.tensor([1.0, 5.0]).clamp(max=1e300),
    lambda lib: lib.zeros(2, dtype=lib.float16).fill_(70000),
    lambda lib: lib.zeros(2, dtype=lib.float16).fill_(-7e4),
    lambda lib: lib.full((2,), 70000, dtype=lib.float16),
    lambda lib: lib.zeros(2, dtype=lib.float16).masked_fill(lib.tensor(True), 1e6),
    lambda lib: lib.zeros(2, 2, dtype=lib.float16).scatter(0, lib.tensor([[0]]), 1e6),
    lambda lib: lib.zeros(2).fill_(1e300),
], ids=["clamp uint8", "clamp int8", "clamp float16", "clamp float32", "fill_ float16",
        "fill_ float16 negative", "full float16", "masked_fill float16", "scatter float16",
        "fill_ float32"])
def test_a_number_beyond_a_dtypes_range_is_refused_where_torch_converts_it(program):
    assert "overflow" in both_raise(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.zeros(1, dtype=lib.float16).fill_(70000),  # torch's one-element path
    lambda lib: lib.full((), 7e4, dtype=lib.float16),
    lambda lib: lib.zeros(2, dtype=lib.float16).fill_(math.inf),
    lambda lib: lib.zeros(2, dtype=lib.float16).fill_(math.nan),
    lambda lib: lib.zeros(2, dtype=lib.float64).fill_(1e300),
    lambda lib: lib.zeros(0, dtype=lib.uint8).scatter(-1, lib.zeros(0, dtype=lib.int64), 300),
    lambda lib: lib.zeros(2, 0, dtype=lib.uint8).scatter(-1, lib.zeros(2, 0, dtype=lib.int64),
                                                        -1000),
], ids=["one float16", "one float16 full", "inf", "nan", "float64", "scatter nothing",
        "scatter nothing 2-d"])
def test_numbers_torch_accepts_unchecked(program):
    check(program)


def test_assigning_a_number_too_large_for_float16_gives_inf_as_torch():
    def program(lib):
        x = lib.zeros(3, dtype=lib.float16)
        x[0] = 70000
        x[lib.tensor([False, True, False])] = -1e6
        return x
    check(program)


def test_in_place_on_an_empty_view_of_a_graph_tensor():
    def program(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        b = w * 1
        b[:0].mul_(2)
        b[1:1].zero_()
        b.sum().backward()
        return b, w.grad
    check(program)


@pytest.mark.parametrize("op", ["fill_", "zero_"])
def test_fill_and_zero_of_an_expanded_view_in_the_graph(op):
    def program(lib):
        w = lib.tensor([1.0], requires_grad=True)
        b = (w * 1).expand(3)
        getattr(b, op)(*((2.0,) if op == "fill_" else ()))
        return b.detach(), b.requires_grad, b.grad_fn is not None
    check(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.where(lib.tensor(True)),
    lambda lib: lib.where(lib.tensor(0.0)),
    lambda lib: lib.tensor(1.0).view(-1)[:1].fill_(2.0),
    lambda lib: lib.topk(lib.tensor(1.0), 0),
    lambda lib: lib.topk(lib.tensor(1.0), 1),
    lambda lib: lib.tensor(3.0).nonzero(),
    lambda lib: lib.tensor(3.0).kthvalue(1),
    lambda lib: lib.tensor(3.0).cummax(0),
    lambda lib: lib.tensor(3.0).cumprod(0),
    lambda lib: lib.tensor(3.0).unique(),
    lambda lib: lib.tensor(2.0).repeat_interleave(3),
], ids=["where bool", "where float", "view fill", "topk 0", "topk 1", "nonzero", "kthvalue",
        "cummax", "cumprod", "unique", "repeat_interleave"])
def test_0d_edge_cases_answer_like_torch(program):
    check(program)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")
def test_std_of_a_0d_tensor_along_its_dim_backpropagates_like_torch():
    check(lambda lib: grads_of(lib, 1.0, lambda lib, x: x.std(dim=-1)))


@pytest.mark.parametrize("name", ["torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor",
                                  "torch.BoolTensor", "torch.ByteTensor"])
def test_type_with_a_type_name_converts(name):
    check(lambda lib: lib.tensor([1.5, 0.0]).type(name))
    assert learntorch.tensor([1]).type(name).type() == name


# ---------------------------------------------------------------- exception types
@pytest.mark.parametrize("program", [
    lambda lib: lib.cat([lib.tensor(1.0), lib.tensor(2.0)]),
    lambda lib: lib.bitwise_not(lib.tensor([1.0])),
    lambda lib: ~lib.tensor([1.0]),
    lambda lib: format(lib.tensor([1.0, 2.0]), ".2f"),
    lambda lib: lib.zeros(3).index_add(0, lib.tensor([5]), lib.ones(1)),
    lambda lib: lib.zeros(3, 2).index_add(0, lib.tensor([-1]), lib.ones(1, 2)),
    lambda lib: lib.argmax(lib.tensor([True, False])),
    lambda lib: lib.argmin(lib.tensor([True, False]), dim=0),
    lambda lib: lib.sum(lib.tensor([1.0, 2.0], requires_grad=True), dtype=lib.int64),
    lambda lib: lib.arange(5.0)[lib.tensor([1, 2], dtype=lib.int16)],
    lambda lib: lib.arange(5.0)[lib.tensor([1, 2], dtype=lib.int8)],
    lambda lib: lib.max(lib.tensor([1.0, 2.0]), False),
    lambda lib: lib.min(lib.tensor([1.0, 2.0]), True),
    lambda lib: lib.tensor([1.0]).type("torch.NoSuchTensor"),
    lambda lib: lib.scatter(lib.zeros(3), 0, lib.tensor([0]), lib.ones(1), reduce="mean"),
    lambda lib: lib.finfo(lib.int32),
    lambda lib: lib.iinfo(lib.float32),
    lambda lib: lib.iinfo(lib.bool),
    lambda lib: lib.set_num_threads(0),
], ids=["cat 0-d", "bitwise_not float", "invert float", "format spec", "index_add 1-d",
        "index_add 2-d", "argmax bool", "argmin bool", "sum int64 requires_grad",
        "int16 index", "int8 index", "max(t, False)", "min(t, True)", "type name",
        "scatter reduce", "finfo int", "iinfo float", "iinfo bool", "set_num_threads 0"])
def test_torchs_exception_type_is_raised(program):
    message = both_raise(program)
    assert len(message) > 20  # says what went wrong


@pytest.mark.parametrize("make", [
    lambda lib, x: x.requires_grad_(),
    lambda lib, x: setattr(x, "requires_grad", True),
    lambda lib, x: x[:1].requires_grad_(),  # a view of an inference tensor is one too
], ids=["requires_grad_()", "requires_grad = True", "view"])
def test_an_inference_tensor_cannot_require_grad_outside_inference_mode(make):
    def program(lib):
        with lib.inference_mode():
            x = lib.ones(2)
        make(lib, x)
    assert "inference" in both_raise(program)


def test_inference_tensors_are_marked_as_in_torch():
    def program(lib):
        with lib.inference_mode():
            x = lib.ones(2)
            inside = (x.is_inference(), lib.is_inference_mode_enabled(),
                      lib.ones(1).requires_grad_().requires_grad)
        with lib.inference_mode(False):
            off = lib.ones(1).is_inference()
        with lib.no_grad():
            plain = lib.ones(1).is_inference()
        return (inside, off, plain, x[0].is_inference(), x.clone().is_inference(),
                lib.is_inference_mode_enabled(), lib.ones(1).is_inference())
    check(program)


def test_sum_to_an_integer_dtype_is_fine_without_autograd():
    check(lambda lib: lib.sum(lib.tensor([1.5, 2.5]), dtype=lib.int64))
    check(lambda lib: lib.sum(lib.tensor([1.5, 2.5], requires_grad=True).detach(),
                              dtype=lib.int64))


# ---------------------------------------------------------------- metadata
def test_a_view_taken_under_no_grad_of_a_tensor_that_requires_grad_requires_grad():
    def program(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        h = w * 2
        with lib.no_grad():
            v, u = w[0], h.view(2)
        u.retain_grad()  # a leaf: no error, nothing to do
        return v.requires_grad, v.is_leaf, v.grad_fn is None, u.requires_grad, u.is_leaf
    check(program)


def test_in_place_on_a_no_grad_view_in_grad_mode_is_refused():
    def program(lib):
        h = lib.tensor([1.0, 2.0], requires_grad=True) * 2
        with lib.no_grad():
            v = h[:1]
        v.mul_(2)
    both_raise(program)


def _strided(lib):
    return lib.arange(24.0).reshape(4, 6).t()[::2]  # (3, 4) with strides (2, 6): not dense


@pytest.mark.parametrize("op", [
    lambda lib, a: a.index_add(1, lib.tensor([0]), a[:, :1]),
    lambda lib, a: a.masked_fill(a > 3, 1.0),
    lambda lib, a: a.scatter(0, lib.zeros(1, 4, dtype=lib.int64), 1.0),
    lambda lib, a: a.scatter_add(0, lib.zeros(1, 4, dtype=lib.int64), a[:1]),
    lambda lib, a: a.scatter_reduce(0, lib.zeros(1, 4, dtype=lib.int64), a[:1], "amax"),
    lambda lib, a: lib.where(a > 3, a, 0.0),
    lambda lib, a: a.index_put((lib.tensor([0]),), lib.tensor(1.0)),
    lambda lib, a: a.clone(),
], ids=["index_add", "masked_fill", "scatter", "scatter_add", "scatter_reduce", "where",
        "index_put", "clone"])
@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_results_of_writes_have_torchs_strides_so_view_agrees(op, layout):
    def program(lib):
        a = lib.arange(12.0).reshape(4, 3).t() if layout == "transposed" else _strided(lib)
        out = op(lib, a)
        try:
            flat = out.view(-1)
        except RuntimeError:
            flat = None
        return out, out.stride(), flat
    check(program)


def test_masked_fill_of_an_expanded_view_warns_and_writes_the_shared_element_as_torch():
    def program(lib):
        base = lib.tensor([1, 2, 3], dtype=lib.int8)
        base[:1].expand(3).masked_fill_(lib.tensor([False, True, False]), 17)
        base[1:].reshape(2, 1).expand(2, 3).masked_fill_(lib.tensor([[False], [True]]), -5)
        return base
    with pytest.warns(UserWarning, match="expanded"):
        program(learntorch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(program)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 3), (0, 0)])
def test_empty_tensors_have_torchs_strides(shape):
    got, want = both(lambda lib: (lib.zeros(shape).stride(), lib.empty(shape).stride(),
                                  lib.ones(shape, dtype=lib.int64).stride()))
    assert got == want
    got, want = both(lambda lib: lib.zeros(shape).contiguous().is_contiguous())
    assert got == want
