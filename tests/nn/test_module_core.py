"""nn.Module registration, traversal, state_dict, modes and hooks, compared with torch.

Each test builds the same small model in learntorch and in torch (with a
tiny "Affine" layer written identically against both APIs) and compares what
the two report.
"""
import numpy as np
import pytest

import learntorch
from oracle import require_torch


def affine_class(lib):
    """The same minimal layer for either library: y = x @ W + b."""

    class Affine(lib.nn.Module):
        def __init__(self, n_in, n_out, bias=True):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(n_in, n_out) * 0.5)
            self.bias = lib.nn.Parameter(lib.zeros(n_out)) if bias else None
            self.register_buffer("calls", lib.zeros(1))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)

        def forward(self, x):
            y = x @ self.weight
            return y + self.bias if self.bias is not None else y

    return Affine


def model(lib):
    Affine = affine_class(lib)

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Affine(3, 4)
            self.blocks = lib.nn.ModuleList([Affine(4, 4, bias=False), Affine(4, 4)])
            self.head = lib.nn.Sequential(Affine(4, 2), lib.nn.ModuleDict({"out": Affine(2, 1)}))
            self.scale = lib.nn.Parameter(lib.ones(1))

        def forward(self, x):
            x = self.first(x)
            for b in self.blocks:
                x = b(x).tanh()
            return self.head[1]["out"](self.head[0](x)) * self.scale

    return Net()


def test_named_parameters_buffers_modules_match_torch_order_and_names():
    torch = require_torch()
    a, b = model(learntorch), model(torch)
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in b.named_buffers()]
    assert [n for n, _ in a.named_modules()] == [n for n, _ in b.named_modules()]
    assert [n for n, _ in a.named_children()] == [n for n, _ in b.named_children()]
    assert list(a.state_dict().keys()) == list(b.state_dict().keys())
    assert [tuple(p.shape) for p in a.parameters()] == [tuple(p.shape) for p in b.parameters()]


def test_shared_parameter_is_listed_once_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        Affine = affine_class(lib)
        shared = Affine(2, 2)
        seq = lib.nn.Sequential(shared, shared)
        assert len(list(seq.parameters())) == 2
        assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
        assert list(seq.state_dict().keys()) == ["0.weight", "0.bias", "0.calls",
                                                 "1.weight", "1.bias", "1.calls"]


def test_forward_and_gradients_equal_torch_with_copied_weights():
    torch = require_torch()
    a, b = model(learntorch), model(torch)
    with torch.no_grad():
        for (_, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
            values = np.random.default_rng(len(pa.shape)).standard_normal(tuple(pa.shape))
            pa.data.copy_(learntorch.tensor(values.astype(np.float32)))
            pb.copy_(torch.tensor(values.astype(np.float32)))
    x = np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32)
    ya, yb = a(learntorch.tensor(x)), b(torch.tensor(x))
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-6)
    ya.sum().backward()
    yb.sum().backward()
    for (na, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_allclose(pa.grad.numpy(), pb.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=na)


def test_state_dict_round_trip_and_detached_values():
    a, b = model(learntorch), model(learntorch)
    for p in a.parameters():
        with learntorch.no_grad():
            p.add_(learntorch.randn(tuple(p.shape)))
    sd = a.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n, pa), (_, pb) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(pa.numpy(), pb.numpy(), err_msg=n)
    # loading copies values; it does not alias the source tensors
    first = next(iter(sd.values()))
    with learntorch.no_grad():
        first.add_(1)
    assert not np.array_equal(first.numpy(), b.state_dict()["first.weight"].numpy())


def test_load_state_dict_errors_name_missing_unexpected_and_mismatched_keys():
    torch = require_torch()
    for lib in (learntorch, torch):
        net = model(lib)
        sd = net.state_dict()
        del sd["first.bias"]
        sd["extra.weight"] = lib.zeros(1)
        sd["scale"] = lib.zeros(3)
        with pytest.raises(RuntimeError) as info:
            net.load_state_dict(sd)
        msg = str(info.value)
        assert 'Missing key(s) in state_dict: "first.bias"' in msg
        assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
        assert "size mismatch for scale" in msg
        del sd["scale"]
        result = net.load_state_dict(sd, strict=False)
        assert result.missing_keys == ["scale", "first.bias"]
        assert result.unexpected_keys == ["extra.weight"]


