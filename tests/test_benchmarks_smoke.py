"""The benchmark suite runs and produces well-formed rows and a report.

Every case runs once at a tiny size.  Nothing here asserts how fast anything
is: timings on a shared CI machine mean nothing; `python -m benchmarks` on a
quiet machine gives the figures (see benchmarks/__init__.py).
"""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not installed

from benchmarks import report, timing                           # noqa: E402
from benchmarks.__main__ import main                            # noqa: E402
from benchmarks.runner import run_case, run_suite                # noqa: E402
from benchmarks.suite import GROUPS, LIBRARIES, all_cases        # noqa: E402

CASES = all_cases()


def assert_well_formed(row, case):
    assert "error" not in row, row.get("traceback")
    assert (row["group"], row["name"], row["key"]) == (case.group, case.name, case.key)
    assert set(row["seconds"]) == set(LIBRARIES)
    assert row["seconds"]["learntorch"] is not None, "every case measures learntorch"
    for seconds in row["seconds"].values():
        if seconds is not None:
            assert set(seconds) == {"median", "min", "loops", "repeats"}
            assert math.isfinite(seconds["median"]) and 0 <= seconds["min"] <= seconds["median"]
            assert seconds["loops"] >= 1 and seconds["repeats"] >= 1
    assert set(row["ratios"]) == {"vs_numpy", "vs_torch"}
    for library in ("numpy", "torch"):
        assert (row["ratios"][f"vs_{library}"] is None) == (row["seconds"][library] is None)
    if row["metric"] is not None:
        assert row["metric"]["unit"]
        for library in LIBRARIES:
            assert (row["metric"][library] is None) == (row["seconds"][library] is None)
    if case.target is not None:
        assert row["target"]["text"] and row["target"]["measured"]
        assert row["target"]["met"] in (True, False, None)
    assert report.console_line(row).startswith(case.group)


def test_every_group_has_cases_and_keys_are_unique():
    assert {c.group for c in CASES} == set(GROUPS)
    assert len({c.key for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_case_runs_once_at_a_tiny_size(case):
    assert_well_formed(run_case(case, timing.ONCE, tiny=True), case)


def test_suite_times_each_library_in_its_own_worker_and_reports_from_saved_json():
    cases = [c for c in CASES if c.group in ("autograd", "matmul")]
    run = run_suite(cases, timing.ONCE, tiny=True, command="python -m benchmarks --quick")
    for row, c in zip(run["rows"], cases):
        assert_well_formed(row, c)
    text = report.to_markdown(json.loads(json.dumps(run)))  # what report.py reads back
    assert text.startswith("# learntorch benchmarks")
    assert "## Machine" in text and "## Targets" in text and "`python -m benchmarks --quick`" in text
    for c in cases:
        assert f"| {c.name} |" in text
    assert text.count("| matmul ") >= 3  # the three matmul targets


def test_a_failing_case_becomes_an_error_row_not_a_crash():
    from benchmarks.suite import Case

    def broken():
        raise NotImplementedError("op not written yet")
    run = run_suite([Case("matmul", "broken", broken, {}, {})], timing.ONCE, tiny=True,
                    isolated=False)
    (row,) = run["rows"]
    assert row["error"] == "NotImplementedError: op not written yet"
    assert "error: NotImplementedError" in report.to_markdown(run)


def test_a_worker_for_learntorch_never_imports_torch():
    probe = ("import sys, benchmarks.suite as s; s.all_cases(); "
             "print(s.torch is None and 'torch' not in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).resolve().parents[1],
                          env={**os.environ, "BENCHMARKS_LIBRARY": "learntorch"},
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


class FakeClock:
    """Stands in for time.perf_counter: each call of the timed function takes 1 ms."""
    def __init__(self):
        self.now, self.calls = 0.0, 0

    def __call__(self):
        return self.now

    def op(self):
        self.now += 0.001
        self.calls += 1


def test_harness_calibrates_loops_to_the_target_duration(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(timing.time, "perf_counter", clock)
    # 1 call: 1 ms, 10 calls: 10 ms, 100 calls: 100 ms >= a tenth of 0.2 s -> scale to 200
    assert timing.calibrate(clock.op, 0.2) == 200
    result = timing.measure(clock.op, timing.Settings(seconds=0.2, repeats=3, warmup=2))
    assert (result.loops, result.repeats) == (200, 3)
    assert result.median == pytest.approx(0.001) and result.min == pytest.approx(0.001)


def test_sampled_contenders_report_their_own_seconds():
    samples = iter([0.3, 0.1, 0.2])
    result = timing.measure(timing.Sampled(lambda: next(samples)),
                            timing.Settings(seconds=1.0, repeats=3, warmup=0))
    assert (result.median, result.min, result.loops) == (0.2, 0.1, 1)


def test_only_selects_cases_by_group_or_name(capsys):
    assert main(["--list", "--only", "matmul", "--only", "softmax"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed and all("matmul" in line or "softmax" in line for line in listed)
    assert main(["--only", "no-such-case"]) == 2


def test_profile_tables_name_the_ops_of_both_training_steps():
    from benchmarks.profile_steps import profile_tables
    text = profile_tables(steps=1, tiny=True)
    mlp, cnn = text.split("CNN,")
    for name in ("Linear", "LinearBackward0", "ReluBackward0", "CrossEntropyLoss", "train_step"):
        assert f" {name} " in mlp
    for name in ("Convolution", "ConvolutionBackward0", "MaxPool2DWithIndicesBackward0"):
        assert f" {name} " in cnn
