"""Type promotion: the dtype of every binary op's result is torch's, for every operand pairing.

The table is all nine dtypes x {tensor with dimensions, 0-dim tensor, Python
bool/int/float} on either side.  torch is run on the same operands: learntorch
must produce the same dtype and values, or raise the same exception type
where torch refuses (bool subtraction, floor division of bools, ...).
"""
import itertools

import numpy as np
import pytest

import learntorch
from learntorch import _dtypes
from oracle import require_torch

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SCALARS = {"bool": True, "int": 3, "float": 2.5}

OPS = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "floor_divide": lambda lib, a, b: a // b,
    "remainder": lambda lib, a, b: a % b,
    "pow": lambda lib, a, b: a ** b,
    "eq": lambda lib, a, b: a == b,
    "lt": lambda lib, a, b: a < b,
    "ge": lambda lib, a, b: a >= b,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "where": lambda lib, a, b: lib.where(lib.tensor([True, False, True]), a, b),
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
}

# (left kind, right kind): "dim" a 1-d tensor, "zero" a 0-dim tensor, "scalar" a Python number
PAIRINGS = [("dim", "dim"), ("dim", "zero"), ("zero", "dim"), ("zero", "zero"),
            ("dim", "scalar"), ("scalar", "dim"), ("zero", "scalar"), ("scalar", "zero")]


def operand(lib, kind, name, side):
    """Nonzero values (they may be divisors): [1, 2, 3] on the left, [3, 1, 2] on the right."""
    if kind == "scalar":
        return SCALARS[name]
    values = np.array([1, 2, 3] if side == 0 else [3, 1, 2], dtype=name)
    if kind == "zero":
        values = values[1]
    return lib.tensor(np.array(values).tolist(), dtype=getattr(lib, name))


def outcome(lib, op, a, b):
    try:
        out = op(lib, a, b)
    except Exception as e:  # the exception *type* is part of the specification
        return type(e), None
    name = out.dtype.name if lib is learntorch else str(out.dtype).replace("torch.", "")
    return name, np.asarray(out.tolist(), dtype=np.float64)


def names_for(kind):
    return list(SCALARS) if kind == "scalar" else NAMES


@pytest.mark.parametrize("op_name", sorted(OPS))
@pytest.mark.parametrize("kinds", PAIRINGS, ids=["-".join(k) for k in PAIRINGS])
def test_result_dtype_and_values_match_torch_for_every_dtype_pairing(op_name, kinds):
    torch = require_torch()
    op = OPS[op_name]
    mismatches = []
    for name_a, name_b in itertools.product(names_for(kinds[0]), names_for(kinds[1])):
        expected = outcome(torch, op, operand(torch, kinds[0], name_a, 0),
                           operand(torch, kinds[1], name_b, 1))
        actual = outcome(learntorch, op, operand(learntorch, kinds[0], name_a, 0),
                         operand(learntorch, kinds[1], name_b, 1))
        case = f"{kinds[0]} {name_a} {op_name} {kinds[1]} {name_b}"
        if expected[1] is None or actual[1] is None:
            if not (actual[1] is None and issubclass(actual[0], expected[0])):
                mismatches.append(f"{case}: torch {expected[0]}, learntorch {actual[0]}")
        elif expected[0] != actual[0]:
            mismatches.append(f"{case}: torch dtype {expected[0]}, learntorch {actual[0]}")
        elif not np.allclose(actual[1], expected[1], rtol=2e-3, equal_nan=True):
            mismatches.append(f"{case}: torch {expected[1]}, learntorch {actual[1]}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_matches_torch_for_every_pair(a):
    torch = require_torch()
    for b in NAMES:
        expected = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        assert f"torch.{_dtypes.promote_types(a, b).name}" == expected, (a, b)


@pytest.mark.parametrize("kinds", PAIRINGS, ids=["-".join(k) for k in PAIRINGS])
def test_result_type_matches_torch_result_type(kinds):
    torch = require_torch()
    for name_a, name_b in itertools.product(names_for(kinds[0]), names_for(kinds[1])):
        expected = torch.result_type(operand(torch, kinds[0], name_a, 0),
                                     operand(torch, kinds[1], name_b, 1))
        actual = _dtypes.result_type(operand(learntorch, kinds[0], name_a, 0),
                                     operand(learntorch, kinds[1], name_b, 1))
        assert f"torch.{actual.name}" == str(expected), (kinds, name_a, name_b)


def test_result_type_of_three_operands_lets_each_tier_raise_only_the_category():
    torch = require_torch()
    cases = [
        (np.array([1], dtype=np.int8), np.array(1.0, dtype=np.float64), 2),
        (np.array([1], dtype=np.uint8), np.array(1, dtype=np.int64), True),
        (np.array([True]), np.array(1, dtype=np.int16), 1.5),
        (np.array([1], dtype=np.float16), np.array(1, dtype=np.float64), 2.5),
    ]
    for a, b, s in cases:
        expected = torch.result_type(torch.from_numpy(a) + torch.from_numpy(b), s)
        actual = _dtypes.result_type(learntorch.from_numpy(a) + learntorch.from_numpy(b), s)
        assert f"torch.{actual.name}" == str(expected), (a.dtype, b.dtype, s)


def test_default_dtype_decides_what_python_floats_become():
    torch = require_torch()
    previous = learntorch.get_default_dtype()
    try:
        learntorch.set_default_dtype(learntorch.float64)
        torch.set_default_dtype(torch.float64)
        for lib in (torch, learntorch):
            assert (lib.tensor([1, 2]) * 2.5).dtype == lib.float64
            assert (lib.tensor([1, 2]) / 2).dtype == lib.float64
            assert (lib.tensor([1.0], dtype=lib.float32) * 2.5).dtype == lib.float32
    finally:
        learntorch.set_default_dtype(previous)
        torch.set_default_dtype(torch.float32)
