"""Measure the figures of saving and deploying on this machine, and print them.

    python scripts/deploy_figures.py            # trains the digits MLP and CNN first (~1 min)
    python scripts/deploy_figures.py --quick    # 2 epochs each

* ONNX export of the trained digits CNN and MLP (examples/train_digits.py): the time of
  ``learntorch.onnx.export`` -- the first one in the process, which imports the onnx
  package, and the median of the next five -- and the largest difference between ONNX
  Runtime's outputs and learntorch's over 100 test images and 100 random inputs;
* learntorch.load of a 1 MB zip bomb that would inflate to a 1 GiB tensor: the peak
  memory allocated while refusing it (tracemalloc; numpy reports its arrays to it).

A measurement, not a test: the numbers depend on the machine and what else runs on it.
"""
import argparse
import importlib.util
import io
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "deploy"))


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits", ROOT / "examples" /
                                                  "train_digits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export_figures(name, example, epochs, first):
    import learntorch
    result = example.train(name, epochs=epochs, log=None)
    model = result["model"].eval()
    images = learntorch.cat([x for x, _ in result["test_loader"]])[:100]
    timings = []
    for _ in range(6):
        start = time.perf_counter()
        buf = io.BytesIO()
        learntorch.onnx.export(model, images[:1], buf, input_names=["image"],
                               output_names=["logits"],
                               dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
        timings.append(time.perf_counter() - start)
    import onnxruntime
    session = onnxruntime.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    worst = 0.0
    for x in (images, learntorch.randn(100, 1, 8, 8)):
        with learntorch.no_grad():
            expected = model(x).numpy()
        got = session.run(None, {"image": x.numpy()})[0]
        worst = max(worst, float(np.abs(got - expected).max()))
    label = "first export (imports onnx)" if first else "first export"
    print(f"{name}: test accuracy {result['test_accuracy']:.4f}; {label} "
          f"{timings[0]:.3f} s, then median {statistics.median(timings[1:]):.3f} s "
          f"(min {min(timings[1:]):.3f}); max |ONNX Runtime - learntorch| over 100 test "
          f"images and 100 random inputs: {worst:.2e}")


def zip_bomb_figure():
    import learntorch
    import zip_files as zf
    data = zf.zip_bomb(1 << 30)
    tracemalloc.start()
    try:
        learntorch.load(io.BytesIO(data))
    except learntorch.serialization.LoadError as e:
        message = str(e)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"zip bomb: {len(data):,} bytes on disk, a 1 GiB tensor declared; "
          f"refused with peak memory {peak / 1024:.0f} KiB allocated during load\n  {message}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="train 2 epochs instead of 10")
    args = parser.parse_args()
    example = load_example()
    epochs = 2 if args.quick else None
    export_figures("cnn", example, epochs, first=True)
    export_figures("mlp", example, epochs, first=False)
    zip_bomb_figure()


if __name__ == "__main__":
    main()
