"""Forward values and gradients of the shape ops, against torch, on non-contiguous inputs.

Each test draws an input (often a transposed or strided view), draws valid
arguments for the op, and compares the result and the input's gradient with
torch's (``oracle.check_against_torch``).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import arrays, check_against_torch, require_torch, torch

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch's .T deprecation


def against_torch(op, *arrays_in, **kwargs):
    """``op(lib)`` returns the function to test; it is built for learntorch and torch alike."""
    require_torch()
    return check_against_torch(op(learntorch), op(torch), *arrays_in, **kwargs)


def a_dim(data, a, label="dim"):
    """A valid dim of ``a``, negative ones included (0 and -1 for a 0-d array)."""
    return data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1), label=label)


@given(st.data())
def test_view_and_reshape_gradients(data):
    a = data.draw(arrays(min_dims=1), label="a")
    shape = data.draw(st.sampled_from([(-1,), (a.size, 1), (1, -1), (-1,) + a.shape[1:]]),
                      label="shape")
    against_torch(lambda lib: lambda x: x.reshape(shape), a)
    # view needs a viewable input: contiguous() first, as a learner would
    against_torch(lambda lib: lambda x: x.contiguous().view(shape) * 2, a)


@given(st.data())
def test_permute_transpose_and_movedim_gradients(data):
    a = data.draw(arrays(min_dims=1), label="a")
    perm = data.draw(st.permutations(range(a.ndim)), label="perm")
    d0, d1 = a_dim(data, a, "d0"), a_dim(data, a, "d1")
    against_torch(lambda lib: lambda x: x.permute(*perm), a)
    against_torch(lambda lib: lambda x: x.transpose(d0, d1), a)
    against_torch(lambda lib: lambda x: x.movedim(d0, d1), a)
    against_torch(lambda lib: lambda x: lib.swapaxes(x, d0, d1), a)


@given(arrays(max_dims=2))
def test_t_and_T_gradients(a):
    against_torch(lambda lib: lambda x: x.t(), a)
    against_torch(lambda lib: lambda x: x.T, a)


@given(arrays(min_dims=2))
def test_mT_gradient(a):
    against_torch(lambda lib: lambda x: x.mT, a)


@given(st.data())
def test_squeeze_and_unsqueeze_gradients(data):
    a = data.draw(arrays(min_side=1, max_side=2), label="a")
    d = a_dim(data, a)
    against_torch(lambda lib: lambda x: x.squeeze(), a)
    against_torch(lambda lib: lambda x: x.squeeze(d), a)
    if a.ndim:
        dims = tuple(data.draw(st.sets(st.integers(0, a.ndim - 1), min_size=1), label="dims"))
        against_torch(lambda lib: lambda x: x.squeeze(dims), a)
    u = data.draw(st.integers(-a.ndim - 1, a.ndim), label="unsqueeze dim")
    against_torch(lambda lib: lambda x: x.unsqueeze(u), a)


@given(st.data())
def test_flatten_and_unflatten_gradients(data):
    a = data.draw(arrays(min_dims=1), label="a")
    s = data.draw(st.integers(0, a.ndim - 1), label="start")
    e = data.draw(st.integers(s, a.ndim - 1), label="end")
    against_torch(lambda lib: lambda x: x.flatten(s, e) * 1, a)
    against_torch(lambda lib: lambda x: lib.flatten(x), a)
    d = data.draw(st.integers(0, a.ndim - 1), label="unflatten dim")
    sizes = data.draw(st.sampled_from([(1, -1), (a.shape[d], 1), (-1,)]), label="sizes")
    against_torch(lambda lib: lambda x: x.unflatten(d, sizes), a)


@given(st.data())
def test_expand_and_broadcast_gradients_sum_over_the_copies(data):
    a = data.draw(arrays(max_side=2), label="a")
    lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="leading"))
    sizes = lead + tuple(3 if s == 1 else s for s in a.shape)
    against_torch(lambda lib: lambda x: x.expand(sizes), a)
    against_torch(lambda lib: lambda x: x.expand_as(lib.zeros(sizes, dtype=lib.float64)), a)
    against_torch(lambda lib: lambda x: lib.broadcast_to(x, sizes), a)
    against_torch(lambda lib: lambda x: x.expand(lead + (-1,) * a.ndim), a)


@given(st.data())
def test_narrow_and_select_gradients(data):
    a = data.draw(arrays(min_dims=1), label="a")
    d = a_dim(data, a)
    size = a.shape[d]
    start = data.draw(st.integers(-size, size - 1), label="start")
    length = data.draw(st.integers(0, size - (start % size)), label="length")
    index = data.draw(st.integers(-size, size - 1), label="index")
    against_torch(lambda lib: lambda x: x.narrow(d, start, length), a)
    against_torch(lambda lib: lambda x: lib.narrow(x, d, start, length) * 3, a)
    against_torch(lambda lib: lambda x: x.select(d, index), a)
    against_torch(lambda lib: lambda x: lib.select(x, d, index), a)


def weighted_sum(lib, parts):
    """Combine the pieces of split/chunk/unbind so that each one gets its own gradient."""
    return lib.stack([(p * (i + 1)).sum() for i, p in enumerate(parts)])


@given(st.data())
def test_split_chunk_and_unbind_gradients(data):
    a = data.draw(arrays(min_dims=1, max_side=5), label="a")
    d = a_dim(data, a)
    size = a.shape[d]
    step = data.draw(st.integers(1, size + 1), label="split size")
    cut = data.draw(st.integers(0, size), label="cut")
    chunks = data.draw(st.integers(1, 6), label="chunks")
    against_torch(lambda lib: lambda x: weighted_sum(lib, x.split(step, d)), a)
    against_torch(lambda lib: lambda x: weighted_sum(lib, lib.split(x, [cut, size - cut], d)), a)
    against_torch(lambda lib: lambda x: weighted_sum(lib, x.chunk(chunks, d)), a)
    against_torch(lambda lib: lambda x: weighted_sum(lib, x.unbind(d)), a)
    against_torch(lambda lib: lambda x: x.split(step, d)[-1], a)


def test_chunk_counts_and_sizes_match_torch_for_uneven_sizes():
    require_torch()
    for n in range(0, 9):
        for chunks in range(1, 7):
            got = [p.shape[0] for p in learntorch.zeros(n, 2).chunk(chunks)]
            assert got == [p.shape[0] for p in torch.zeros(n, 2).chunk(chunks)], (n, chunks)


@given(st.data())
def test_flip_repeat_clone_contiguous_gradients(data):
    a = data.draw(arrays(min_dims=1), label="a")
    dims = tuple(data.draw(st.sets(st.integers(-a.ndim, -1), min_size=1), label="flip dims"))
    reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=a.ndim, max_size=a.ndim + 1),
                           label="repeats"))
    against_torch(lambda lib: lambda x: x.flip(dims), a)
    against_torch(lambda lib: lambda x: lib.flip(x, dims), a)
    against_torch(lambda lib: lambda x: x.repeat(*reps), a)
    against_torch(lambda lib: lambda x: x.clone() * x, a)
    against_torch(lambda lib: lambda x: x.contiguous(), a)


@given(arrays(dtype=np.float32))
def test_to_float64_and_back_passes_the_gradient_in_the_input_dtype(a):
    out = against_torch(lambda lib: lambda x: x.to(lib.float64) * 2, a)
    assert out.dtype == learntorch.float64
    against_torch(lambda lib: lambda x: x.double().float() * x, a)
    against_torch(lambda lib: lambda x: x.half().float(), a, rtol=1e-3, atol=1e-3)
