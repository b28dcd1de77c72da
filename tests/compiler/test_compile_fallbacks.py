"""What cannot be replayed runs eagerly, with a warning saying why; the debugging
backends give the numba backend's results; bad arguments raise torch's errors."""
import warnings

import pytest

import learntorch
from compile_compare import same_bits
from oracle import require_torch


def test_dropout_in_training_runs_eagerly_with_a_warning_and_eagers_numbers():
    drop = learntorch.nn.Dropout(0.5)
    x = learntorch.ones(64)
    learntorch.manual_seed(5)
    expected = drop(x)
    learntorch.manual_seed(5)
    with pytest.warns(UserWarning, match="random numbers"):
        got = learntorch.compile(drop)(x)
    same_bits(got, expected)


def test_dropout_in_training_is_an_error_under_fullgraph():
    with pytest.raises(RuntimeError, match="random numbers"):
        learntorch.compile(learntorch.nn.Dropout(0.5), fullgraph=True)(learntorch.ones(4))


@pytest.mark.parametrize("backend", ["eager", "reference", "inductor"])
def test_every_backend_gives_the_numba_backends_bits(backend):
    program = lambda x, y: (x * y + 1.5) / (y * y + 1)  # noqa: E731
    x, y = learntorch.randn(5, 7), learntorch.randn(7)
    expected = learntorch.compile(program)(x, y)
    compiled = learntorch.compile(program, backend=backend)
    same_bits(compiled(x, y), expected)
    assert bool(compiled.kernels) == (backend != "eager")


def test_a_learners_backend_sees_every_op_unfused():
    from learntorch.backends.reference import NumpyBackend
    called = []

    class Spy(NumpyBackend):  # a learner's backend: each op must reach it
        def exp(self, x):
            called.append("exp")
            return super().exp(x)
    program = lambda x: (x * 2).exp() + 1  # noqa: E731
    with learntorch.backends.use(Spy()):
        compiled = learntorch.compile(program)
        x = learntorch.randn(4)
        same_bits(compiled(x), program(x))
        assert compiled.kernels == []
        assert called == ["exp"] * 3  # the capture, the replay, the eager call


def test_a_callable_backend_gets_the_graph():
    seen = []

    def backend(graph, example_inputs):
        seen.append([n.op_name for n in graph.nodes if n.op == "call_function"])
        return graph
    x = learntorch.randn(3)
    out = learntorch.compile(lambda x: x.sin() * 2, backend=backend)(x)
    same_bits(out, x.sin() * 2)
    assert seen == [["Sin", "Mul"]], seen


@pytest.mark.parametrize("arguments", [dict(backend="nope"), dict(mode="fastest")])
def test_bad_arguments_raise_torchs_error_type(arguments):
    torch = require_torch()
    with pytest.raises(RuntimeError):
        torch.compile(lambda x: x + 1, **arguments)(torch.ones(2))
    with pytest.raises(RuntimeError) as error:
        learntorch.compile(lambda x: x + 1, **arguments)(learntorch.ones(2))
    assert list(arguments.values())[0] in str(error.value)


def test_disable_returns_the_function_itself():
    f = lambda x: x  # noqa: E731
    assert learntorch.compile(f, disable=True) is f


def test_is_compiling_is_true_only_during_the_capture():
    seen = []

    def f(x):
        seen.append(learntorch.compiler.is_compiling())
        return x + 1
    compiled = learntorch.compile(f)
    compiled(learntorch.ones(2))
    compiled(learntorch.ones(2))
    assert seen == [True] and not learntorch.compiler.is_compiling()


def test_no_warning_for_a_plain_chain():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        learntorch.compile(lambda x: x.relu() * 3)(learntorch.randn(5))
