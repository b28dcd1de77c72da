"""When the Numba backend runs a kernel, and when it leaves the work to numpy.

The rule (``numba_cpu/backend.py``): a kernel runs only for a float32/float64
array of at least ``min_sizes[op]`` elements, with operands of one dtype and
shape, laid out C-contiguously (or copied, for ops where that still pays).
Everything else goes to the numpy reference, with the same result.
"""
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

from learntorch.backends.numba_cpu import NumbaBackend
from learntorch.backends.reference import NumpyBackend

from test_backend_kernels import kernel_calls

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

REFERENCE = NumpyBackend()
DEFAULT = NumbaBackend()

# how each primitive is called on (x, g); the kernel it should run
CALLS = {
    "relu": (lambda b, x, g: b.relu(x), "activations.relu"),
    "relu_backward": (lambda b, x, g: b.relu_backward(x, g), "activations.relu_backward"),
    "tanh": (lambda b, x, g: b.tanh(x), "activations.tanh"),
    "tanh_backward": (lambda b, x, g: b.tanh_backward(x, g), "activations.tanh_backward"),
    "sigmoid": (lambda b, x, g: b.sigmoid(x), "activations.sigmoid"),
    "sigmoid_backward": (lambda b, x, g: b.sigmoid_backward(x, g),
                         "activations.sigmoid_backward"),
    "gelu": (lambda b, x, g: b.gelu(x), "activations.gelu"),
    "gelu_backward": (lambda b, x, g: b.gelu_backward(x, g), "activations.gelu_backward"),
    "silu": (lambda b, x, g: b.silu(x), "activations.silu"),
    "silu_backward": (lambda b, x, g: b.silu_backward(x, g), "activations.silu_backward"),
    "add": (lambda b, x, g: b.add(x, g), "arithmetic.add"),
    "sub": (lambda b, x, g: b.sub(x, g), "arithmetic.sub"),
    "mul": (lambda b, x, g: b.mul(x, g), "arithmetic.mul"),
    "div": (lambda b, x, g: b.div(x, g), "arithmetic.div"),
    "sum": (lambda b, x, g: b.sum(x, (0,), False), "reduction.sum_rows"),
    "softmax": (lambda b, x, g: b.softmax(x, 0), "softmax.softmax_rows"),
    "log_softmax": (lambda b, x, g: b.log_softmax(x, 0), "softmax.log_softmax_rows"),
    "softmax_backward": (lambda b, x, g: b.softmax_backward(x, g, 0),
                         "softmax.softmax_backward_rows"),
    "log_softmax_backward": (lambda b, x, g: b.log_softmax_backward(x, g, 0),
                             "softmax.log_softmax_backward_rows"),
    "logsumexp": (lambda b, x, g: b.logsumexp(x, (0,), False), "softmax.logsumexp_rows"),
    # (the bfloat16 side made and read with ``astype``, which is no kernel)
    "to_bfloat16": (lambda b, x, g: b.cast(x.astype(np.float32), BFLOAT16).astype(np.float32),
                    "bfloat16_casts.float32_to_bfloat16"),
    "from_bfloat16": (lambda b, x, g: b.cast(x.astype(BFLOAT16), np.dtype(np.float32)),
                      "bfloat16_casts.bfloat16_to_float32"),
}
ENABLED = sorted(op for op, size in NumbaBackend.min_sizes.items() if size is not None)
DISABLED = sorted(op for op, size in NumbaBackend.min_sizes.items() if size is None)


def vectors(n, dtype=np.float32):
    rng = np.random.default_rng(n)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)


def test_calls_table_covers_every_kernel():
    assert set(CALLS) == set(NumbaBackend.min_sizes)


