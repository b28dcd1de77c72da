"""benchmarks/calibrate.py: the measurement that writes tuning.json, run on tiny sizes."""
import json

from benchmarks import calibrate
from learntorch.backends.numba_cpu import tuning


def test_threshold_is_the_smallest_size_from_which_the_kernel_always_won():
    rows = [(100, 1.0, 2.0), (1000, 2.0, 1.0), (10_000, 1.0, 1.5), (100_000, 3.0, 1.0),
            (1_000_000, 9.0, 2.0)]
    assert calibrate.threshold(rows) == 100_000
    assert calibrate.threshold([(100, 1.0, 1.0), (1000, 1.0, 1.0)]) is None


def test_no_threshold_is_below_a_thousand_elements_however_early_the_kernel_wins():
    rows = [(100, 5.0, 1.0), (1000, 5.0, 1.0), (10_000, 5.0, 1.0)]
    assert calibrate.threshold(rows) == calibrate.SMALLEST_MIN_SIZE == 1000


def test_a_crossover_row_times_numpy_and_the_kernel_for_each_size():
    rows = calibrate.crossover("relu", sizes=(100, 1000))
    assert [r[0] for r in rows] == [100, 1000]
    assert all(t_numpy > 0 and t_kernel > 0 for _, t_numpy, t_kernel in rows)


def test_the_tuning_file_holds_every_key_the_defaults_have_and_the_machine(tmp_path):
    on_disk = json.loads(open(tuning.PATH, encoding="utf-8").read())
    assert "measured_on" in on_disk["machine"]
    for group, values in tuning.DEFAULTS.items():
        assert group in on_disk
        if isinstance(values, dict):
            assert set(values) <= set(on_disk[group]), group
    assert set(calibrate.CALLS) == set(tuning.DEFAULTS["min_sizes"])


def test_a_missing_or_partial_file_falls_back_to_the_defaults_key_by_key(tmp_path):
    partial = tmp_path / "tuning.json"
    partial.write_text(json.dumps({"min_sizes": {"relu": 123}, "parallel_min_ns": 5}))
    table = tuning.load(str(partial))
    assert table["min_sizes"]["relu"] == 123 and table["parallel_min_ns"] == 5
    assert table["min_sizes"]["softmax"] == tuning.DEFAULTS["min_sizes"]["softmax"]
    assert tuning.load(str(tmp_path / "absent.json")) == tuning.DEFAULTS
