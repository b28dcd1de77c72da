"""The API probe (scripts/api_probe.txt) is a valid sample and learntorch meets its target.

The probe is 250 torch names a course program plausibly reaches for; at most 60 may be
missing from learntorch (docs/api.md lists which, under "API probe").
"""
import importlib.util
from pathlib import Path

from oracle import require_torch

ROOT = Path(__file__).resolve().parent.parent


def load_script():
    spec = importlib.util.spec_from_file_location("api_probe", ROOT / "scripts" / "api_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_probe = load_script()


def test_the_probe_is_250_distinct_names():
    names = [name for _, name in api_probe.load()]
    assert len(names) == 250
    assert len(set(names)) == 250, sorted(n for n in names if names.count(n) > 1)


def test_every_probed_name_is_torchs():
    torch = require_torch()
    assert [n for _, n in api_probe.load() if not api_probe.has(torch, n)] == []


def test_at_most_the_target_number_of_probed_names_is_missing():
    absent = [name for _, name in api_probe.missing()]
    assert len(absent) <= api_probe.TARGET, f"{len(absent)} missing: {absent}"


def test_a_missing_name_is_reported():
    import types
    fake = types.ModuleType("learntorch")
    fake.zeros = object()
    assert api_probe.has(fake, "torch.zeros")
    assert not api_probe.has(fake, "torch.no_such_name")
    assert not api_probe.has(fake, "torch.zeros.no_such_attribute")
