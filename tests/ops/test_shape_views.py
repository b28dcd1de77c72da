"""Views: the same memory seen through another shape and strides, exactly as torch lays it out.

Every test builds the same tensor in learntorch and in torch (from one numpy
array), applies the same ops, and compares shape, ``stride()``,
``storage_offset()``, ``is_contiguous()`` and values; a write through the
view must then show up in the base in both libraries alike.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import require_torch, torch

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch's .T deprecation


def pair(shape=(2, 3, 4), dtype=np.float32):
    """The same arange tensor in learntorch and torch, each over its own memory."""
    require_torch()
    base = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return learntorch.from_numpy(base.copy()), torch.from_numpy(base.copy())


def assert_same_layout(lt_t, th_t, what=""):
    assert tuple(lt_t.shape) == tuple(th_t.shape), f"{what}: shape"
    assert lt_t.stride() == th_t.stride(), f"{what}: stride {lt_t.stride()} != {th_t.stride()}"
    if th_t.numel():  # (an empty view addresses nothing; torch may put its offset past the end)
        assert lt_t.storage_offset() == th_t.storage_offset(), f"{what}: storage_offset"
    assert lt_t.is_contiguous() == th_t.is_contiguous(), f"{what}: is_contiguous"
    np.testing.assert_array_equal(lt_t.numpy(), th_t.numpy(), err_msg=what)


def shares_storage_th(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def shares_storage_lt(a, b):
    return np.shares_memory(a.untyped_storage(), b.untyped_storage())


VIEW_OPS = {
    "chain t-slice-unsqueeze": lambda x: x.reshape(6, 4).t()[1:, ::2].unsqueeze(0),
    "view": lambda x: x.view(6, 4),
    "view -1": lambda x: x.view(-1, 2),
    "view of transposed, same shape": lambda x: x.transpose(0, 1).view(3, 2, 4),
    "view splitting a transposed dim": lambda x: x.transpose(1, 2).view(2, 2, 2, 3),
    "view_as": lambda x: x.view_as(x.reshape(4, 6)),
    "reshape (view)": lambda x: x.reshape(3, 8),
    "permute": lambda x: x.permute(2, 0, 1),
    "permute negative": lambda x: x.permute(-1, 0, -2),
    "transpose": lambda x: x.transpose(0, 2),
    "swapaxes": lambda x: x.swapaxes(0, -1),
    "t": lambda x: x[0].t(),
    "t of vector": lambda x: x[0, 0].t(),
    "T": lambda x: x[0].T,
    "mT": lambda x: x.mT,
    "squeeze all": lambda x: x[:, :1, 1:2].squeeze(),
    "squeeze dim": lambda x: x[:, :1].squeeze(1),
    "squeeze dim not 1": lambda x: x.squeeze(0),
    "squeeze tuple": lambda x: x[:1, :, :1].squeeze((0, 2)),
    "unsqueeze front": lambda x: x.unsqueeze(0),
    "unsqueeze middle of slice": lambda x: x[:, ::2].unsqueeze(1),
    "unsqueeze end": lambda x: x.unsqueeze(-1),
    "flatten": lambda x: x.flatten(),
    "flatten middle": lambda x: x.flatten(1),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "unflatten -1": lambda x: x.unflatten(-1, (-1, 2)),
    "unflatten of transposed": lambda x: x.transpose(0, 2).unflatten(0, (2, 2)),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "expand new dims": lambda x: x[:, :1].expand(3, 2, 5, 4),
    "expand -1": lambda x: x[:, :1].expand(-1, 3, -1),
    "expand to leading 1": lambda x: x.expand(1, 2, 3, 4),
    "expand_as": lambda x: x[:1].expand_as(x),
    "broadcast_to": lambda x: x[:, :1].broadcast_to((2, 3, 4)),
    "narrow": lambda x: x.narrow(2, 1, 2),
    "narrow negative start": lambda x: x.narrow(1, -2, 2),
    "select": lambda x: x.select(1, 2),
    "select negative": lambda x: x.select(-1, -1),
    "split": lambda x: x.split(3, dim=2)[1],
    "split sizes": lambda x: x.split([1, 2], dim=1)[1],
    "chunk": lambda x: x.chunk(3, dim=1)[2],
    "unbind": lambda x: x.unbind(2)[3],
    "detach": lambda x: x.detach(),
    "movedim": lambda x: x.movedim(0, 2),
    "movedim tuples": lambda x: x.movedim((0, 1), (2, 0)),
    "int index": lambda x: x[1],
    "int index to 0-d": lambda x: x[1, 2, 3],
    "slices with steps": lambda x: x[::2, 1::2, ::3],
    "ellipsis and None": lambda x: x[1, ..., None, 1:],
    "None everywhere": lambda x: x[None, :, None, 1, None],
    "0-d index tensor": lambda x: x[:, learntorch.tensor(1) if isinstance(x, learntorch.Tensor)
                                    else torch.tensor(1)],
    "empty slice": lambda x: x[:, 5:],
}


@pytest.mark.parametrize("name", list(VIEW_OPS))
def test_view_ops_share_storage_and_match_torch_layout(name):
    op = VIEW_OPS[name]
    x_lt, x_th = pair()
    y_lt, y_th = op(x_lt), op(x_th)
    assert_same_layout(y_lt, y_th, name)
    assert shares_storage_lt(y_lt, x_lt) and shares_storage_th(y_th, x_th)
    if y_th.numel():
        # a write through the view lands in the base (fill_ is allowed even on expanded views)
        y_lt.fill_(-7)
        y_th.fill_(-7)
        np.testing.assert_array_equal(x_lt.numpy(), x_th.numpy())
        # and a write to the base shows through the view
        x_lt.add_(1)
        x_th.add_(1)
        np.testing.assert_array_equal(y_lt.numpy(), y_th.numpy())


def test_views_share_the_version_counter_of_their_base():
    versions = []
    for x in pair((3, 4)):
        v = x.t()
        w = v[1:].unsqueeze(0)
        w.mul_(2)
        x.add_(1)
        v.zero_()
        versions.append((x._version, v._version, w._version))
    assert versions[0] == versions[1] == (3, 3, 3)


@given(st.data())
def test_random_chains_of_view_ops_match_torch_layout(data):
    """Any chain of view ops, on any shape, gives torch's strides and offsets."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4), label="shape")
    x_lt, x_th = pair(tuple(shape))
    y_lt, y_th = x_lt, x_th
    for step in range(data.draw(st.integers(1, 5), label="steps")):
        op, args = data.draw(_view_step(tuple(y_th.shape)), label=f"step {step}")
        y_lt, y_th = getattr(y_lt, op)(*args), getattr(y_th, op)(*args)
        assert_same_layout(y_lt, y_th, f"{op}{args}")
    assert shares_storage_lt(y_lt, x_lt)
    y_lt.fill_(-1)
    y_th.fill_(-1)
    np.testing.assert_array_equal(x_lt.numpy(), x_th.numpy())


