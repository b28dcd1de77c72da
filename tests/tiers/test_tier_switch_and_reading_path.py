"""The tier switch, and the promise behind it: the reference tier is small enough to read.

``LEARNTORCH_REFERENCE=1`` (at import) or ``learntorch.tiers.set_tier("reference")`` runs the
engine exactly as written -- ``Function.apply`` and ``run_backward`` of ``learntorch/autograd``,
the numpy backend -- and ``code_walk`` measures what a learner has to read to follow an
expression.  The budget below is issue 11's: ``a * b + c`` (``c`` broadcast), ``sum`` and
``backward`` enter at most 300 lines of code in at most 6 files.
"""
import os
import subprocess
import sys

import pytest

import learntorch
from learntorch import backends, tiers
from learntorch._fast import installed
from learntorch.autograd import engine
from learntorch.autograd.function import Function
from learntorch.backends.numba_cpu import NumbaBackend
from learntorch.backends.reference import NumpyBackend
from learntorch.utils.code_walk import code_walk

READING_ORDER = ["_tensor.py", "autograd/function.py", "ops/arithmetic.py",
                 "backends/reference.py", "ops/reductions.py", "autograd/engine.py"]


def _walk():
    a = learntorch.randn(3, 4, requires_grad=True)
    b = learntorch.randn(3, 4, requires_grad=True)
    c = learntorch.randn(4, requires_grad=True)
    return code_walk(lambda: (a * b + c).sum().backward())


def test_the_walk_of_a_times_b_plus_c_fits_the_reading_budget():
    walk = _walk()
    assert walk.lines <= 300, f"{walk.lines} lines of code to read:\n{walk!r}"
    assert len(walk.files) <= 6, walk.files
    assert set(walk.files) == set(READING_ORDER), walk.files


def test_the_walk_runs_the_reference_tier_and_leaves_the_tier_as_it_was():
    before = tiers.get_tier()
    walk = _walk()
    assert walk.tier == "reference"
    assert not any(f.startswith("_fast/") for f in walk.files)
    assert tiers.get_tier() == before


def test_the_fast_tier_walk_differs_only_by_what_it_replaces():
    walk = code_walk(lambda: (learntorch.ones(2, requires_grad=True) * 2.0).sum().backward(),
                     tier="fast")
    assert "_fast/apply.py" in walk.files and "_fast/engine.py" in walk.files


def test_set_tier_switches_engine_and_backend_and_refuses_unknown_tiers():
    with tiers.use("reference"):
        assert not installed() and type(backends.current) is NumpyBackend
        assert Function.__dict__["apply"].__func__.__module__ == "learntorch.autograd.function"
        assert engine.run_backward.__module__ == "learntorch.autograd.engine"
        with tiers.use("fast"):
            assert installed() and isinstance(backends.current, NumbaBackend)
        assert tiers.get_tier() == "reference"
    with pytest.raises(ValueError, match="reference"):
        tiers.set_tier("slow")


@pytest.mark.parametrize("value, tier", [("1", "reference"), ("0", "fast"), ("", "fast")])
def test_the_environment_variable_picks_the_tier_at_import(value, tier):
    env = dict(os.environ, LEARNTORCH_REFERENCE=value)
    out = subprocess.run(
        [sys.executable, "-c", "import learntorch; print(learntorch.tiers.get_tier(), "
                               "type(learntorch.backends.current).__name__)"],
        env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [tier, "NumpyBackend" if tier == "reference" else "NumbaBackend"]
