"""Scratch arrays reused between calls (the Numba backend's convolution): same memory for
the same use, never leaking into results."""
import threading

import numpy as np

import learntorch
import learntorch.nn.functional as F
from learntorch.backends.numba_cpu import workspace


def test_the_same_name_shape_and_dtype_return_the_same_memory():
    a = workspace.scratch("test.a", (3, 4), np.float32)
    assert workspace.scratch("test.a", (3, 4), np.float32) is a
    assert workspace.scratch("test.b", (3, 4), np.float32) is not a
    assert workspace.scratch("test.a", (4, 3), np.float32) is not a
    assert workspace.scratch("test.a", (3, 4), np.float64) is not a


def test_each_thread_has_its_own_arrays():
    mine = workspace.scratch("test.thread", (2,), np.float32)
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(workspace.scratch("test.thread", (2,),
                                                                         np.float32)))
    t.start()
    t.join()
    assert theirs[0] is not mine


def test_kept_arrays_stay_under_the_byte_budget(monkeypatch):
    monkeypatch.setattr(workspace, "MAX_BYTES", 1000)
    first = workspace.scratch("test.budget", (100,), np.float32)    # 400 bytes
    workspace.scratch("test.budget2", (100,), np.float32)            # 800 in all: both kept
    assert workspace.scratch("test.budget", (100,), np.float32) is first
    workspace.scratch("test.budget3", (100,), np.float32)            # 1200: the oldest goes
    assert workspace.scratch("test.budget2", (100,), np.float32) is not None
    big = workspace.scratch("test.big", (1000,), np.float32)         # over budget: not kept
    assert workspace.scratch("test.big", (1000,), np.float32) is not big


def conv_and_grads(x, w, **kwargs):
    x = learntorch.tensor(x, requires_grad=True)
    w = learntorch.tensor(w, requires_grad=True)
    y = F.conv2d(x, w, **kwargs)
    y.backward(learntorch.ones(y.shape, dtype=y.dtype))
    return y.detach(), x.grad, w.grad


def test_results_are_not_overwritten_by_the_next_convolution_of_the_same_shapes():
    rng = np.random.default_rng(0)
    with learntorch.backends.use("numba"):
        for kwargs in (dict(padding=1), dict(padding=0)):  # padded and unpadded scratch paths
            a = [rng.standard_normal(s) for s in ((2, 3, 6, 6), (4, 3, 3, 3))]
            b = [rng.standard_normal(s) for s in ((2, 3, 6, 6), (4, 3, 3, 3))]
            first = conv_and_grads(*a, **kwargs)
            kept = [t.numpy().copy() for t in first]
            conv_and_grads(*b, **kwargs)
            for t, k in zip(first, kept):
                np.testing.assert_array_equal(t.numpy(), k)


def test_scratch_users_in_two_threads_at_once_give_the_single_thread_results():
    # array level: the autograd engine's grad mode is one global switch, so the threads
    # call the backend's convolution methods (which use scratch arrays), not Function.apply
    from learntorch.backends.geometry import Geometry
    backend = learntorch.backends.NumbaBackend()
    rng = np.random.default_rng(1)
    g = Geometry((16, 16), (3, 3), (1, 1), (1, 1), (1, 1), (16, 16))
    jobs = [(rng.standard_normal((4, 3, 16, 16)), rng.standard_normal((8, 3, 3, 3)),
             rng.standard_normal((4, 8, 16, 16))) for _ in range(2)]

    def work(x, w, grad):
        return (backend.conv2d(x, w, None, g, 1), backend.conv2d_backward_weight(grad, x, g, 1),
                backend.conv2d_backward_input(grad, w, g, 1))
    expected = [work(*job) for job in jobs]
    mismatches = []

    def run(k):
        for _ in range(30):
            for got, want in zip(work(*jobs[k]), expected[k]):
                if not np.array_equal(got, want):
                    mismatches.append(k)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []
