"""Matrix products with bad operands raise torch's exception type, with messages naming shapes."""
import pytest

import learntorch
from oracle import require_torch


def both_raise(call, match=None):
    """``call(lib)`` raises the same exception type in torch and learntorch; returns both."""
    torch = require_torch()
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value), match=match) as got:
        call(learntorch)
    return str(expected.value), str(got.value)


@pytest.mark.parametrize("call", [
    lambda t: t.ones(2, 3) @ t.ones(4, 5),
    lambda t: t.mm(t.ones(2, 3), t.ones(4, 5)),
    lambda t: t.matmul(t.ones(2, 3), t.ones(4, 5)),
    lambda t: t.ones(2, 3).mm(t.ones(4, 5)),
], ids=["at", "mm", "matmul", "method"])
def test_2d_shape_mismatch_is_torchs_exact_message(call):
    expected, got = both_raise(call)
    assert expected == "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
    assert got.startswith(expected)


@pytest.mark.parametrize("call,shapes", [
    (lambda t: t.ones(3) @ t.ones(4, 5), "1x3 and 4x5"),
    (lambda t: t.ones(2, 2, 3) @ t.ones(4, 5), "[2, 2, 3] and [4, 5]"),
    (lambda t: t.ones(2, 2, 3) @ t.ones(2, 4, 5), "[2, 2, 3] and [2, 4, 5]"),
    (lambda t: t.ones(3) @ t.ones(2, 4, 5), "[3] and [2, 4, 5]"),
], ids=["vec_mat", "batch_mat", "batch_batch", "vec_batch"])
def test_nd_shape_mismatch_is_a_runtime_error_naming_the_shapes(call, shapes):
    _, got = both_raise(call)
    assert shapes in got


@pytest.mark.parametrize("call,expected_start", [
    (lambda t: t.ones(3) @ t.ones(4), "inconsistent tensor size"),
    (lambda t: t.dot(t.ones(3), t.ones(4)), "inconsistent tensor size"),
    (lambda t: t.ones(2, 3) @ t.ones(4), "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda t: t.ones(2, 2, 3) @ t.ones(4), "size mismatch"),
    (lambda t: t.ones(2, 2, 3) @ t.ones(3, 3, 5), None),
    (lambda t: t.ones(()) @ t.ones(3), "both arguments to matmul need to be at least 1D"),
    (lambda t: t.mm(t.ones(2, 2, 3), t.ones(3, 5)), "self must be a matrix"),
    (lambda t: t.mm(t.ones(2, 3), t.ones(3)), "mat2 must be a matrix"),
    (lambda t: t.bmm(t.ones(2, 3), t.ones(2, 3, 4)), "batch1 must be a 3D tensor"),
    (lambda t: t.bmm(t.ones(2, 2, 3), t.ones(2, 4, 5)),
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."),
    (lambda t: t.bmm(t.ones(2, 2, 3), t.ones(3, 3, 5)),
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
    (lambda t: t.dot(t.ones(3, 1), t.ones(3)), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda t: t.outer(t.ones(2, 2), t.ones(3)), "outer: Expected 1-D argument self, but got 2-D"),
    (lambda t: t.outer(t.ones(2), t.ones(())), "outer: Expected 1-D argument vec2, but got 0-D"),
], ids=["dot_via_at", "dot", "mv", "batch_mv", "batch_broadcast", "0d", "mm_3d", "mm_1d",
        "bmm_2d", "bmm_inner", "bmm_batch", "dot_2d", "outer_self", "outer_vec2"])
def test_bad_shapes_raise_torchs_error(call, expected_start):
    expected, got = both_raise(call)
    if expected_start is not None:
        assert expected.startswith(expected_start)
        assert got.startswith(expected_start), got


SAME_DTYPE = "expected m1 and m2 to have the same dtype"


@pytest.mark.parametrize("call,headline", [
    (lambda t: t.ones(2, 3) @ t.ones(3, 4, dtype=t.float64), SAME_DTYPE),
    (lambda t: t.mm(t.ones(2, 3), t.ones(3, 4, dtype=t.float64)), SAME_DTYPE),
    (lambda t: t.ones(2, 2, 3) @ t.ones(3, 4, dtype=t.float64), SAME_DTYPE),
    (lambda t: t.ones(3) @ t.ones(3, dtype=t.float64),
     "dot : expected both vectors to have same dtype"),
    (lambda t: t.ones(2, 3) @ t.ones(3, 4, dtype=t.int64), SAME_DTYPE),
    (lambda t: t.bmm(t.ones(2, 2, 3), t.ones(2, 3, 4, dtype=t.float64)), None),
], ids=["at", "mm", "batched", "dot", "int", "bmm"])
def test_dtype_mismatch_is_a_runtime_error_naming_both_dtypes(call, headline):
    expected, got = both_raise(call)
    if headline is not None:
        assert expected.startswith(headline) and got.startswith(headline)
    assert "float32" in got and ("float64" in got or "int64" in got)


def test_bool_matmul_is_not_implemented_like_torch():
    both_raise(lambda t: t.ones(2, 3, dtype=t.bool) @ t.ones(3, 4, dtype=t.bool), match="bool")


@pytest.mark.parametrize("call", [
    lambda t: t.ones(2) @ 2, lambda t: 2 @ t.ones(2), lambda t: t.matmul(t.ones(2), [1.0, 2.0]),
    lambda t: t.mm(t.ones(2, 2), 3.0), lambda t: t.dot(t.ones(2), (1.0, 2.0)),
    lambda t: t.outer(t.ones(2), 2), lambda t: t.ones(2) @ [1.0, 2.0],
], ids=["at_int", "int_at", "matmul_list", "mm_float", "dot_tuple", "outer_int", "at_list"])
def test_non_tensor_operands_are_a_type_error_like_torch(call):
    both_raise(call)


def test_0_dim_products_are_writable_tensors_not_numpy_scalars():
    for out in [learntorch.ones(3) @ learntorch.ones(3), learntorch.dot(learntorch.ones(2),
                                                                        learntorch.ones(2)),
                learntorch.einsum("i,i->", learntorch.ones(2), learntorch.ones(2))]:
        assert out.shape == () and out.item() in (2.0, 3.0)
        out.fill_(0)  # an in-place op needs an array under the tensor, not a numpy scalar
        assert out.item() == 0
