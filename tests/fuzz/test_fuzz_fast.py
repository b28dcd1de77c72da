"""The differential fuzzer's fast profile, part of every test run.

The same generator (``fuzz_programs.py``) and runner (``fuzz_runner.py``) as the long
campaign (``make fuzz``), with a few hundred programs per area instead of thousands, and
the same programs on every run (``derandomize``), so a red CI reproduces on any machine.
Every mismatch class fails: the known differences (docs/api.md, "Known differences") are
left out of the generator, so whatever the runner reports is a bug -- a silent wrong value
(``value``, ``grad``, ``grad2``), a spurious or missing error, or torch's exception type
not matched.  The runner's message names the step, both libraries' answers, and the
program (shrunk by hypothesis to a short one).
"""
import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

pytest.importorskip("torch", reason="the fuzzer compares with PyTorch, the test oracle")

from fuzz_programs import AREAS, program  # noqa: E402
from fuzz_runner import run  # noqa: E402

# programs per area: about 20 s an area on a 2-core CI machine (the autograd area runs
# each program three times: forward, backward, double backward)
EXAMPLES = {"elementwise": 400, "reductions": 400, "views": 400, "autograd": 150}
SCALE = float(os.environ.get("LEARNTORCH_FUZZ_SCALE", "1"))  # more (or fewer) by hand


@pytest.mark.parametrize("area", sorted(AREAS))
def test_learntorch_agrees_with_torch_on_generated_programs(area):
    @settings(max_examples=max(1, int(EXAMPLES[area] * SCALE)), deadline=None, database=None,
              derandomize=True, suppress_health_check=list(HealthCheck))
    @given(program(area))
    def agrees(p):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            failure = run(p)
        assert failure is None, f"{failure}\nprogram: {p}"

    agrees()
