"""The second-derivative oracle of the layer tests: a gradient penalty, as torch computes it.

    L       = sum(out * out * g)             (g fixed and random: every output weighs in)
    grads   = dL/d(inputs)                   (create_graph=True)
    penalty = sum over inputs of sum(grad * grad * h)
    result  = d(penalty)/d(inputs)

run by learntorch and by torch on the same float64 arrays; every second-order path of
the layer's backward (through each input, and through the gradient itself) shows up.
"""
import numpy as np

import learntorch
from oracle import as_numpy, require_torch


def _penalty_gradients(lib, fn, arrays, seed):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    rng = np.random.default_rng(seed)
    g = lib.tensor(rng.standard_normal(tuple(out.shape)))
    grads = lib.autograd.grad((out * out * g).sum(), xs, create_graph=True)
    penalty = sum((gr * gr * lib.tensor(rng.standard_normal(tuple(gr.shape)))).sum()
                  for gr in grads)
    return [None if t is None else as_numpy(t)
            for t in lib.autograd.grad(penalty, xs, allow_unused=True)]


def check_second_order_against_torch(lt_fn, torch_fn, *arrays, rtol=1e-9, atol=1e-9, seed=0):
    """The penalty's gradients (above) of learntorch and torch agree, input by input."""
    torch = require_torch()
    ours = _penalty_gradients(learntorch, lt_fn, arrays, seed)
    theirs = _penalty_gradients(torch, torch_fn, arrays, seed)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if b is None:
            assert a is None or not np.any(a), f"input {i}: torch has no second derivative"
            continue
        assert a is not None, f"input {i}: no second derivative, torch has one"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"input {i}")