@st.composite
def _view_step(draw, shape):
    """One view op that is valid for ``shape``: (method name, args)."""
    ndim = len(shape)
    dim = st.integers(-ndim, ndim - 1) if ndim else st.just(0)
    kinds = ["unsqueeze", "squeeze", "expand"]
    if ndim:
        kinds += ["transpose", "permute", "narrow", "select", "slice", "movedim"]
    kind = draw(st.sampled_from(kinds))
    if kind == "unsqueeze":
        return "unsqueeze", (draw(st.integers(-ndim - 1, ndim)),)
    if kind == "squeeze":
        return "squeeze", (() if not ndim or draw(st.booleans()) else (draw(dim),))
    if kind == "expand":
        new = [draw(st.sampled_from([1, 3])) for _ in range(draw(st.integers(0, 1)))]
        return "expand", (tuple(new) + tuple(3 if s == 1 and draw(st.booleans()) else s
                                             for s in shape),)
    if kind == "transpose":
        return "transpose", (draw(dim), draw(dim))
    if kind == "permute":
        return "permute", tuple(draw(st.permutations(range(ndim))))
    if kind == "movedim":
        return "movedim", (draw(dim), draw(dim))
    d = draw(dim)
    size = shape[d]
    if kind == "narrow":
        start = draw(st.integers(0, size))
        return "narrow", (d, start, draw(st.integers(0, size - start)))
    if kind == "select":
        if size == 0:
            return "unsqueeze", (0,)
        return "select", (d, draw(st.integers(-size, size - 1)))
    start = draw(st.integers(0, size))
    step = draw(st.integers(1, 3))
    return "__getitem__", ((slice(None),) * (d % ndim) + (slice(start, None, step),),)


