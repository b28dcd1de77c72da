"""Where a training step's time goes: the MLP and CNN steps of bench_training under
``learntorch.profiler``, one table each (``python -m benchmarks --profile``).

The ratios in BENCHMARKS.md say *how much* slower or faster a step is; these
tables say *which op* to look at: forward rows are named after the op (``Linear``),
backward rows after its graph node (``LinearBackward0``).
"""
import learntorch
from learntorch.profiler import profile, record_function

from .bench_training import _batch, _seeded, cnn, mlp, train_step


def _profiled(name, model, x, y, steps, row_limit):
    step = train_step(learntorch, model, x, y)
    for _ in range(3):  # compile the kernels and fill the caches first: measure steady steps
        step()
    with profile(record_shapes=False) as prof:
        for _ in range(steps):
            with record_function("train_step"):
                step()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=row_limit)
    return f"{name}: {steps} steps\n{table}"


def profile_tables(steps=20, row_limit=15, tiny=False):
    """The text of both tables (``tiny``: small inputs, for the smoke test)."""
    batch, inputs, size = (4, 16, 8) if tiny else (128, 784, 28)
    x, y = _batch(batch, inputs)
    mlp_model = _seeded(learntorch, mlp, (inputs, 256, 128, 10))
    xc, yc = _batch(min(batch, 32), 1, size, size)
    cnn_model = _seeded(learntorch, cnn, size)
    return "\n".join([
        _profiled(f"MLP {inputs}-256-128-10, batch {batch}", mlp_model, x, y, steps, row_limit),
        _profiled(f"CNN, {min(batch, 32)}×1×{size}×{size}", cnn_model, xc, yc, steps, row_limit),
    ])
