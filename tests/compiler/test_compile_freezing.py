"""``options={"freezing": True}``: under no_grad each ``Linear`` whose weight is a parameter
multiplies by a transposed copy of it (``learntorch/compiler/freezing.py``).  The copy is
made again whenever the weight changes in a way its version counter or its array shows;
the values stay eager's within float rounding; nothing else is frozen.
"""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from learntorch import backends
from learntorch.backends.reference import NumpyBackend
from learntorch.compiler.freezing import FrozenLinear


def mlp(dtype=learntorch.float32):
    learntorch.manual_seed(0)
    return learntorch.nn.Sequential(learntorch.nn.Linear(20, 16), learntorch.nn.ReLU(),
                                    learntorch.nn.Linear(16, 8), learntorch.nn.ReLU(),
                                    learntorch.nn.Linear(8, 3)).to(dtype).eval()


def frozen_of(compiled):
    """The FrozenLinear objects of the latest program, in the order the code names them."""
    compiled = getattr(compiled, "_compiled", compiled)
    namespace = compiled.programs[-1].run.__globals__
    return [v for k, v in namespace.items() if isinstance(v, FrozenLinear)]


def same_as_eager(got, model, x, dtype=learntorch.float32):
    expected = model(x)
    tolerance = dict(rtol=1e-5, atol=1e-6) if dtype == learntorch.float32 else dict(rtol=1e-12)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), **tolerance)
    assert got.shape == expected.shape and got.dtype == expected.dtype


@pytest.mark.parametrize("dtype", [learntorch.float32, learntorch.float64])
@pytest.mark.parametrize("batch", [(128,), (4, 5)])  # a matrix, and leading dims to merge
def test_a_frozen_mlp_multiplies_by_transposed_copies_and_equals_eager(dtype, batch):
    model = mlp(dtype)
    compiled = learntorch.compile(model, options={"freezing": True})
    x = learntorch.randn(*batch, 20, dtype=dtype)
    with learntorch.no_grad():
        for _ in range(2):  # the capture's call, then a replay
            same_as_eager(compiled(x), model, x, dtype)
    code = compiled._compiled.code
    assert code.count("weight stored transposed (freezing)") == 3, code
    assert "Linear.apply" not in code, code
    frozen = frozen_of(compiled)
    assert [f.weight for f in frozen] == [model[0].weight, model[2].weight, model[4].weight]
    for f in frozen:
        np.testing.assert_array_equal(f.packed, f.weight.detach().numpy().T)
        assert f.packed.flags.c_contiguous and f.repacks == 0
    # the epilogue is still written over the (frozen) matmul's result
    assert [k.donated for k in compiled._compiled.kernels] == [0, 0]


def test_without_the_option_the_program_calls_the_engines_linear_bit_for_bit():
    model = mlp()
    compiled = learntorch.compile(model)
    x = learntorch.randn(128, 20)
    with learntorch.no_grad():
        got = compiled(x)
        np.testing.assert_array_equal(got.numpy(), model(x).numpy())
    assert "freezing" not in compiled._compiled.code and not frozen_of(compiled)


def change_by_optimizer(model):
    optimizer = learntorch.optim.SGD(model.parameters(), lr=0.5)
    with learntorch.enable_grad():
        model(learntorch.randn(3, 20)).pow(2).sum().backward()
    optimizer.step()


def change_in_place(model):
    with learntorch.no_grad():
        model[0].weight.mul_(-2.0)


def change_by_load_state_dict(model):
    state = {k: v * 3 for k, v in model.state_dict().items()}
    model.load_state_dict(state)


def change_data(model):
    model[0].weight.data = learntorch.randn(16, 20)  # a new array under the same parameter


@pytest.mark.parametrize("change", [change_by_optimizer, change_in_place,
                                    change_by_load_state_dict, change_data])
