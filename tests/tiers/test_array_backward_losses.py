"""The fast tier's array backward of the losses equals the reference ``backward``, bit for bit.

For each ``ARRAY_BACKWARD`` entry of ``_fast/array_backward/losses.py`` (and
``Linear``'s), on hypothesis inputs -- 0-d where the loss takes it, broadcast,
strided, float32/float64, inf and nan, every reduction -- the entry run on the node
and a gradient array must give exactly the arrays of the reference ``backward`` run
on the same node with a Tensor gradient, under whichever CPU backend is active
(the Numba backend with every kernel forced, and numpy).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from learntorch._fast.array_backward import ARRAY_BACKWARD
from learntorch.backends import NumbaBackend, NumpyBackend
from learntorch.nn._functional import linear, loss_cross_entropy, loss_nll, loss_regression
from oracle import arrays, broadcastable_pair

SPECIAL = st.sampled_from([0.0, np.inf, -np.inf, np.nan, 1e30, -7.5])


def kernels_everywhere():
    backend = NumbaBackend(min_size=0)
    backend.layer_min_sizes = dict.fromkeys(backend.layer_min_sizes, 0)
    return backend


BACKENDS = {"numba": kernels_everywhere, "numpy": NumpyBackend}


def assert_bitwise_equal(fast, reference):
    assert len(fast) == len(reference)
    for f, r in zip(fast, reference):
        if r is None:
            assert f is None
            continue
        r = r._data
        f = np.asarray(f)
        assert f.shape == r.shape and f.dtype == r.dtype
        np.testing.assert_array_equal(f, r)  # (nan == nan here)
        assert np.array_equal(np.signbit(f), np.signbit(r))


def both_backwards(loss, grad_array):
    """(the ARRAY_BACKWARD entry's gradients, the reference backward's), on one node."""
    node = loss.grad_fn
    entry = ARRAY_BACKWARD[node._function]
    with learntorch.no_grad(), np.errstate(all="ignore"):  # (as the engine runs them)
        fast = entry(node, grad_array)
        # (the very same array: BLAS's last bit may depend on where a buffer sits in memory)
        reference = node._function.backward(node, learntorch.Tensor._wrap(grad_array))
    return fast, reference


def with_specials(draw, a):
    """``a`` (any layout) with a few elements replaced by inf, nan, huge numbers or 0."""
    if a.size and draw(st.booleans()):
        a = a.copy()
        for _ in range(draw(st.integers(1, 3))):
            a.flat[draw(st.integers(0, a.size - 1))] = draw(SPECIAL)
    return a


def grad_for(draw, loss):
    g = draw(arrays(shape=tuple(loss.shape), dtype=loss.dtype.np))
    return with_specials(draw, g)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@given(data=st.data())
def test_mse_loss_array_backward_is_the_reference_bit_for_bit(backend, data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    a, b = data.draw(broadcastable_pair(dtype=dtype))
    a, b = with_specials(data.draw, a), with_specials(data.draw, b)
    reduction = data.draw(st.sampled_from(["none", "mean", "sum"]))
    needs = data.draw(st.sampled_from([(True, True), (True, False), (False, True)]))
    with learntorch.backends.use(BACKENDS[backend]()):
        x = learntorch.tensor(a, requires_grad=needs[0])
        y = learntorch.tensor(b, requires_grad=needs[1])
        with pytest.warns(UserWarning) if a.shape != b.shape else _nothing():
            loss = F.mse_loss(x, y, reduction=reduction)
        assert loss.grad_fn._function is loss_regression.MseLoss
        assert_bitwise_equal(*both_backwards(loss, grad_for(data.draw, loss)))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@st.composite
def class_problem(draw, min_dims=1):
    """Logits (any of the accepted layouts, often strided) and class numbers, some ignored."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    n_dims = draw(st.integers(min_dims, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=n_dims, max_size=n_dims)))
    x = with_specials(draw, draw(arrays(shape=shape, dtype=dtype)) * 3)
    target_shape = () if len(shape) == 1 else shape[:1] + shape[2:]
    n_classes = shape[0] if len(shape) == 1 else shape[1]
    t = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=int(np.prod(target_shape)),
                               max_size=int(np.prod(target_shape)))), dtype=np.int64)
    ignore_index = draw(st.sampled_from([-100, 0]))
    return x, t.reshape(target_shape), ignore_index


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@given(problem=class_problem(), data=st.data())
def test_cross_entropy_array_backward_is_the_reference_bit_for_bit(backend, problem, data):
    x_array, t, ignore_index = problem
    reduction = data.draw(st.sampled_from(["none", "mean", "sum"]))
    smoothing = data.draw(st.sampled_from([0.0, 0.2]))
    weighted = data.draw(st.booleans())
    n_classes = x_array.shape[0 if x_array.ndim == 1 else 1]
    weight = (learntorch.tensor(np.linspace(0.5, 2, n_classes), dtype=learntorch.tensor(x_array).dtype)
              if weighted else None)
    with learntorch.backends.use(BACKENDS[backend]()):
        x = learntorch.tensor(x_array, requires_grad=True)
        loss = F.cross_entropy(x, learntorch.tensor(t), weight=weight, ignore_index=ignore_index,
                               reduction=reduction, label_smoothing=smoothing)
        assert loss.grad_fn._function is loss_cross_entropy.CrossEntropy
        assert_bitwise_equal(*both_backwards(loss, grad_for(data.draw, loss)))


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@given(problem=class_problem(), data=st.data())
def test_nll_loss_array_backward_is_the_reference_bit_for_bit(backend, problem, data):
    x_array, t, ignore_index = problem
    reduction = data.draw(st.sampled_from(["none", "mean", "sum"]))
    with learntorch.backends.use(BACKENDS[backend]()):
        x = learntorch.tensor(x_array, requires_grad=True)
        loss = F.nll_loss(x, learntorch.tensor(t), ignore_index=ignore_index, reduction=reduction)
        assert loss.grad_fn._function is loss_nll.NllLoss
        assert_bitwise_equal(*both_backwards(loss, grad_for(data.draw, loss)))


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@given(data=st.data())
def test_linear_array_backward_is_the_reference_bit_for_bit(backend, data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    x_array = data.draw(arrays(dtype=dtype, min_dims=1, max_dims=3))
    n_in = x_array.shape[-1]
    n_out = data.draw(st.integers(1, 4))
    w_array = data.draw(arrays(shape=(n_out, n_in), dtype=dtype))
    needs = data.draw(st.sampled_from([(True, True, True), (False, True, True),
                                       (True, False, False), (True, True, False)]))
    with learntorch.backends.use(BACKENDS[backend]()):
        x = learntorch.tensor(with_specials(data.draw, x_array), requires_grad=needs[0])
        w = learntorch.tensor(w_array, requires_grad=needs[1])
        b = learntorch.tensor(np.arange(n_out, dtype=dtype), requires_grad=needs[2])
        out = F.linear(x, w, b)
        assert out.grad_fn._function is linear.Linear
        fast, reference = both_backwards(out, grad_for(data.draw, out))
        # the bias's gradient: the entry sums the rows itself, the reference lets the engine
        fast, reference = list(fast), list(reference)
        if needs[2] and x.ndim == 2:
            reference[2] = learntorch.Tensor._wrap(reference[2]._data.sum(axis=0))
        assert_bitwise_equal(fast, reference)


def test_every_loss_entry_is_tested_here():
    tested = {loss_cross_entropy.CrossEntropy, loss_nll.NllLoss, loss_regression.MseLoss}
    loss_entries = {cls for cls, fn in ARRAY_BACKWARD.items()
                    if fn.__module__.endswith("array_backward.losses")}
    assert loss_entries == tested
