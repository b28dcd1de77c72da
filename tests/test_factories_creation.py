"""Creating tensors: dtype inference, fill values, ranges and *_like, against torch."""
import numpy as np
import pytest

import learntorch
from oracle import as_numpy, require_torch


def same_tensor(lt, th):
    if not hasattr(th, "dtype"):  # a shape, a dtype, ...: compare the printed form
        assert str(lt).replace("learntorch.", "torch.") == str(th)
        return
    assert lt.dtype.name == str(th.dtype).replace("torch.", ""), f"dtype {lt.dtype} vs {th.dtype}"
    assert tuple(lt.shape) == tuple(th.shape), f"shape {tuple(lt.shape)} vs {tuple(th.shape)}"
    # atol: torch's vectorized arange rounds differently in the last float32 bit
    np.testing.assert_allclose(as_numpy(lt).astype(np.float64),
                               as_numpy(th).astype(np.float64), rtol=1e-6, atol=1e-7)
    assert lt.requires_grad == th.requires_grad


def compare(expression):
    """Evaluate ``expression`` with m = learntorch and m = torch; same tensor or same error."""
    torch = require_torch()
    results = []
    for m in (learntorch, torch):
        try:
            results.append(eval(expression, {"m": m, "np": np}))
        except Exception as e:  # noqa: BLE001 -- the error type is the result compared
            results.append(e)
    lt, th = results
    if isinstance(th, Exception):
        assert isinstance(lt, Exception), f"{expression}: torch raises {th!r}, learntorch gave {lt}"
        assert isinstance(lt, type(th)), f"{expression}: {type(lt).__name__} vs torch's {th!r}"
    else:
        assert not isinstance(lt, Exception), f"{expression}: learntorch raised {lt!r}"
        same_tensor(lt, th)


TENSOR_CASES = [
    "m.tensor([True, False])", "m.tensor([1, 2])", "m.tensor([1, 2.5])", "m.tensor([True, 2])",
    "m.tensor([[1, 2], [3, 4.0]])", "m.tensor(3)", "m.tensor(3.0)", "m.tensor(True)",
    "m.tensor([])", "m.tensor([[], []])", "m.tensor(((1, 2), (3, 4)))",
    "m.tensor(np.array([1, 2], dtype=np.int32))", "m.tensor(np.array([1.0, 2.0]))",
    "m.tensor(np.array([1.5, 2.0], dtype=np.float16))", "m.tensor(np.array([True]))",
    "m.tensor(np.float64(2.0))", "m.tensor(np.int32(2))", "m.tensor(np.bool_(True))",
    "m.tensor([np.float64(1.0), 2])", "m.tensor([np.int32(1), 2])", "m.tensor([np.float32(1), 2])",
    "m.tensor([m.tensor(1.5, dtype=m.float64), 2])", "m.tensor([[m.tensor(1), 2]])",
    "m.tensor([1, 2], dtype=m.float64)", "m.tensor([1.7, -2.7], dtype=m.int64)",
    "m.tensor([0.5, 0.0], dtype=m.bool)", "m.tensor([1.0, 2.0], requires_grad=True)",
    # errors: ragged lists, strings, None, lists of multi-element tensors
    "m.tensor([[1, 2], [3]])", "m.tensor([[1, 2], [3, 4, 5]])", "m.tensor([[1], []])",
    "m.tensor([1, [2]])", "m.tensor([[1, 2], 3])", "m.tensor('a')", "m.tensor([1, None])",
    "m.tensor([m.tensor([1.0, 2.0])])", "m.tensor([1, 2], requires_grad=True)",
]


@pytest.mark.parametrize("expression", TENSOR_CASES)
def test_tensor_infers_dtype_and_shape_like_torch(expression):
    compare(expression)


def test_nested_list_dtype_follows_the_widest_element_at_any_depth():
    assert learntorch.tensor([[True, False], [False, True]]).dtype is learntorch.bool
    assert learntorch.tensor([[True, 1], [0, 1]]).dtype is learntorch.int64
    assert learntorch.tensor([[1, 2], [3, 4.5]]).dtype is learntorch.float32
    learntorch.set_default_dtype(learntorch.float64)
    try:
        assert learntorch.tensor([1.5]).dtype is learntorch.float64
        assert learntorch.tensor([1]).dtype is learntorch.int64
    finally:
        learntorch.set_default_dtype(learntorch.float32)


def test_ragged_list_error_names_the_dimension_and_lengths():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 3\)"):
        learntorch.tensor([[1, 2], [3, 4, 5]])


