"""Reductions: sum over one dim of a float32 matrix, and softmax over the last dim.

Summing over dim 0 walks down columns (strided), over dim 1 along rows
(contiguous): a kernel that is fast one way can be slow the other.  Softmax
is a max, an exp, a sum and a divide per row; forward+backward adds the
gradient rule ``dx = y * (g - sum(g * y))``.  numpy's column is the same
formula written by hand.
"""
import numpy as np

import learntorch

from .suite import (case, Contenders, elements_per_second, float32, torch_from_numpy, torch,
                    as_fast_as)


@case("sum dim 0, 1024×1024", rows=1024, cols=1024, dim=0, tiny=dict(rows=8, cols=4, dim=0))
@case("sum dim 1, 1024×1024", rows=1024, cols=1024, dim=1, tiny=dict(rows=8, cols=4, dim=1))
@case("sum dim 0, 4096×1024", rows=4096, cols=1024, dim=0, tiny=dict(rows=8, cols=4, dim=0))
@case("sum dim 1, 4096×1024", rows=4096, cols=1024, dim=1, tiny=dict(rows=8, cols=4, dim=1))
def sum_dim(rows, cols, dim):
    a = float32(rows, cols)
    la, ta = learntorch.from_numpy(a), torch_from_numpy(a)
    return Contenders(learntorch=lambda: la.sum(dim), numpy=lambda: a.sum(axis=dim),
                      torch=lambda: ta.sum(dim), metric=elements_per_second(a.size))


def _np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@case("softmax 1024×1024, forward", n=1024, tiny=dict(n=8),
      target=as_fast_as("torch", "softmax 1024×1024 throughput ≥ PyTorch's"))
def softmax_forward(n):
    a = float32(n, n)
    la, ta = learntorch.from_numpy(a), torch_from_numpy(a)
    return Contenders(learntorch=lambda: learntorch.softmax(la, dim=-1),
                      numpy=lambda: _np_softmax(a),
                      torch=lambda: torch.softmax(ta, dim=-1),
                      metric=elements_per_second(a.size))


def _np_softmax_forward_backward(x, g):
    y = _np_softmax(x)
    return y * (g - (g * y).sum(axis=-1, keepdims=True))


def _forward_backward(lib, a, g):
    x = lib.from_numpy(a.copy()).requires_grad_()
    grad = lib.from_numpy(g)

    def run():
        x.grad = None
        lib.softmax(x, dim=-1).backward(grad)
    return run


@case("softmax 1024×1024, forward+backward", n=1024, tiny=dict(n=8))
def softmax_forward_backward(n):
    a, g = float32(n, n, seed=1), float32(n, n, seed=2)
    return Contenders(learntorch=_forward_backward(learntorch, a, g),
                      numpy=lambda: _np_softmax_forward_backward(a, g),
                      torch=_forward_backward(torch, a, g) if torch else None,
                      metric=elements_per_second(a.size))
