"""Under no_grad a compiled layer's bias add and activation are one kernel called directly
(no autograd node), written over the matmul's result when nothing else reads it, and a
long kernel runs on every thread: none of these changes a value.  Inputs, parameters and
a matmul result that anything else reads are never written; with grad mode on, kernels
stay autograd nodes and write new arrays.
"""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from compile_compare import same_as_eager_with_gelu, same_bits
from learntorch.backends.numba_cpu import tuning


# 128 rows: every layer's output has >= 1,000 elements, the Numba backend's minimum size, so
# eager's gelu is the kernel whose formula the compiled kernels share (below it, eager
# computes gelu with numpy in float64, a few units apart: docs/compile.md)
ROWS = 128


def mlp(activation):
    learntorch.manual_seed(0)
    act = learntorch.nn.ReLU if activation == "relu" else learntorch.nn.GELU
    return learntorch.nn.Sequential(learntorch.nn.Linear(20, 16), act(), learntorch.nn.Linear(16, 8),
                                    act(), learntorch.nn.Linear(8, 3)).eval()


@pytest.fixture
def parallel_from(monkeypatch):
    """Set the tuning table's ``parallel_min_ns`` for one test (the other keys as loaded)."""
    def set_threshold(ns):
        table = dict(tuning.load())
        table["parallel_min_ns"] = ns
        monkeypatch.setattr(tuning, "_loaded", table)
    return set_threshold


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_a_no_grad_mlp_calls_each_epilogue_kernel_directly_and_equals_eager(activation):
    model = mlp(activation)
    x = learntorch.randn(ROWS, 20)
    x_before = x.numpy().copy()
    weights_before = [p.detach().numpy().copy() for p in model.parameters()]
    compiled = learntorch.compile(model)
    with learntorch.no_grad():
        for _ in range(2):  # the capture's call, then a replay
            got = compiled(x)
            same_as_eager_with_gelu(got, model(x), f"{activation} MLP under no_grad")
    code = compiled._compiled.code
    assert "kernel_0(linear_mm, " in code and "kernel_1(linear_1_mm, " in code, code
    assert "FusedKernel.apply" not in code and "out=" not in code, code
    kernels = compiled._compiled.kernels
    assert [k.donated for k in kernels] == [0, 0]  # each layer's matmul result, in place
    assert "in place, over linear_mm" in kernels[0].text and "out0" not in kernels[0].text
    np.testing.assert_array_equal(x.numpy(), x_before)
    for p, before in zip(model.parameters(), weights_before):
        np.testing.assert_array_equal(p.detach().numpy(), before)


def test_a_matmul_result_read_elsewhere_keeps_its_values():
    def layer(x, w, b):
        h = x @ w
        return F.relu(h + b) * 2.0, h

    x, w, b = learntorch.randn(8, 5), learntorch.randn(5, 6), learntorch.randn(6)
    compiled = learntorch.compile(layer)
    with learntorch.no_grad():
        for _ in range(2):
            (y, h), (y_eager, h_eager) = compiled(x, w, b), layer(x, w, b)
            same_bits(y, y_eager, "relu(h + b) * 2")
            same_bits(h, h_eager, "h, returned too")
    assert "out=" not in compiled.code, compiled.code
    assert [k.donated for k in compiled.kernels] == [None]


def _layers_reading_h_twice(x, w, b, w2):
    h = x @ w
    return F.relu(h + b), h @ w2          # h is read by the kernel and by a matmul


def _relu_of_an_input(x, w, b, w2):
    return F.relu(x + b[:5]) @ w          # x is the caller's: never written


def _a_wider_result(x, w, b, w2):
    return F.relu(x @ w + b.double())     # float32 h, float64 result: its own array


def _a_bool_result(x, w, b, w2):
    return (x @ w + b) > 0


def _h_read_twice_in_one_kernel(x, w, b, w2):
    h = x @ w
    return F.relu(h + b) * h              # both reads happen before the write, per element


@pytest.mark.parametrize("fn,donated", [(_layers_reading_h_twice, None),
                                        (_relu_of_an_input, None), (_a_wider_result, None),
                                        (_a_bool_result, None), (_h_read_twice_in_one_kernel, 0)])
def test_only_a_matmul_result_nothing_else_reads_is_written_over(fn, donated):
    x, w, b, w2 = (learntorch.randn(8, 5), learntorch.randn(5, 6), learntorch.randn(6),
                   learntorch.randn(6, 3))
    before = [t.numpy().copy() for t in (x, w, b, w2)]
    compiled = learntorch.compile(fn)
    with learntorch.no_grad():
        for _ in range(2):
            got, expected = compiled(x, w, b, w2), fn(x, w, b, w2)
            for g, e in zip(got if isinstance(got, tuple) else (got,),
                            expected if isinstance(expected, tuple) else (expected,)):
                same_bits(g, e, fn.__name__)
    assert [k.donated for k in compiled.kernels] == [donated], compiled.code
    for t, b_ in zip((x, w, b, w2), before):
        np.testing.assert_array_equal(t.numpy(), b_)


def test_with_grad_mode_on_the_kernels_stay_autograd_nodes():
    model = mlp("gelu")
    for p in model.parameters():
        p.requires_grad_(False)
    x = learntorch.randn(ROWS, 20, requires_grad=True)
    compiled = learntorch.compile(model)
    compiled(x).sum().backward()
    got = x.grad.clone()
    x.grad = None
    model(x).sum().backward()
    same_as_eager_with_gelu(got, x.grad, "the input's gradient")
    code = compiled._compiled.code
    assert "FusedKernel.apply" in code and "out=" not in code, code
    assert all(k.donated is None for k in compiled._compiled.kernels)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_kernels_run_on_every_thread_from_the_tuning_tables_threshold(activation, parallel_from):
    model = mlp(activation)
    x = learntorch.randn(ROWS, 20)
    parallel_from(0)  # every kernel is long enough to share
    compiled = learntorch.compile(model)
    with learntorch.no_grad():
        for _ in range(2):
            same_as_eager_with_gelu(compiled(x), model(x), f"{activation} MLP, parallel kernels")
    kernels = compiled._compiled.kernels
    assert kernels and all("prange(n0)" in k.text and "parallel=True" in k.text for k in kernels)

    parallel_from(10 ** 15)  # no kernel is
    learntorch.compiler.reset()
    serial = learntorch.compile(model)
    with learntorch.no_grad():
        serial(x)
    assert all("prange" not in k.text.split("def ")[-1] for k in serial._compiled.kernels)


def test_a_kernel_reducing_its_outer_loop_stays_serial(parallel_from):
    """Threads would each add a part of the sum: another order than the serial kernel's."""
    def mse(y, t):
        return ((y - t) ** 2).mean()

    parallel_from(0)
    y, t = learntorch.randn(1000), learntorch.randn(1000)
    compiled = learntorch.compile(mse)
    same_bits(compiled(y, t), compiled(y, t), "the same sum twice")
    (kernel,) = compiled.kernels
    assert "prange" not in kernel.text.split("def ")[-1], kernel.text
