"""Tensor basics against torch: metadata, conversions, Python protocols, devices."""
import numpy as np
import pytest
from hypothesis import given

import learntorch
from oracle import arrays, lt_tensor, require_torch, torch_tensor


def compare(expression, **names):
    """Evaluate with m = learntorch and m = torch: equal results, or errors of torch's type."""
    torch = require_torch()
    results = []
    for m in (learntorch, torch):
        try:
            results.append(eval(expression, {"m": m, "np": np, **names}))
        except Exception as e:  # noqa: BLE001 -- the error type is the result compared
            results.append(e)
    lt, th = results
    if isinstance(th, Exception):
        assert isinstance(lt, type(th)), f"{expression}: {lt!r} vs torch's {th!r}"
    else:
        assert not isinstance(lt, Exception), f"{expression}: learntorch raised {lt!r}"
        norm = (lambda v: repr(v).replace("learntorch.", "torch."))
        assert norm(lt) == norm(th), f"{expression}: {lt!r} vs torch's {th!r}"
        assert type(lt).__name__ == type(th).__name__ or isinstance(th, (int, float, bool, list))


CASES = [
    # item / tolist, with the Python types they give
    "m.tensor([[2.5]]).item()", "type(m.tensor(3).item()).__name__",
    "type(m.tensor(3.0).item()).__name__", "m.tensor(True).item()", "m.tensor([1, 2]).item()",
    "m.tensor([[1, 2], [3, 4]]).tolist()", "m.tensor(2.5).tolist()",
    "type(m.tensor([1.5]).tolist()[0]).__name__", "m.tensor([True, False]).tolist()",
    "m.tensor([1.0, 2.0], requires_grad=True).tolist()",
    "m.tensor(2.0, requires_grad=True).item()",
    # Python protocols
    "len(m.zeros(2, 3))", "len(m.zeros(()))", "[tuple(t.shape) for t in m.zeros(2, 3)]",
    "[t.item() for t in m.tensor([1, 2])]", "list(m.tensor(1))", "bool(m.tensor([1, 2]))",
    "bool(m.tensor([0]))", "bool(m.tensor([]))", "bool(m.tensor(2.0))", "int(m.tensor([2.7]))",
    "float(m.tensor([1, 2]))", "float(m.tensor(3))", "int(m.tensor([[-2.7]]))",
    "[10, 20, 30][m.tensor(1)]", "[10, 20, 30][m.tensor(1.0)]", "f'{m.tensor(2.5):.2f}'",
    # metadata
    "m.tensor([[1, 2, 3]]).size()", "m.tensor([[1, 2, 3]]).size(1)", "m.tensor([[1, 2, 3]]).size(-1)",
    "m.tensor([[1, 2, 3]]).size(dim=0)", "m.tensor([[1, 2, 3]]).size(2)", "m.tensor(1).shape",
    "m.zeros(2, 3).shape[1:]", "m.zeros(2, 3).shape + (1,)", "(1,) + m.zeros(2, 3).shape",
    "m.zeros(2, 3).shape == (2, 3)", "m.Size([2, 3])", "m.zeros(2, 3).shape.numel()",
    "m.Size([2.5])", "m.zeros(2, 3).ndim", "m.zeros(2, 3).dim()", "m.zeros(2, 3).numel()",
    "m.zeros(()).numel()", "m.numel(m.zeros(4, 0))", "m.zeros(2, 3, 4).stride()",
    "m.zeros(2, 3, 4).transpose(0, 2).stride()", "m.zeros(2, 3, 4).transpose(0, 2).is_contiguous()",
    "m.zeros(2, 3)[:, ::2].stride()", "m.zeros(2, 3)[:, ::2].is_contiguous()",
    "m.zeros(2, 3).stride(1)", "m.zeros(2, 3).stride(-2)", "m.zeros(4)[2:].storage_offset()",
    "m.zeros(2, 3).element_size()", "m.zeros(2, dtype=m.float64).element_size()",
    "m.zeros(2, dtype=m.bool).element_size()", "m.zeros(2, dtype=m.float16).element_size()",
    "m.zeros(2, dtype=m.int64).element_size()", "m.zeros(2, 3).type()",
    "m.zeros(2, dtype=m.int64).type()", "m.zeros(2).is_floating_point()",
    "m.zeros(2, dtype=m.int64).is_floating_point()", "m.is_tensor(m.zeros(1))", "m.is_tensor([1])",
    # devices
    "m.zeros(2, 3).device", "str(m.zeros(2).device)", "m.device('cpu')", "m.device('cuda', 0)",
    "m.device('cuda:1')", "m.device('tpu')", "m.zeros(2).is_cuda", "m.zeros(2).get_device()",
    "m.zeros(2).cpu().device", "m.zeros(2).to('cpu').device", "m.device('cpu') == 'cpu'",
]