def test_train_eval_propagate_and_zero_grad_sets_none():
    net = model(learntorch)
    assert all(m.training for m in net.modules())
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net(learntorch.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net(learntorch.ones(2, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in net.parameters())


def test_assignment_rules_match_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        m = lib.nn.Module()
        m.w = lib.nn.Parameter(lib.ones(2))
        with pytest.raises(TypeError):
            m.w = lib.ones(2)  # a plain tensor cannot replace a parameter
        m.w = None
        assert m.w is None and "w" in m._parameters
        with pytest.raises(KeyError):
            m.register_buffer("a.b", lib.zeros(1))
        m.plain = 3
        assert m.plain == 3 and "plain" not in m._parameters
        with pytest.raises(AttributeError):
            getattr(m, "missing")
        with pytest.raises(TypeError):
            m.register_parameter("bad", lib.ones(1))  # needs a Parameter


def test_uninitialised_module_assignment_raises_a_helpful_error():
    class Broken(learntorch.nn.Module):
        def __init__(self):
            self.w = learntorch.nn.Parameter(learntorch.ones(1))

    with pytest.raises(AttributeError, match="super\\(\\).__init__\\(\\)"):
        Broken()


def test_to_double_converts_parameters_and_buffers_keeping_parameter_type():
    net = model(learntorch)
    ids = [id(p) for p in net.parameters()]
    net.double()
    assert all(p.dtype is learntorch.float64 for p in net.parameters())
    assert all(isinstance(p, learntorch.nn.Parameter) for p in net.parameters())
    assert all(b.dtype is learntorch.float64 for b in net.buffers())
    assert len(ids) == len(list(net.parameters()))
    out = net(learntorch.ones(2, 3, dtype=learntorch.float64))
    assert out.dtype is learntorch.float64
    with pytest.raises(TypeError):
        net.to(learntorch.int64)


def test_apply_visits_children_before_parent_like_torch():
    torch = require_torch()
    orders = []
    for lib in (learntorch, torch):
        seen = []
        model(lib).apply(lambda m: seen.append(type(m).__name__))
        orders.append(seen)
    assert orders[0] == orders[1]


def test_forward_hooks_can_observe_and_replace():
    Affine = affine_class(learntorch)
    layer = Affine(2, 2)
    seen = []
    h1 = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = layer.register_forward_hook(lambda m, args, out: seen.append(out.shape) or out + 1)
    x = learntorch.ones(1, 2)
    out = layer(x)
    np.testing.assert_allclose(out.detach().numpy(), ((x * 2) @ layer.weight + layer.bias + 1)
                               .detach().numpy())
    assert seen == [learntorch.Size([1, 2])]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(layer(x).detach().numpy(),
                               (x @ layer.weight + layer.bias).detach().numpy())


def test_full_backward_hook_reports_the_same_gradients_as_torch():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        Affine = affine_class(lib)
        layer = Affine(3, 2)
        got = {}

        def hook(module, grad_input, grad_output, got=got):
            got["in"] = [g.detach().numpy().copy() if g is not None else None for g in grad_input]
            got["out"] = [g.detach().numpy().copy() for g in grad_output]
            return (grad_input[0] * 3,)

        layer.register_full_backward_hook(hook)
        x = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 5, requires_grad=True)
        (layer(x) ** 2).sum().backward()
        results.append((got, x.grad.numpy().copy()))
    (a, ga), (b, gb) = results
    np.testing.assert_allclose(a["out"][0], b["out"][0], rtol=1e-6)
    np.testing.assert_allclose(a["in"][0], b["in"][0], rtol=1e-6)
    np.testing.assert_allclose(ga, gb, rtol=1e-6)  # the hook's replacement reached x.grad


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")  # torch's notice of this case
def test_full_backward_hook_with_input_not_requiring_grad_gets_none_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        layer = affine_class(lib)(3, 2)
        got = {}
        layer.register_full_backward_hook(
            lambda m, gi, go, got=got: got.update(gi=gi, go=go) and None)
        layer(lib.ones(2, 3)).sum().backward()
        assert got["gi"] == (None,)
        assert tuple(got["go"][0].shape) == (2, 2)


def test_sequential_module_list_module_dict_semantics_match_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        Affine = affine_class(lib)
        seq = lib.nn.Sequential(Affine(2, 3), Affine(3, 4), Affine(4, 5))
        assert len(seq) == 3 and isinstance(seq[1:], lib.nn.Sequential) and len(seq[1:]) == 2
        assert seq[-1] is list(seq)[2]
        del seq[0]
        assert [n for n, _ in seq.named_children()] == ["0", "1"]
        seq.append(Affine(5, 1))
        assert tuple(seq(lib.ones(1, 3)).shape) == (1, 1)
        with pytest.raises(IndexError):
            seq[7]
        ml = lib.nn.ModuleList([Affine(1, 1)])
        ml.append(Affine(1, 1))
        ml.extend([Affine(1, 1)])
        ml.insert(0, Affine(1, 2))
        assert [tuple(m.weight.shape) for m in ml] == [(1, 2), (1, 1), (1, 1), (1, 1)]
        md = lib.nn.ModuleDict({"b": Affine(1, 1), "a": Affine(1, 1)})
        assert list(md.keys()) == ["b", "a"] and "a" in md
        assert [n for n, _ in md.named_parameters()] == ["b.weight", "b.bias", "a.weight",
                                                         "a.bias"]


def test_parameter_repr_and_requires_grad():
    p = learntorch.nn.Parameter(learntorch.zeros(2))
    assert p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([0., 0.], requires_grad=True)"
    q = learntorch.nn.Parameter(learntorch.zeros(2), requires_grad=False)
    assert not q.requires_grad
    t = learntorch.zeros(2)
    shared = learntorch.nn.Parameter(t)
    with learntorch.no_grad():
        shared.add_(1)
    assert t.tolist() == [1.0, 1.0]  # a Parameter shares memory with the tensor it wraps


def test_deepcopy_gives_independent_parameters():
    import copy
    net = model(learntorch)
    clone = copy.deepcopy(net)
    for (n, a), (_, b) in zip(net.named_parameters(), clone.named_parameters()):
        assert isinstance(b, learntorch.nn.Parameter), n
        assert a is not b
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with learntorch.no_grad():
        next(clone.parameters()).add_(1)
    assert not np.array_equal(next(net.parameters()).detach().numpy(),
                              next(clone.parameters()).detach().numpy())