@st.composite
def _strided_input(draw):
    """A permuted, sliced arange in both libraries: the usual non-contiguous suspects."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    x_lt, x_th = pair(shape)
    perm = draw(st.permutations(range(len(shape))))
    x_lt, x_th = x_lt.permute(*perm), x_th.permute(*perm)
    d = draw(st.integers(0, len(shape) - 1))
    step = draw(st.integers(1, 2))
    index = (slice(None),) * d + (slice(None, None, step),)
    return x_lt[index], x_th[index]


@st.composite
def _target_shape(draw, shape):
    """A new shape with the same element count: dims merged, split and 1s inserted."""
    sizes = list(shape)
    out = []
    while sizes:
        take = draw(st.integers(1, len(sizes)))  # merge a run of dims
        merged = int(np.prod(sizes[:take]))
        sizes = sizes[take:]
        factors = [f for f in range(2, merged) if merged % f == 0]
        if factors and draw(st.booleans()):  # split it again somewhere else
            f = draw(st.sampled_from(factors))
            out += [f, merged // f]
        else:
            out.append(merged)
        if draw(st.booleans()):
            out.append(1)
    if draw(st.booleans()):
        out[draw(st.integers(0, len(out) - 1))] = -1
    return tuple(out)


@given(st.data())
def test_view_refuses_a_non_viewable_shape_exactly_when_torch_does(data):
    x_lt, x_th = data.draw(_strided_input(), label="input")
    target = data.draw(_target_shape(tuple(x_th.shape)), label="target")
    try:
        expected = x_th.view(target)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            x_lt.view(target)
        return
    got = x_lt.view(target)
    assert_same_layout(got, expected, f"view{target}")
    assert shares_storage_lt(got, x_lt)


@given(st.data())
def test_reshape_copies_exactly_when_torch_does(data):
    x_lt, x_th = data.draw(_strided_input(), label="input")
    target = data.draw(_target_shape(tuple(x_th.shape)), label="target")
    got, expected = x_lt.reshape(target), x_th.reshape(target)
    assert_same_layout(got, expected, f"reshape{target}")
    assert shares_storage_lt(got, x_lt) == shares_storage_th(expected, x_th)


def test_view_of_a_transpose_fails_but_same_shape_and_dim_splits_work():
    x_lt, x_th = pair((3, 4))
    with pytest.raises(RuntimeError, match="Use .reshape"):
        x_lt.t().view(-1)
    assert_same_layout(x_lt.t().view(x_lt.t().shape), x_th.t().view(x_th.t().shape))
    assert_same_layout(x_lt.t().view(2, 2, 3), x_th.t().view(2, 2, 3))  # splits dim 0
    assert_same_layout(x_lt.t().reshape(-1), x_th.t().reshape(-1))


@pytest.mark.parametrize("shape, numel", [
    ((-1, -1), 6), ((5,), 6), ((-1, 4), 6), ((-2, 3), 6), ((-1, 0), 0), ((2, -1, 0), 0),
])
def test_shape_inference_errors_are_runtime_errors_like_torch(shape, numel):
    require_torch()
    x_th, x_lt = torch.zeros(numel), learntorch.zeros(numel)
    for method in ("view", "reshape"):
        with pytest.raises(RuntimeError):
            getattr(x_th, method)(shape)
        with pytest.raises(RuntimeError) as info:
            getattr(x_lt, method)(shape)
        assert str(list(shape)) in str(info.value) or "one dimension" in str(info.value)


def test_shape_arguments_must_be_integers():
    x = learntorch.zeros(6)
    with pytest.raises(TypeError):
        x.view(2.0, 3)
    assert x.view(learntorch.tensor(2), 3).shape == (2, 3)  # an integer tensor is an index


@given(_strided_input())
def test_contiguous_copies_only_non_contiguous_tensors(inputs):
    x_lt, x_th = inputs
    c_lt, c_th = x_lt.contiguous(), x_th.contiguous()
    assert_same_layout(c_lt, c_th, "contiguous")
    assert (c_lt is x_lt) == (c_th is x_th)


@given(_strided_input())
def test_clone_is_a_copy_that_preserves_the_stride_order_like_torch(inputs):
    x_lt, x_th = inputs
    c_lt, c_th = x_lt.clone(), x_th.clone()
    assert_same_layout(c_lt, c_th, "clone")
    assert not shares_storage_lt(c_lt, x_lt)
    c_lt.fill_(-1)
    assert (x_lt.numpy() >= 0).all()


@pytest.mark.parametrize("make", [
    lambda x: x[:, :1].expand(2, 3, 4), lambda x: x[:1, :, :1].expand(3, 3, 2),
    lambda x: x[:, :1], lambda x: x.permute(1, 0, 2)[:, :, ::2],
    lambda x: x[:1, :1].transpose(0, 1), lambda x: x.unsqueeze(1).expand(2, 2, 3, 4),
])
def test_clone_of_expanded_and_size_one_layouts_matches_torch(make):
    x_lt, x_th = pair()
    assert_same_layout(make(x_lt).clone(), make(x_th).clone())


def test_copying_shape_ops_do_not_share_storage():
    x_lt, x_th = pair((2, 3))
    for op in (lambda x: x.flip(0), lambda x: x.repeat(2, 1), lambda x: x.t().reshape(6),
               lambda x: x.t().flatten(), lambda x: x.clone()):
        y_lt, y_th = op(x_lt), op(x_th)
        assert_same_layout(y_lt, y_th)
        assert not shares_storage_lt(y_lt, x_lt) and not shares_storage_th(y_th, x_th)


def test_flatten_of_equal_dims_returns_the_input_itself_like_torch():
    x_lt, x_th = pair((2, 3))
    assert (x_lt.flatten(1, 1) is x_lt) and (x_th.flatten(1, 1) is x_th)
    assert learntorch.flatten(learntorch.tensor(3.0)).shape == torch.flatten(torch.tensor(3.)).shape


def test_view_as_another_dtype_shares_memory_and_version():
    x_lt, x_th = pair((2, 3))
    v_lt, v_th = x_lt.view(learntorch.int32), x_th.view(torch.int32)
    np.testing.assert_array_equal(v_lt.numpy(), v_th.numpy())
    v_lt[0, 0] = 5
    v_th[0, 0] = 5
    np.testing.assert_array_equal(x_lt.numpy(), x_th.numpy())
    assert x_lt._version == x_th._version
    with pytest.raises(RuntimeError):
        x_lt.view(learntorch.float64)


ERRORS = [
    ("narrow start too big", lambda x: x.narrow(1, 4, 1), IndexError),
    ("narrow start too small", lambda x: x.narrow(1, -4, 1), IndexError),
    ("narrow too long", lambda x: x.narrow(1, 1, 3), RuntimeError),
    ("narrow negative length", lambda x: x.narrow(1, 1, -1), RuntimeError),
    ("expand non-singleton", lambda x: x.expand(4, 3), RuntimeError),
    ("expand too few sizes", lambda x: x.expand(3), RuntimeError),
    ("expand negative", lambda x: x.expand(2, -2, 3), RuntimeError),
    ("repeat too few", lambda x: x.repeat(1), RuntimeError),
    ("repeat negative", lambda x: x.repeat(-1, 1), RuntimeError),
    ("permute duplicate", lambda x: x.permute(0, 0), RuntimeError),
    ("permute length", lambda x: x.permute(0), RuntimeError),
    ("transpose dim", lambda x: x.transpose(0, 2), IndexError),
    ("squeeze dim", lambda x: x.squeeze(2), IndexError),
    ("unsqueeze dim", lambda x: x.unsqueeze(3), IndexError),
    ("flatten order", lambda x: x.flatten(1, 0), RuntimeError),
    ("unflatten product", lambda x: x.unflatten(1, (2, 2)), RuntimeError),
    ("unflatten empty", lambda x: x.unflatten(1, ()), RuntimeError),
    ("unflatten two -1", lambda x: x.unflatten(1, (-1, -1)), RuntimeError),
    ("movedim lengths", lambda x: x.movedim((0, 1), (0,)), RuntimeError),
    ("movedim repeated", lambda x: x.movedim((0, 0), (0, 1)), RuntimeError),
    ("movedim dim", lambda x: x.movedim(0, 2), IndexError),
    ("flip repeated", lambda x: x.flip(0, 0), RuntimeError),
    ("t of 3-D", lambda x: x.unsqueeze(0).t(), RuntimeError),
    ("mT of 1-D", lambda x: x[0].mT, RuntimeError),
    ("select out of range", lambda x: x.select(0, 2), IndexError),
]


@pytest.mark.parametrize("name", [e[0] for e in ERRORS])
def test_bad_shape_arguments_raise_torchs_exception_type(name):
    _, op, error = next(e for e in ERRORS if e[0] == name)
    x_lt, x_th = pair((2, 3))
    with pytest.raises(error):
        op(x_th)
    with pytest.raises(error) as info:
        op(x_lt)
    assert str(info.value)  # a message, not a bare exception
