"""``repr(tensor)`` is torch's text, with ``torch.`` read as ``learntorch.`` in dtype names."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from learntorch import _tensor_repr
from oracle import require_torch

CASES = [
    # integers
    "m.tensor([1, 2, 3])", "m.tensor([-1, 20, 300])", "m.tensor(7)", "m.tensor([[1, -1], [10, -100]])",
    "m.tensor([2000000000, 1])", "m.tensor([[[1]]])", "m.tensor([1, 2], dtype=m.int32)",
    "m.tensor([1, 2], dtype=m.uint8)", "m.tensor([1, 2], dtype=m.int16)",
    # floats: whole numbers, fractions, negatives
    "m.tensor([1.0, 2.0, 3.0])", "m.tensor([1.5, -2.25, 3.0])", "m.tensor([0.1, 0.2])",
    "m.tensor([1.0, 2.0]) / 3", "m.tensor([-5.0])", "m.tensor([1.1, 2.0])", "m.tensor([0.0])",
    "m.tensor([-0.0, 0.0])", "m.tensor([100.0, 1000.5])", "m.tensor([1e4 + 0.5, 1.0])",
    "m.tensor([123456.789, 1.5])", "m.tensor([12345678.0])", "m.tensor([99999.0, 1.5])",
    "m.tensor([1.0, 2.0]).exp()", "m.arange(30.0).reshape(5, 6) / 7",
    # scientific notation: large, small, wide ranges
    "m.tensor([1e-5, 1.0])", "m.tensor([1e8, 1.0])", "m.tensor([1e10])", "m.tensor([1e-10, 2e-10])",
    "m.tensor([1234.5, 0.001])", "m.tensor([0.00012, 1.0])", "m.tensor([1.0e-8, 0.0])",
    "m.tensor([0.0, 1e-5])", "m.tensor([1000.0, 1e-3])", "m.tensor([1e5, 1.0])",
    "m.tensor([1e15, 1.0])", "m.tensor([1e16, 1.0])", "m.tensor([1e3, 1e-3])",
    "m.tensor([-1e-5, 1.0])", "m.tensor([1e-4, 1.0])", "m.tensor([9.99e-5, 1.0])",
    "m.arange(10.0) * 1e-6", "m.tensor([[1e-5, 1.0], [2.0, 3.0]])",
    "m.tensor([[0.5, -1.2]], dtype=m.float64) * 1e6",
    # nan and inf
    "m.tensor([float('nan'), 1.0, float('inf')])", "m.tensor([float('nan'), float('-inf')])",
    "m.tensor([float('nan'), 1.5])", "m.tensor([float('inf'), 1e-5])",
    # 0-dim
    "m.tensor(3.0)", "m.tensor(-3.5)", "m.tensor(True)", "m.tensor(1e-7)", "m.tensor(1e20)",
    "m.tensor([1.0, 2.0]).sum()",
    # empty
    "m.tensor([])", "m.zeros(0, 3)", "m.zeros(2, 0, dtype=m.int64)", "m.zeros(0, dtype=m.bool)",
    "m.zeros(0, dtype=m.float64)", "m.zeros(0, requires_grad=True)",
    # 2-D / 3-D / bool
    "m.tensor([[1.0, 2.0], [3.0, 4.0]])", "m.arange(24.0).reshape(2, 3, 4)",
    "m.arange(24).reshape(2, 3, 4)", "m.arange(16.0).reshape(2, 2, 2, 2)",
    "m.tensor([True, False])", "m.tensor([[True], [True]])", "m.tensor([False, False])",
    # other dtypes get a suffix
    "m.tensor([1.0, 2.0], dtype=m.float64)", "m.tensor([1.5, 2.0], dtype=m.float16)",
    "m.tensor([1.5, 2.5], dtype=m.float16) * 1000", "m.tensor([65504.0], dtype=m.float16)",
    "m.zeros(3, dtype=m.float64)", "m.tensor(2.5, dtype=m.float64)",
    # autograd suffixes, also where they wrap onto their own line
    "m.tensor([1.0, 2.0], requires_grad=True)", "m.tensor([1.0, 2.0], requires_grad=True) * 2",
    "m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)",
    "m.tensor([0.3, -1.2], requires_grad=True, dtype=m.float64).tanh()",
    "m.ones(2, 7, dtype=m.float64, requires_grad=True) / 3",
    "m.nn.Parameter(m.ones(2, 3))",
    # long rows wrap at 80 columns
    "m.ones(3, 40)", "m.ones(2, 20) * 1.5", "m.ones(2, 9) / 3", "m.ones(1, 30, dtype=m.float64) / 3",
    "m.arange(100)", "m.arange(30.0) * 1e5",
    # large tensors are summarised with ...
    "m.arange(2000.0)", "m.arange(2000)", "m.arange(1100.0).reshape(100, 11)",
    "m.arange(3000.0).reshape(10, 10, 30)", "m.arange(1001) * 1000", "m.arange(1001) % 2 == 0",
    "m.ones(1001) / 3", "m.arange(5000).reshape(50, 100)",
]


def torch_text(expression):
    torch = require_torch()
    return repr(eval(expression, {"m": torch}))


@pytest.mark.parametrize("expression", CASES)
def test_repr_is_torchs(expression):
    ours = repr(eval(expression, {"m": learntorch}))
    assert ours.replace("learntorch.", "torch.") == torch_text(expression)
    assert str(eval(expression, {"m": learntorch})) == ours


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1,
                max_size=12),
       st.sampled_from(["float32", "float64"]))
def test_repr_of_arbitrary_floats_is_torchs(values, dtype):
    torch = require_torch()
    a = np.array(values, dtype=dtype)
    ours = repr(learntorch.from_numpy(a)).replace("learntorch.", "torch.")
    assert ours == repr(torch.from_numpy(a))


@given(st.lists(st.integers(-10 ** 12, 10 ** 12), min_size=1, max_size=30))
def test_repr_of_arbitrary_integers_is_torchs(values):
    torch = require_torch()
    assert repr(learntorch.tensor(values)) == repr(torch.tensor(values))


def test_print_options_change_the_text_like_torchs():
    torch = require_torch()
    options = dict(precision=2, threshold=10, edgeitems=2, linewidth=40)
    values = np.linspace(-1, 1, 25).reshape(5, 5)
    with _tensor_repr.printoptions(**options):
        ours = repr(learntorch.tensor(values))
        sci = repr(learntorch.tensor([1.5, 2.5]) * 1)
    torch.set_printoptions(**options)
    try:
        theirs = repr(torch.tensor(values))
    finally:
        torch.set_printoptions(profile="default")
    assert ours.replace("learntorch.", "torch.") == theirs
    assert repr(learntorch.tensor(values)) == repr(torch.tensor(values)).replace(
        "torch.", "learntorch.")  # the options were restored
    assert sci == "tensor([1.50, 2.50])"
