"""Elementwise throughput on float32 vectors of 1e6 and 1e7 elements.

These ops are bound by memory bandwidth (a + b reads 8 bytes and writes 4 per
element) or, for exp and tanh, by the math.  learntorch's overhead per call is
the same as in the autograd chain; at a million elements it should vanish.
"""
import numpy as np

import learntorch

from .suite import case, Contenders, elements_per_second, float32, torch_from_numpy, torch

SMALL, LARGE, TINY = 10**6, 10**7, 64


def _binary(n, op, np_op):
    a, b = float32(n, seed=1), float32(n, seed=2)
    la, lb = learntorch.from_numpy(a), learntorch.from_numpy(b)
    ta, tb = torch_from_numpy(a), torch_from_numpy(b)
    return Contenders(learntorch=lambda: op(la, lb), numpy=lambda: np_op(a, b),
                      torch=lambda: op(ta, tb), metric=elements_per_second(n))


def _unary(n, name, np_op):
    a = float32(n, seed=1)
    la, ta = learntorch.from_numpy(a), torch_from_numpy(a)
    return Contenders(learntorch=lambda: getattr(learntorch, name)(la),
                      numpy=lambda: np_op(a),
                      torch=lambda: getattr(torch, name)(ta),
                      metric=elements_per_second(n))


@case("a + b, 1e6", n=SMALL, tiny=dict(n=TINY))
@case("a + b, 1e7", n=LARGE, tiny=dict(n=TINY))
def add(n):
    return _binary(n, lambda x, y: x + y, np.add)


@case("a * b, 1e6", n=SMALL, tiny=dict(n=TINY))
@case("a * b, 1e7", n=LARGE, tiny=dict(n=TINY))
def mul(n):
    return _binary(n, lambda x, y: x * y, np.multiply)


@case("exp, 1e6", n=SMALL, tiny=dict(n=TINY))
@case("exp, 1e7", n=LARGE, tiny=dict(n=TINY))
def exp(n):
    return _unary(n, "exp", np.exp)


@case("tanh, 1e6", n=SMALL, tiny=dict(n=TINY))
def tanh(n):
    return _unary(n, "tanh", np.tanh)


@case("relu, 1e6", n=SMALL, tiny=dict(n=TINY))
def relu(n):
    return _unary(n, "relu", lambda a: np.maximum(a, 0))
