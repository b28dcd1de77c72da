"""nn.Embedding, F.embedding and F.one_hot against torch."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import both_raise, assert_close, require_torch
from test_layers_oracle import compare_with_torch, copy_from_torch

INDICES = np.array([[0, 2, 2, 4], [1, 0, 3, 2]])


@pytest.mark.parametrize("indices", [INDICES, INDICES[0], np.array(3), INDICES.T,
                                     INDICES.astype(np.int32), np.zeros((0, 2), np.int64)])
@pytest.mark.parametrize("kwargs", [{}, dict(padding_idx=2), dict(padding_idx=-1),
                                    dict(scale_grad_by_freq=True),
                                    dict(padding_idx=0, scale_grad_by_freq=True)])
def test_embedding_lookup_and_weight_gradient_equal_torch(indices, kwargs):
    torch = require_torch()
    lt, t = nn.Embedding(5, 3, **kwargs), torch.nn.Embedding(5, 3, **kwargs)
    assert lt.padding_idx == t.padding_idx
    compare_with_torch(lt, t, indices)


def test_embedding_in_float64_equals_torch():
    torch = require_torch()
    lt, t = nn.Embedding(6, 4).double(), torch.nn.Embedding(6, 4).double()
    out, _ = compare_with_torch(lt, t, INDICES, rtol=1e-15, atol=0)
    assert out.dtype is learntorch.float64


def test_padding_row_starts_at_zero_gets_no_gradient_and_stays_zero():
    layer = nn.Embedding(5, 3, padding_idx=1)
    assert np.array_equal(layer.weight[1].detach().numpy(), np.zeros(3, np.float32))
    assert np.abs(layer.weight.detach().numpy()[[0, 2, 3, 4]]).min() > 0
    idx = learntorch.tensor([[1, 1, 0], [1, 3, 1]])
    (layer(idx) * learntorch.randn(2, 3, 3)).sum().backward()
    grad = layer.weight.grad.numpy()
    assert np.array_equal(grad[1], np.zeros(3, np.float32))  # used four times, no gradient
    assert np.abs(grad[[0, 3]]).min() > 0 and np.array_equal(grad[[2, 4]], np.zeros((2, 3)))
    with learntorch.no_grad():
        layer.weight -= 0.1 * layer.weight.grad
    assert np.array_equal(layer.weight[1].detach().numpy(), np.zeros(3, np.float32))


def test_rows_read_several_times_sum_their_gradients():
    weight = learntorch.randn(4, 2, requires_grad=True)
    F.embedding(learntorch.tensor([3, 3, 3, 0]), weight).sum().backward()
    assert np.array_equal(weight.grad.numpy(), [[1, 1], [0, 0], [0, 0], [3, 3]])


def test_embedding_default_init_is_standard_normal():
    w = nn.Embedding(1000, 100).weight.detach().numpy()
    assert abs(w.mean()) < 5 / np.sqrt(w.size)
    assert w.std() == pytest.approx(1.0, abs=0.01)
    assert abs(np.mean(w ** 3)) < 0.05  # symmetric: not a shifted or skewed draw


@pytest.mark.parametrize("kwargs", [{}, dict(padding_idx=1), dict(padding_idx=-2),
                                    dict(max_norm=2.0, norm_type=1.0),
                                    dict(scale_grad_by_freq=True, sparse=True),
                                    dict(norm_type=2.0)])
def test_embedding_repr_and_state_dict_match_torch(kwargs):
    torch = require_torch()
    lt, t = nn.Embedding(5, 3, **kwargs), torch.nn.Embedding(5, 3, **kwargs)
    assert repr(lt) == repr(t)
    assert list(lt.state_dict()) == list(t.state_dict())
    assert (lt.num_embeddings, lt.embedding_dim) == (t.num_embeddings, t.embedding_dim)


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_max_norm_renormalises_the_rows_read_in_place_like_torch(norm_type):
    torch = require_torch()
    lt = nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type)
    t = torch.nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type)
    with torch.no_grad():
        t.weight.mul_(3)
    copy_from_torch(lt, t)
    idx = np.array([[0, 2], [2, 5]])
    compare_with_torch(lt, t, idx, copy=False)
    assert_close(lt.weight, t.weight, 1e-6, 1e-6, "weight after renorm")
    norms = np.linalg.norm(lt.weight.detach().numpy(), ord=norm_type, axis=1)
    assert np.all(norms[[0, 2, 5]] <= 1.5 + 1e-5) and np.any(norms[[1, 3, 4]] > 1.5)


def test_from_pretrained_uses_the_table_and_freezes_it_by_default():
    torch = require_torch()
    table = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    for freeze in (True, False):
        lt = nn.Embedding.from_pretrained(learntorch.tensor(table), freeze=freeze)
        t = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze)
        assert lt.weight.requires_grad == t.weight.requires_grad == (not freeze)
        assert repr(lt) == repr(t)
        assert np.array_equal(lt(learntorch.tensor([2, 0])).detach().numpy(), table[[2, 0]])


def test_embedding_second_derivative_equals_torch():
    torch = require_torch()
    w = np.random.default_rng(0).standard_normal((5, 3))
    results = []
    for lib in (learntorch, torch):
        weight = lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(INDICES), weight, padding_idx=2,
                                        scale_grad_by_freq=True)
        g, = lib.autograd.grad((y ** 3).sum(), weight, create_graph=True)
        (g ** 2).sum().backward()
        results.append(weight.grad)
    assert_close(*results, rtol=1e-12, atol=1e-12)


def test_embedding_is_one_graph_node_with_torch_name():
    y = nn.Embedding(4, 2)(learntorch.tensor([1, 2]))
    assert y.grad_fn.name() == "EmbeddingBackward0"



@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([1, 5])), ["index out of range", "5"]),
    (lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([[0], [-1]])), ["index out of range"]),
    (lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([1.0])), ["Long, Int", "float32"]),
    (lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([True])), ["Long, Int", "bool"]),
    (lambda lib: lib.nn.Embedding(5, 3, padding_idx=5), ["Padding_idx", "5"]),
    (lambda lib: lib.nn.Embedding(5, 3, padding_idx=-6), ["Padding_idx"]),
    (lambda lib: lib.nn.functional.embedding(lib.tensor([1]), lib.randn(5, 3),
                                             padding_idx=5), ["Padding_idx"]),
    (lambda lib: lib.nn.functional.embedding(lib.tensor([1]), lib.randn(5)), ["2-D", "[5]"]),
    (lambda lib: lib.nn.functional.embedding([1], lib.randn(5, 3)), ["Tensor", "list"]),
    (lambda lib: lib.nn.Embedding(5, 3, _weight=lib.randn(4, 3)), ["Shape of weight"]),
    (lambda lib: lib.nn.Embedding.from_pretrained(lib.randn(5)), ["2-dimensional"]),
])
def test_embedding_errors_have_torch_type(call, words):
    message = both_raise(call)
    for word in words:
        assert word in message


def test_sparse_gradients_are_refused_clearly():
    # torch returns a sparse gradient here; learntorch has no sparse tensors
    with pytest.raises(NotImplementedError, match="sparse=False"):
        nn.Embedding(5, 3, sparse=True)(learntorch.tensor([1]))


# ---------------------------------------------------------------- one_hot
@pytest.mark.parametrize("values, num_classes", [([0, 2, 1], -1), ([0, 2, 1], 5),
                                                 ([[0, 1], [3, 2]], -1), (2, 4), ([], 3),
                                                 ([[1, 1, 1]], 2)])
def test_one_hot_equals_torch(values, num_classes):
    torch = require_torch()
    mine = F.one_hot(learntorch.tensor(values, dtype=learntorch.int64), num_classes)
    theirs = torch.nn.functional.one_hot(torch.tensor(values, dtype=torch.int64), num_classes)
    assert mine.dtype is learntorch.int64
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert np.array_equal(mine.numpy(), theirs.numpy())


def test_one_hot_of_a_strided_view():
    x = learntorch.tensor([[0, 1, 2], [2, 1, 0]]).t()
    assert np.array_equal(F.one_hot(x).numpy(), np.eye(3, dtype=np.int64)[x.numpy()])


@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1]), 2), ["smaller than", "2"]),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([0, -1, 1]), 3), ["non-negative"]),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([0, -1])), ["non-negative"]),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([0.0, 1.0])), ["LongTensor", "float32"]),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 1], dtype=lib.int32)), ["int32"]),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([], dtype=lib.int64)), ["empty"]),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 1]), 0), ["smaller than"]),
    (lambda lib: lib.nn.functional.one_hot([0, 1]), ["Tensor", "list"]),
])
def test_one_hot_errors_have_torch_type(call, words):
    message = both_raise(call)
    for word in words:
        assert word in message
