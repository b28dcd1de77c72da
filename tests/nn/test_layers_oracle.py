"""The layer oracle: run a learntorch layer and the torch layer with the same weights.

``compare_with_torch(lt_layer, torch_layer, x)`` copies torch's weights into the
learntorch layer through ``load_state_dict`` (so the state_dict keys must match
too), runs both on the same input ``x`` (a numpy array, possibly a strided
view), and compares the output, its dtype, and the gradients of the input and
of every parameter, name by name.  The tests below check that the oracle
itself can fail.
"""
import numpy as np
import pytest

import learntorch
from oracle import as_numpy, assert_close, lt_tensor, require_torch, torch_tensor


def copy_from_torch(lt_layer, torch_layer):
    """Load torch_layer's parameters and buffers into lt_layer (keys must be the same)."""
    lt_layer.load_state_dict({k: learntorch.tensor(v.detach().numpy())
                              for k, v in torch_layer.state_dict().items()})


def compare_with_torch(lt_layer, torch_layer, x, rtol=1e-5, atol=1e-6, copy=True, grad=True,
                       seed=0):
    """Forward and backward of both layers on ``x``; returns (learntorch out, torch out)."""
    torch = require_torch()
    if copy:
        copy_from_torch(lt_layer, torch_layer)
    floating = np.issubdtype(x.dtype, np.floating) and grad
    a, b = lt_tensor(x, floating), torch_tensor(x, floating)
    out, expected = lt_layer(a), torch_layer(b)
    assert_close(out, expected, rtol, atol, "forward")
    assert out.dtype.name == str(expected.dtype).replace("torch.", "")
    if not grad:
        return out, expected
    g = np.random.default_rng(seed).standard_normal(tuple(expected.shape))
    g = g.astype(as_numpy(expected).dtype)
    out.backward(learntorch.from_numpy(g.copy()))
    expected.backward(torch.from_numpy(g.copy()))
    if floating:
        assert_close(a.grad, b.grad, rtol, atol, "grad of the input")
    lt_params = dict(lt_layer.named_parameters())
    th_params = dict(torch_layer.named_parameters())
    assert list(lt_params) == list(th_params)
    for name, p in th_params.items():
        assert_close(lt_params[name].grad, p.grad, rtol, atol, f"grad of {name}")
    return out, expected


def strided(x, kind):
    """``x``'s values in a non-contiguous layout: 'transposed' or 'strided' (every other)."""
    if kind == "transposed":
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    if kind == "strided":
        base = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), dtype=x.dtype)
        base[..., ::2] = x
        return base[..., ::2]
    return x


# ---------------------------------------------------------------- the oracle can fail
def test_strided_views_hold_the_same_values_in_another_layout():
    x = np.arange(12.0).reshape(3, 4)
    for kind in ("transposed", "strided"):
        v = strided(x, kind)
        assert not v.flags["C_CONTIGUOUS"] and np.array_equal(v, x)


def test_oracle_reports_a_changed_weight():
    torch = require_torch()
    t = torch.nn.Linear(3, 2)
    lt = learntorch.nn.Linear(3, 2)
    copy_from_torch(lt, t)
    with learntorch.no_grad():
        lt.weight[0, 0] += 1e-3
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(AssertionError, match="forward"):
        compare_with_torch(lt, t, x, copy=False)


def test_oracle_reports_a_wrong_parameter_gradient():
    torch = require_torch()

    F = learntorch.nn.functional

    class Doubled(learntorch.nn.Linear):
        # adds x W^T - x (W detached): zero in value, but a second weight gradient
        def forward(self, x):
            return super().forward(x) + (F.linear(x, self.weight) -
                                         F.linear(x, self.weight.detach()))

    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(AssertionError, match="grad of weight"):
        compare_with_torch(Doubled(3, 2), torch.nn.Linear(3, 2), x)