@pytest.mark.parametrize("op", ENABLED)
def test_kernel_runs_from_its_threshold_on_and_numpy_below_it(op):
    call, kernel = CALLS[op]
    limit = DEFAULT.min_sizes[op]
    x, g = vectors(limit - 1)
    with kernel_calls() as calls:
        call(DEFAULT, x, g)
    assert calls == [], f"{op} on {limit - 1} elements must stay with numpy"
    x, g = vectors(limit)
    with kernel_calls() as calls:
        out = call(DEFAULT, x, g)
    assert calls == [kernel], f"{op} on {limit} elements must use its kernel"
    np.testing.assert_allclose(out, call(REFERENCE, x, g), rtol=2e-5, atol=2e-5 * np.sqrt(limit))


@pytest.mark.parametrize("op", DISABLED)
def test_kernels_that_lost_to_numpy_are_off_by_default_even_for_large_arrays(op):
    call, _ = CALLS[op]
    x, g = vectors(300_000)
    with kernel_calls() as calls:
        call(DEFAULT, x, g)
    assert calls == []


def test_thresholds_keep_small_tensors_off_the_kernels():
    """Nothing below 1000 elements may pay for Numba (import, compile, thread start)."""
    assert all(size is None or size >= 1000 for size in NumbaBackend.min_sizes.values())


# ---------------------------------------------------------------- what always goes to numpy
FORCED = NumbaBackend(min_size=0)


@pytest.mark.parametrize("dtype", [np.float16, np.int64, np.int32, np.bool_])
def test_dtypes_without_a_kernel_go_to_numpy_with_the_reference_result(dtype):
    x = np.arange(-6, 6).reshape(3, 4).astype(dtype)
    with kernel_calls() as calls:
        assert FORCED.relu(x).dtype == REFERENCE.relu(x).dtype
        np.testing.assert_array_equal(FORCED.relu(x), REFERENCE.relu(x))
        np.testing.assert_array_equal(FORCED.add(x, x), REFERENCE.add(x, x))
        np.testing.assert_array_equal(FORCED.sum(x, (1,), False), REFERENCE.sum(x, (1,), False))
    assert calls == []


@pytest.mark.parametrize("a, b", [
    (np.ones((3, 4), np.float32), np.ones(4, np.float32)),           # broadcasting
    (np.ones((3, 4), np.float32), 2.5),                               # a Python number
    (2.5, np.ones((3, 4), np.float32)),
    (np.ones((3, 4), np.float32), np.ones((3, 4), np.float64)),       # two dtypes
    (np.ones((3, 4), np.float32), np.ones((3, 4), np.float32)[:, ::-1]),  # strided
], ids=["broadcast", "number-right", "number-left", "mixed-dtypes", "strided"])
def test_operands_a_kernel_cannot_take_go_to_numpy(a, b):
    for op in ("add", "sub", "mul", "div"):
        with kernel_calls() as calls:
            out = getattr(FORCED, op)(a, b)
        assert calls == [], op
        np.testing.assert_array_equal(out, getattr(REFERENCE, op)(a, b))


def test_strided_input_is_copied_only_where_the_copy_pays_off():
    x = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32).T  # transposed
    for op in ("relu", "tanh_backward", "sigmoid", "gelu"):
        call, kernel = CALLS[op]
        with kernel_calls() as calls:
            out = call(FORCED, x, x)
        assert calls == ([kernel] if op in FORCED.copy_pays_off else []), op
        np.testing.assert_allclose(out, call(REFERENCE, x, x), rtol=2e-5, atol=1e-6)


def test_softmax_along_a_leading_dim_stays_with_numpy_unless_the_copy_pays_off():
    x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    with kernel_calls() as calls:
        np.testing.assert_allclose(FORCED.softmax(x, 0), REFERENCE.softmax(x, 0), rtol=2e-5)
        np.testing.assert_allclose(FORCED.softmax(x, 1), REFERENCE.softmax(x, 1), rtol=2e-5)
    assert calls == ["softmax.softmax_rows"]  # only dim=1, the contiguous rows


