"""Autograd per-op cost: a chain of 1,000 ops on 1-element tensors.

On one element the arithmetic is free, so the time is pure bookkeeping: create
the output tensor, record a graph node, and on ``backward()`` visit the node
and run its derivative rule.  The figure is µs per op, forward + backward.
No numpy column: numpy has no autograd to compare with.
"""
import learntorch

from .suite import case, Contenders, microseconds_per_op, as_fast_as, torch


def _mul_add(y):                       # 2 ops
    return y * 1.0001 + 0.0001


def _mul_add_tanh_sub(y):              # 4 ops; the gradient shrinks ~0.8x a cycle, stays normal
    return (y * 1.2 + 0.01).tanh() - 0.01


def _chain(lib, step, ops_per_step, n_ops, backward):
    x = lib.tensor([0.5], requires_grad=True)

    def run():
        x.grad = None
        y = x
        for _ in range(n_ops // ops_per_step):
            y = step(y)
        if backward:
            y.backward()
    return run


def _leaf_chain(lib, n_ops):
    """y = y * w + b with w and b leaves that require grad: every op's gradient flows into
    the same two leaves, which accumulate 500 contributions each (a notebook's parameters)."""
    x = lib.tensor([0.5])
    w = lib.tensor([1.0001], requires_grad=True)
    b = lib.tensor([0.0001], requires_grad=True)

    def run():
        w.grad = b.grad = None
        y = x
        for _ in range(n_ops // 2):
            y = y * w + b
        y.backward()
    return run


def _no_grad_chain(lib, n_ops):
    """The y*a+b chain under no_grad (an evaluation loop): no graph, only the forward."""
    x = lib.tensor([0.5], requires_grad=True)

    def run():
        with lib.no_grad():
            y = x
            for _ in range(n_ops // 2):
                y = y * 1.0001 + 0.0001
    return run


def _contenders(step, ops_per_step, n_ops, backward):
    return Contenders(
        learntorch=_chain(learntorch, step, ops_per_step, n_ops, backward),
        torch=_chain(torch, step, ops_per_step, n_ops, backward) if torch else None,
        metric=microseconds_per_op(n_ops))


@case("1,000-op chain y*a+b, forward+backward", n_ops=1000, tiny=dict(n_ops=4),
      target=as_fast_as("torch", "autograd per-op cost (fwd+bwd) ≤ PyTorch's (~5.6 µs/op)"))
def chain_mul_add(n_ops):
    return _contenders(_mul_add, 2, n_ops, backward=True)


@case("1,000-op chain y*a+b, forward only (graph recorded)", n_ops=1000, tiny=dict(n_ops=4))
def chain_mul_add_forward(n_ops):
    return _contenders(_mul_add, 2, n_ops, backward=False)


@case("1,000-op chain mul/add/tanh/sub, forward+backward", n_ops=1000, tiny=dict(n_ops=4))
def chain_mixed(n_ops):
    return _contenders(_mul_add_tanh_sub, 4, n_ops, backward=True)


@case("1,000-op chain y*w+b, leaves w and b accumulate, forward+backward", n_ops=1000,
      tiny=dict(n_ops=4))
def chain_leaves_accumulate(n_ops):
    return Contenders(learntorch=_leaf_chain(learntorch, n_ops),
                      torch=_leaf_chain(torch, n_ops) if torch else None,
                      metric=microseconds_per_op(n_ops))


@case("1,000-op chain y*a+b under no_grad, forward only", n_ops=1000, tiny=dict(n_ops=4))
def chain_no_grad(n_ops):
    return Contenders(learntorch=_no_grad_chain(learntorch, n_ops),
                      torch=_no_grad_chain(torch, n_ops) if torch else None,
                      metric=microseconds_per_op(n_ops))
