"""``copy_`` from a source that is the destination's own memory, as torch 2.13 on the CPU.

torch refuses a source that overlaps the destination in part when both are dense
(``x[1:].copy_(x[:-1])``, ``x.copy_(x.t())``); when one is not dense it cannot cheaply
tell, copies, and its loop order decides what a later element reads: ``x.copy_(x[:, 0])``
on a square ``x`` writes ``x[1, 0]`` before it reads it.  learntorch replays that loop
(backends/numpy_families/loop_order.py).  Each case runs in both libraries and the whole
base tensor must come out the same, bit for bit, or both must refuse.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
from oracle import as_numpy, require_torch

# views of a 2-d base x, each a function of (x, k) with k a small offset
VIEWS = {
    "x": lambda x, k: x,
    "x.t()": lambda x, k: x.t(),
    "column k": lambda x, k: x[:, k],
    "column k, kept": lambda x, k: x[:, k:k + 1],
    "row k": lambda x, k: x[k],
    "rows from k": lambda x, k: x[k:],
    "rows to -k": lambda x, k: x[:x.shape[0] - k],
    "columns from k": lambda x, k: x[:, k:],
    "columns to -k": lambda x, k: x[:, :x.shape[1] - k],
    "every 2nd column": lambda x, k: x[:, k::2],
    "diagonal": lambda x, k: x.diagonal(k),
    "transposed rows from k": lambda x, k: x.t()[k:],
    "row k, unsqueezed": lambda x, k: x[k].unsqueeze(0),
    "flattened every 2nd": lambda x, k: x.reshape(-1)[k::2],
}
DTYPES = ["float32", "float64", "int64", "int8", "float16", "bool"]


def run(lib, dtype, shape, dst, src, k_dst, k_src):
    """The base after ``dst_view.copy_(src_view)``, or the name of the exception's type (a
    view out of range, shapes that do not broadcast, an overlap refused)."""
    n = shape[0] * shape[1]
    values = lib.arange(n) % 5 == 2 if dtype == "bool" else lib.arange(n).to(getattr(lib, dtype))
    x = values.reshape(shape)
    try:
        VIEWS[dst](x, k_dst).copy_(VIEWS[src](x, k_src))
    except Exception as e:
        return type(e).__name__
    return as_numpy(x).astype(np.float64)


def same_in_both(dtype, shape, dst, src, k_dst=0, k_src=0):
    torch = require_torch()
    want = run(torch, dtype, shape, dst, src, k_dst, k_src)
    got = run(learntorch, dtype, shape, dst, src, k_dst, k_src)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)
    return want


@pytest.mark.parametrize("dtype", DTYPES)
def test_square_copy_from_its_own_column_reads_what_it_wrote(dtype):
    """x.copy_(x[:, 0]): each row gets x's first column as it is when the row is written."""
    want = same_in_both(dtype, (4, 4), "x", "column k")
    if dtype == "float32":  # (torch's answer, not the source read first: [0, 4, 8, 12])
        assert want[3].tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "float16", "int64", "bool"])
@pytest.mark.parametrize("n", [5, 20, 69, 150])
def test_shift_along_a_row_in_vector_steps(dtype, n):
    """x[:, 1:].copy_(x[:, :-1]) on rows of n + 1: torch reads 64 bytes at a time, then one
    element at a time through the rest of the row."""
    same_in_both(dtype, (3, n + 1), "columns from k", "columns to -k", 1, 1)


@pytest.mark.parametrize("dst, src", [
    ("rows from k", "rows to -k"), ("x", "x.t()"), ("x", "row k"), ("row k", "x"),
    ("x", "rows from k"), ("rows to -k", "rows from k"),
])
def test_dense_partial_overlaps_are_refused(dst, src):
    assert same_in_both("float32", (3, 3), dst, src, 1, 1) == "RuntimeError"


@given(dtype=st.sampled_from(DTYPES), rows=st.integers(1, 5), cols=st.integers(1, 5),
       dst=st.sampled_from(sorted(VIEWS)), src=st.sampled_from(sorted(VIEWS)),
       k_dst=st.integers(0, 2), k_src=st.integers(0, 2))
@settings(max_examples=300, deadline=None)
def test_any_pair_of_views_of_one_tensor(dtype, rows, cols, dst, src, k_dst, k_src):
    same_in_both(dtype, (rows, cols), dst, src, k_dst, k_src)