def test_sum_over_leading_dims_stays_with_numpy():
    x = np.random.default_rng(0).standard_normal((5, 7, 3)).astype(np.float32)
    for dims, uses_kernel in [((0,), False), ((1,), False), ((0, 2), False), ((2,), True),
                              ((1, 2), True), ((0, 1, 2), True)]:
        with kernel_calls() as calls:
            out = FORCED.sum(x, dims, True)
        assert calls == (["reduction.sum_rows"] if uses_kernel else []), dims
        np.testing.assert_allclose(out, REFERENCE.sum(x, dims, True), rtol=2e-5, atol=1e-5)


def test_read_only_and_empty_arrays_are_handled():
    ro = np.linspace(-2, 2, 12, dtype=np.float32)
    ro.setflags(write=False)
    with kernel_calls() as calls:
        np.testing.assert_array_equal(FORCED.relu(ro), REFERENCE.relu(ro))
        np.testing.assert_allclose(FORCED.gelu(ro), REFERENCE.gelu(ro), rtol=1e-6)
        empty = np.ones((0, 3), np.float32)
        assert FORCED.relu(empty).shape == (0, 3)
        assert FORCED.softmax(empty, 1).shape == (0, 3)
        np.testing.assert_array_equal(FORCED.sum(empty, (1,), False), np.zeros(0, np.float32))
    # read-only relu stays with numpy (no copy for a cheap op); gelu copies and runs
    assert calls == ["activations.gelu"]


def test_kernels_never_modify_their_inputs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(99)
    g = rng.standard_normal(99)
    x0, g0 = x.copy(), g.copy()
    with kernel_calls() as calls:
        for op, (call, _) in CALLS.items():
            call(FORCED, x, g)
    assert len(calls) == len(CALLS)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(g, g0)


def test_zero_dim_arrays_come_back_as_zero_dim_arrays():
    x = np.asarray(-1.5, np.float32)
    for op in ("relu", "sigmoid", "gelu", "silu", "tanh"):
        out = getattr(FORCED, op)(x)
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32, op
        ref = getattr(REFERENCE, op)(x)
        assert isinstance(ref, np.ndarray) and ref.shape == (), op
        np.testing.assert_allclose(out, ref, rtol=1e-6)


# ---------------------------------------------------------------- processes
def run_python(code, _replace_env=None, **env):
    """Run ``code`` in a fresh interpreter (environment: ours, or ``_replace_env``, plus ``env``)."""
    base = os.environ if _replace_env is None else _replace_env
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, env={**base, **env})
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_import_and_small_ops_never_import_numba():
    out = run_python("""
        import sys
        import learntorch
        x = learntorch.randn(10, requires_grad=True)
        (x.tanh().softmax(0) * 2).sum().backward()
        y = learntorch.randn(30, 30, requires_grad=True)
        (learntorch.gelu(y).sigmoid().relu() @ y).logsumexp(1).sum().backward()
        assert learntorch.backends.get_backend().name == "numba"
        assert "numba" not in sys.modules, "numba was imported by small ops"
        print("ok")
    """)
    assert out.strip() == "ok"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork exists on POSIX only")
def test_a_process_forked_after_kernels_ran_falls_back_to_numpy_and_survives():
    # GNU OpenMP kills a child that uses the thread pool its parent started; the
    # backend must notice the fork and give the child numpy's (identical) results.
    out = run_python("""
        import os
        import numpy as np
        from learntorch.backends.numba_cpu import NumbaBackend
        from learntorch.backends.reference import NumpyBackend
        b = NumbaBackend(min_size=0)
        x = np.linspace(-3, 3, 50_000, dtype=np.float32)
        parent = b.gelu(x)
        pid = os.fork()
        if pid == 0:
            child = b.gelu(x)
            ok = np.allclose(child, parent, rtol=1e-6) and np.allclose(child, NumpyBackend().gelu(x))
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
    """)
    assert out.strip() == "child exit 0"