def test_tensor_copies_but_from_numpy_and_as_tensor_share_memory():
    a = np.array([1.0, 2.0])
    copied, shared, as_t = learntorch.tensor(a), learntorch.from_numpy(a), learntorch.as_tensor(a)
    a[0] = 9.0
    assert copied.tolist() == [1.0, 2.0]
    assert shared.tolist() == [9.0, 2.0] and as_t.tolist() == [9.0, 2.0]
    shared[1] = 7.0  # writes go both ways
    assert a[1] == 7.0 and shared.dtype is learntorch.float64
    converted = learntorch.as_tensor(a, dtype=learntorch.float32)  # a new dtype needs a copy
    a[0] = 0.0
    assert converted.tolist() == [9.0, 7.0]
    t = learntorch.tensor([1.0])
    assert learntorch.as_tensor(t) is t
    assert learntorch.as_tensor(t, dtype=learntorch.float64) is not t


def test_from_numpy_refuses_what_is_not_an_array():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        learntorch.from_numpy([1, 2])


def test_tensor_of_a_tensor_warns_like_torch():
    with pytest.warns(UserWarning, match="detach\\(\\).clone\\(\\)"):
        learntorch.tensor(learntorch.tensor([1.0]))


FILL_CASES = [
    "m.zeros(2, 3)", "m.zeros((2, 3))", "m.zeros([2, 3], dtype=m.int64)", "m.ones(2)",
    "m.zeros(())", "m.zeros(0)", "m.zeros(2, 0, 3)", "m.ones(2, 3, requires_grad=True)",
    "m.zeros(2, -1)", "m.zeros(2.5)", "m.zeros(2, dtype=m.int64, requires_grad=True)",
    "m.empty(2, 3).shape", "m.empty(2, dtype=m.int64).dtype",
    "m.full((2,), 3)", "m.full((2,), 3.0)", "m.full((2,), True)", "m.full([2], 7, dtype=m.float32)",
    "m.full((), 1.5)", "m.full((2,), 2.5, dtype=m.int64)", "m.full((2, 2), m.tensor(2.5))",
    "m.full((2,), np.float64(3.0))", "m.full(2, 3)",
    "m.eye(3)", "m.eye(2, 3)", "m.eye(2, dtype=m.int64)", "m.eye(0)", "m.eye(3, dtype=m.bool)",
    "m.zeros_like(m.tensor([1, 2]))", "m.ones_like(m.tensor([1.0, 2.0]), dtype=m.float64)",
    "m.full_like(m.tensor([1, 2]), 2.7)", "m.empty_like(m.tensor([1, 2])).shape",
    "m.zeros_like(m.tensor([1.0, 2.0]), requires_grad=True)", "m.ones(2).new_zeros(3)",
    "m.ones(2, dtype=m.int64).new_ones((2, 2))", "m.ones(2).new_full((2,), 3)",
    "m.ones(2, dtype=m.float64).new_tensor([1, 2])",
]


@pytest.mark.parametrize("expression", FILL_CASES)
def test_filled_tensors_like_torch(expression):
    compare(expression)


RANGE_CASES = [
    "m.arange(5)", "m.arange(1, 4)", "m.arange(0, 1, 0.25)", "m.arange(5.0)", "m.arange(5, 0, -1)",
    "m.arange(0, -1, -0.3)", "m.arange(1, 2.5, 0.5)", "m.arange(0, 10, 3)", "m.arange(0.1, 0.7, 0.2)",
    "m.arange(10, dtype=m.float32)", "m.arange(0, 1, 0.1)", "m.arange(-1.0, 1.0, 0.1)",
    "m.arange(1, 2.2, 0.3)", "m.arange(1, 1)", "m.arange(np.int64(3))", "m.arange(m.tensor(3))",
    "m.arange(m.tensor(3.0))", "m.arange(0, 5, 2, dtype=m.float64)", "m.arange(2.0, 0, -0.5)",
    "m.arange(0, 5, 1.5, dtype=m.int64)", "m.arange(0.5, 5, 1.5, dtype=m.int64)",
    "m.arange(-3, 5, 2.7, dtype=m.int64)", "m.arange(0, 3, requires_grad=True, dtype=m.float32)",
    "m.arange(1, 0.0, 1)", "m.arange(0, 1, 0)", "m.arange(0, 5, 0.5, dtype=m.int64)",
    "m.linspace(0, 1, 5)", "m.linspace(0, 10, 3, dtype=m.int64)", "m.linspace(1, 1, 1)",
    "m.linspace(0, 1, 0)", "m.linspace(-1, 1, steps=4)", "m.linspace(2, -2, 5, dtype=m.float64)",
    "m.linspace(0, 1, -1)", "m.linspace(0, 1, 3, requires_grad=True)",
    "m.logspace(0, 2, 3)",
]