def test_a_weight_changed_after_compiling_is_copied_again(change):
    model = mlp()
    compiled = learntorch.compile(model, options={"freezing": True})
    x = learntorch.randn(128, 20)
    with learntorch.no_grad():
        before = compiled(x).numpy().copy()
    change(model)
    with learntorch.no_grad():
        got = compiled(x)
        same_as_eager(got, model, x)
    assert not np.allclose(got.numpy(), before)  # the change mattered
    assert frozen_of(compiled)[0].repacks == 1
    assert compiled._compiled.stats["captures"] == 1  # copied again, not compiled again


def test_a_write_no_version_counter_sees_is_not_seen_until_reset():
    # torch's freezing assumes weights never change; a write through .data (its own
    # version counter, as in torch) or through numpy is invisible to the copy: reset()
    model = mlp()
    compiled = learntorch.compile(model, options={"freezing": True})
    x = learntorch.randn(128, 20)
    with learntorch.no_grad():
        before = compiled(x).numpy().copy()
        model[0].weight.data.mul_(-2.0)
        np.testing.assert_array_equal(compiled(x).numpy(), before)  # the documented limit
        learntorch.compiler.reset()
        same_as_eager(compiled(x), model, x)


def test_with_grad_mode_on_nothing_is_frozen_and_gradients_are_eagers():
    model = mlp()
    compiled = learntorch.compile(model, options={"freezing": True})
    x = learntorch.randn(8, 20)
    out = compiled(x)
    assert "freezing" not in compiled._compiled.code and not frozen_of(compiled)
    out.sum().backward()
    got = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(got, model.parameters()):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_a_weight_passed_as_an_input_is_not_frozen():
    # only a parameter is held by the guards; an input may be another tensor on every call
    compiled = learntorch.compile(lambda x, w, b: F.relu(F.linear(x, w, b)),
                                  options={"freezing": True})
    x, w, b = learntorch.randn(32, 20), learntorch.randn(16, 20), learntorch.randn(16)
    with learntorch.no_grad():
        compiled(x, w, b)
        w2 = learntorch.randn(16, 20)
        np.testing.assert_array_equal(compiled(x, w2, b).numpy(), F.relu(F.linear(x, w2, b)).numpy())
    assert not frozen_of(compiled)


def test_tied_weights_share_one_copy():
    learntorch.manual_seed(0)
    first, second = learntorch.nn.Linear(8, 8), learntorch.nn.Linear(8, 8)
    second.weight = first.weight
    model = learntorch.nn.Sequential(first, learntorch.nn.Tanh(), second)
    compiled = learntorch.compile(model, options={"freezing": True})
    x = learntorch.randn(16, 8)
    with learntorch.no_grad():
        same_as_eager(compiled(x), model, x)
    assert len(frozen_of(compiled)) == 1
    assert compiled._compiled.code.count("frozen_") == 2


@pytest.mark.parametrize("dtype", [learntorch.float16, learntorch.bfloat16])
def test_a_low_precision_weight_is_left_to_the_engine(dtype):
    model = mlp(dtype)
    compiled = learntorch.compile(model, options={"freezing": True})
    x = learntorch.randn(16, 20, dtype=dtype)
    with learntorch.no_grad():
        np.testing.assert_array_equal(compiled(x).float().numpy(), model(x).float().numpy())
    assert not frozen_of(compiled) and "Linear.apply" in compiled._compiled.code


def test_the_eager_backend_and_a_learners_backend_freeze_nothing():
    class LearnersBackend(NumpyBackend):
        pass
    model, x = mlp(), learntorch.randn(16, 20)
    with learntorch.no_grad():
        compiled = learntorch.compile(model, backend="eager", options={"freezing": True})
        same_as_eager(compiled(x), model, x)
        assert not frozen_of(compiled)
        with backends.use(LearnersBackend()):
            compiled = learntorch.compile(model, options={"freezing": True})
            same_as_eager(compiled(x), model, x)
            assert not frozen_of(compiled)


def test_an_unknown_option_names_the_ones_there_are():
    with pytest.raises(RuntimeError, match="'fusion', 'freezing'"):
        learntorch.compile(mlp(), options={"freeze": True})
