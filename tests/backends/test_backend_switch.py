"""The backend switch: set_backend / get_backend / use, and a learner's own backend object."""
import numpy as np
import pytest

import learntorch
from learntorch import backends
from learntorch.backends import NumpyBackend
from learntorch.backends.numba_cpu import NumbaBackend


@pytest.fixture(autouse=True)
def _restore_backend():
    """Every test here may switch backends: put the previous one back afterwards."""
    before = backends.get_backend()
    yield
    backends.set_backend(before)


class CountingRelu(NumpyBackend):
    """What a learner writes in the kernels chapter: replace one primitive, inherit the rest."""

    def __init__(self):
        self.calls = []

    def relu(self, x):
        self.calls.append(("relu", x.shape))
        return np.where(x > 0, x, 0).astype(x.dtype)

    def relu_backward(self, y, grad):
        self.calls.append(("relu_backward", y.shape))
        return grad * (y > 0)


def test_default_backend_is_numba_and_get_backend_is_current():
    # (a fresh process starting on "numba" is checked in test_backend_dispatch.py)
    assert backends.default_backend_name() == "numba"
    assert backends.get_backend() is backends.current


@pytest.mark.parametrize("name, cls", [("numpy", NumpyBackend), ("numba", NumbaBackend)])
def test_set_backend_by_name_returns_and_activates_it(name, cls):
    made = backends.set_backend(name)
    assert type(made) is cls and made.name == name
    assert backends.get_backend() is made and backends.current is made


def test_use_switches_for_the_block_only_even_when_it_raises():
    before = backends.get_backend()
    with backends.use("numpy") as inside:
        assert backends.get_backend() is inside and type(inside) is NumpyBackend
    assert backends.get_backend() is before
    with pytest.raises(ZeroDivisionError):
        with backends.use("numpy"):
            1 / 0
    assert backends.get_backend() is before


def test_use_nests():
    outer_before = backends.get_backend()
    with backends.use("numpy") as a:
        with backends.use("numba") as b:
            assert backends.get_backend() is b
        assert backends.get_backend() is a
    assert backends.get_backend() is outer_before


def test_learners_backend_object_receives_every_relu_call_forward_and_backward():
    mine = CountingRelu()
    x = learntorch.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    with backends.use(mine) as active:
        assert active is mine
        y = learntorch.relu(x)
        y.sum().backward()
        x.relu()  # the Tensor method goes through the same primitive
    assert mine.calls == [("relu", (2, 2)), ("relu_backward", (2, 2)), ("relu", (2, 2))]
    np.testing.assert_array_equal(y.detach().numpy(), [[0, 2], [3, 0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1], [1, 0]])


def test_set_backend_keeps_a_learners_backend_active_for_later_ops():
    mine = backends.set_backend(CountingRelu())
    learntorch.relu(learntorch.ones(3))
    learntorch.relu(learntorch.ones(2, 2))
    assert backends.get_backend() is mine
    assert mine.calls == [("relu", (3,)), ("relu", (2, 2))]


def test_every_op_family_reaches_the_active_backend():
    """A backend that doubles ``add`` proves that ``+`` really calls backends.current."""
    class DoublingAdd(NumpyBackend):
        def add(self, a, b):
            return 2 * np.add(a, b)

    with backends.use(DoublingAdd()):
        out = learntorch.tensor([1.0, 2.0]) + learntorch.tensor([3.0, 4.0])
    np.testing.assert_array_equal(out.numpy(), [8.0, 12.0])


def test_unknown_backend_name_is_a_value_error_naming_the_choices():
    with pytest.raises(ValueError, match=r"unknown backend 'cuda-fast'.*'numba', 'numpy'"):
        backends.set_backend("cuda-fast")


def test_passing_the_class_instead_of_an_object_is_a_type_error_with_the_fix():
    with pytest.raises(TypeError, match=r"set_backend\(CountingRelu\(\)\)"):
        backends.set_backend(CountingRelu)


def test_object_without_the_primitives_is_a_type_error_naming_what_is_missing():
    class OnlyRelu:
        def relu(self, x):
            return x

    with pytest.raises(TypeError, match=r"OnlyRelu is not a backend.*lacks.*add.*Subclass "
                                        r"learntorch.backends.NumpyBackend"):
        backends.set_backend(OnlyRelu())
    with pytest.raises(TypeError):
        with backends.use(OnlyRelu()):
            pass
    assert isinstance(backends.get_backend(), (NumbaBackend, NumpyBackend))


def test_numba_backend_rejects_unknown_kernel_names_in_min_sizes():
    with pytest.raises(ValueError, match=r"min_sizes names no kernel: \['rleu'\]"):
        NumbaBackend(min_sizes={"rleu": 10})


def test_numba_backend_thresholds_can_be_set_per_kernel_or_all_at_once():
    defaults = dict(NumbaBackend.min_sizes)
    assert set(NumbaBackend(min_size=0).min_sizes.values()) == {0}
    custom = NumbaBackend(min_sizes={"softmax": 123})
    assert custom.min_sizes == {**defaults, "softmax": 123}
    assert NumbaBackend.min_sizes == defaults  # an instance's settings never leak into the class