@pytest.mark.parametrize("expression", RANGE_CASES)
def test_ranges_have_torchs_length_values_and_dtype(expression):
    compare(expression)


# ---------------------------------------------------------------- random
RANDOM_FORMS = [
    "m.rand(2, 3)", "m.rand((2, 3))", "m.rand(())", "m.rand(2, dtype=m.float64)",
    "m.rand(2, dtype=m.float16)", "m.randn([4])", "m.randn(0)", "m.randn(2, requires_grad=True)",
    "m.randint(5, (3,))", "m.randint(2, 5, (3,))", "m.randint(5, size=(3,))",
    "m.randint(low=1, high=5, size=(2, 2))", "m.randint(high=5, size=(2,))", "m.randint(5, ())",
    "m.randint(5, (3,), dtype=m.float32)", "m.randint(-3, -1, (2,))", "m.randperm(5)",
    "m.randperm(3, dtype=m.int32)", "m.randperm(0)", "m.rand_like(m.ones(2, 3))",
    "m.randn_like(m.ones(2, dtype=m.float64))", "m.randint_like(m.ones(2), 10)",
    "m.randint_like(m.ones(2, dtype=m.int64), 3, 10)",
    # errors
    "m.rand(2, dtype=m.int64)", "m.randn_like(m.tensor([1, 2]))", "m.randint(0, (3,))",
    "m.randint(3, 3, (2,))", "m.randint(5, 3)", "m.randint(5)", "m.randperm(-1)",
]


@pytest.mark.parametrize("expression", RANDOM_FORMS)
def test_random_factories_have_torchs_shapes_dtypes_and_errors(expression):
    torch = require_torch()
    results = []
    for m in (learntorch, torch):
        try:
            results.append(eval(expression, {"m": m, "np": np}))
        except Exception as e:  # noqa: BLE001
            results.append(e)
    lt, th = results
    if isinstance(th, Exception):
        assert isinstance(lt, type(th)), f"{type(lt).__name__} vs torch's {th!r}"
        return
    assert (tuple(lt.shape), lt.dtype.name, lt.requires_grad) == \
        (tuple(th.shape), str(th.dtype).replace("torch.", ""), th.requires_grad)


def test_random_values_have_the_right_distributions():
    learntorch.manual_seed(1)
    u = learntorch.rand(20000, dtype=learntorch.float64).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    n = learntorch.randn(20000, dtype=learntorch.float64).numpy()
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    r = learntorch.randint(-3, 4, (5000,)).numpy()
    assert set(np.unique(r)) == set(range(-3, 4))
    p = learntorch.randperm(50).numpy()
    assert sorted(p.tolist()) == list(range(50))


def test_manual_seed_makes_every_factory_reproducible():
    def draw():
        return [learntorch.rand(3).tolist(), learntorch.randn(2, 2).tolist(),
                learntorch.randint(0, 100, (4,)).tolist(), learntorch.randperm(6).tolist()]
    learntorch.manual_seed(1234)
    first = draw()
    learntorch.manual_seed(1234)
    assert draw() == first
    learntorch.manual_seed(4321)
    assert draw() != first


def test_a_generator_is_independent_of_the_global_one():
    learntorch.manual_seed(0)
    expected = learntorch.randn(3).tolist()
    learntorch.manual_seed(0)
    g = learntorch.Generator().manual_seed(5)
    from_g = learntorch.randn(3, generator=g).tolist()
    assert learntorch.randn(3).tolist() == expected  # the global stream did not move
    g2 = learntorch.Generator().manual_seed(5)
    assert learntorch.randn(3, generator=g2).tolist() == from_g
    assert g.initial_seed() == 5


def test_generator_state_round_trips():
    g = learntorch.Generator().manual_seed(7)
    state = g.get_state()
    a = learntorch.rand(4, generator=g).tolist()
    g.set_state(state)
    assert learntorch.rand(4, generator=g).tolist() == a
    saved = learntorch.get_rng_state()
    b = learntorch.randint(0, 1000, (5,)).tolist()
    learntorch.set_rng_state(saved)
    assert learntorch.randint(0, 1000, (5,)).tolist() == b


def test_manual_seed_returns_the_default_generator_and_initial_seed_reports_it():
    g = learntorch.manual_seed(42)
    assert isinstance(g, learntorch.Generator) and learntorch.initial_seed() == 42
    assert learntorch.Generator().initial_seed() == require_torch().Generator().initial_seed()