@pytest.mark.parametrize("expression", CASES)
def test_like_torch(expression):
    compare(expression)


@given(arrays(max_dims=4, max_side=3))
def test_metadata_of_strided_views_matches_torch(a):
    require_torch()
    lt, th = lt_tensor(a), torch_tensor(a)
    if not a.flags["C_CONTIGUOUS"]:  # torch_tensor copies; rebuild torch's view the same way
        th = require_torch().from_numpy(a)
    assert tuple(lt.shape) == tuple(th.shape) and lt.size() == tuple(th.size())
    # the stride of a size-1 dimension is never used (torch.from_numpy rewrites it)
    assert [s for s, n in zip(lt.stride(), lt.shape) if n > 1] == \
        [s for s, n in zip(th.stride(), th.shape) if n > 1]
    assert lt.is_contiguous() == th.is_contiguous()
    assert (lt.ndim, lt.dim(), lt.numel()) == (th.ndim, th.dim(), th.numel())
    assert lt.tolist() == th.tolist()


def test_numpy_shares_memory_and_refuses_tensors_that_require_grad():
    t = learntorch.tensor([1.0, 2.0])
    view = t.numpy()
    view[0] = 5.0
    assert t.tolist() == [5.0, 2.0]
    w = learntorch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
        w.numpy()
    assert w.detach().numpy().tolist() == [1.0]
    assert w.numpy(force=True).tolist() == [1.0]


def test_item_and_bool_messages_name_the_shape_and_the_fix():
    with pytest.raises(RuntimeError, match=r"2 elements cannot be converted to Scalar.*\[2\]"):
        learntorch.tensor([1, 2]).item()
    with pytest.raises(RuntimeError, match=r"more than one value is ambiguous.*\[2\].*any\(\)"):
        bool(learntorch.tensor([1, 2]))


def test_legacy_tensor_constructor_makes_float_tensors():
    torch = require_torch()
    for args in [([1, 2],), (2, 3), ((1.5, 2.5),)]:
        ours, theirs = learntorch.Tensor(*args), torch.Tensor(*args)
        assert (tuple(ours.shape), ours.dtype.name) == (tuple(theirs.shape), "float32")
    source = learntorch.tensor([1, 2])
    alias = learntorch.Tensor(source)  # torch's legacy rule: the same memory and dtype
    assert (alias.dtype, alias.data_ptr()) == (source.dtype, source.data_ptr())
    theirs = torch.tensor([1, 2])
    assert (torch.Tensor(theirs).dtype, torch.Tensor(theirs).data_ptr()) == \
        (theirs.dtype, theirs.data_ptr())


def test_iteration_gives_views_along_the_first_dimension():
    t = learntorch.arange(6.0).reshape(2, 3)
    rows = list(t)
    rows[0][1] = 100.0  # a view: writes reach the original
    assert t.tolist() == [[0.0, 100.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(TypeError, match="0-d"):
        iter(learntorch.tensor(1.0))
