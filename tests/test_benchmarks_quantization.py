"""benchmarks/quantization.py runs and reports size, accuracy and speed (timings not asserted:
on a shared machine they mean nothing; run the script on a quiet one)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not installed

from benchmarks import quantization  # noqa: E402


def test_one_epoch_and_two_repeats_give_every_figure_and_a_table():
    result = quantization.measure(repeats=2, epochs=1)
    sizes = result["sizes"]
    # the weights take one byte instead of four; the float biases keep 4 bytes each
    assert sizes["float32"]["tensor_bytes"] == 4 * (64 * 128 + 128 + 128 * 10 + 10)
    assert sizes["float32"]["tensor_bytes"] / sizes["int8"]["tensor_bytes"] > 3.5
    assert sizes["int8"]["file_bytes"] < sizes["float32"]["file_bytes"]
    assert abs(result["accuracy"]["float32"] - result["accuracy"]["int8"]) <= 0.02
    for timing in result["seconds_per_forward"].values():
        assert timing["repeats"] == 2 and 0 < timing["min"] <= timing["median"] <= timing["max"]
    table = quantization.report(result)
    assert "weights in memory (bytes)" in table and "learntorch int8" in table
