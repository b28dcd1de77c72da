"""TrainingDashboard.history: a real training loop logs exactly what it passed in."""
import math

import numpy as np
import pytest

import learntorch as torch
from learntorch import nn
import learntorch.nn.functional as F
from learntorch.datasets import make_blobs
from widgets.training_dashboard import TrainingDashboard


def frozen_clock():
    """A clock that stands still (the timing specs live in test_training_dashboard_timing.py)."""
    return 0.0


def _blobs():
    """Three seeded 2-D blobs: 120 points, the first 96 for training."""
    x, y = make_blobs(n_samples=120, centers=3, seed=0)
    return torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.int64)


def train(dash, epochs=3, batch_size=32):
    """A plain PyTorch loop on three 2-D blobs, with the dashboard's two calls; returns what it logged."""
    x, y = _blobs()
    train_set = torch.utils.data.TensorDataset(x[:96], y[:96])
    loader = torch.utils.data.DataLoader(train_set, batch_size=batch_size, shuffle=False)
    model = dash.model
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    logged = {"loss": [], "accuracy": [], "batch_size": [], "val_loss": [], "val_accuracy": []}
    for epoch in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            out = model(xb)
            loss = F.cross_entropy(out, yb)
            loss.backward()
            opt.step()
            accuracy = (out.argmax(1) == yb).float().mean()
            dash.step(loss=loss, accuracy=accuracy, batch_size=len(xb))   # tensors are fine too
            logged["loss"].append(loss.item())
            logged["accuracy"].append(accuracy.item())
            logged["batch_size"].append(len(xb))
        with torch.no_grad():
            out = model(x[96:])
            val_loss = F.cross_entropy(out, y[96:]).item()
            val_accuracy = (out.argmax(1) == y[96:]).float().mean().item()
        dash.epoch_end(val_loss=val_loss, val_accuracy=val_accuracy)
        logged["val_loss"].append(val_loss)
        logged["val_accuracy"].append(val_accuracy)
    dash.close()
    return logged


def _model():
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))


def test_history_holds_every_step_and_epoch_that_was_logged(capsys):
    dash = TrainingDashboard(epochs=3, steps_per_epoch=3, model=_model(), mode="text", clock=frozen_clock)
    logged = train(dash, epochs=3, batch_size=40)     # 96 samples: batches of 40, 40, 16
    printed = capsys.readouterr().out.splitlines()    # text mode writes to sys.stdout by default
    assert [line.split("  ")[0] for line in printed] == ["epoch 1/3", "epoch 2/3", "epoch 3/3"]
    h = dash.history
    assert h["loss"] == pytest.approx(logged["loss"]) and len(h["loss"]) == 9
    assert h["accuracy"] == pytest.approx(logged["accuracy"])
    assert h["batch_size"] == [40, 40, 16] * 3
    assert h["epoch"] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert h["epoch_step"] == [3, 6, 9]
    assert h["val_loss"] == pytest.approx(logged["val_loss"])
    assert h["val_accuracy"] == pytest.approx(logged["val_accuracy"])
    # the epoch's training numbers are means over its samples (weighted by batch size)
    for e in range(3):
        losses, sizes = np.array(logged["loss"][3 * e:3 * e + 3]), np.array([40, 40, 16])
        assert h["epoch_loss"][e] == pytest.approx((losses * sizes).sum() / 96)
    assert h["loss"][-1] < h["loss"][0]               # it did train
    assert (dash.steps, dash.samples, dash.epoch) == (9, 288, 3)
    assert "grad_norms" not in h                       # not asked for


def test_missing_values_are_none_and_extra_metrics_stay_aligned():
    dash = TrainingDashboard(mode="text", clock=frozen_clock, stream=_Sink())
    dash.step(loss=1.0)
    dash.step(loss=0.5, lr=0.1)
    dash.step(loss=0.25)
    dash.epoch_end()
    dash.epoch_end(val_loss=0.3, note=2)
    h = dash.history
    assert h["accuracy"] == [None, None, None] and h["batch_size"] == [None, None, None]
    assert h["lr"] == [None, 0.1, None]
    assert h["epoch_loss"] == [pytest.approx(1.75 / 3), None]   # an epoch without steps has no mean
    assert h["val_loss"] == [None, 0.3] and h["note"] == [None, 2.0]
    assert h["epoch_accuracy"] == [None, None]


def test_a_metric_name_the_dashboard_uses_is_refused_with_the_fix():
    dash = TrainingDashboard(mode="text", clock=frozen_clock, stream=_Sink())
    with pytest.raises(ValueError, match="'val_loss' is a name the dashboard logs itself"):
        dash.step(loss=1.0, val_loss=2.0)


def test_bad_arguments_name_the_fix():
    with pytest.raises(ValueError, match=r"grad_norms=True needs the model"):
        TrainingDashboard(grad_norms=True, mode="text")
    with pytest.raises(ValueError, match=r"mode must be 'auto', 'widget' or 'text', got 'tty'"):
        TrainingDashboard(mode="tty")
    with pytest.raises(ValueError, match=r"smoothing must be in \[0, 1\), got 1"):
        TrainingDashboard(mode="text", smoothing=1)


def test_reset_forgets_everything_and_restarts_the_clock():
    now = [0.0]
    dash = TrainingDashboard(epochs=1, steps_per_epoch=2, mode="text", clock=lambda: now[0], stream=_Sink())
    now[0] = 5.0
    dash.step(loss=1.0, batch_size=4, lr=0.1)
    dash.reset()
    assert dash.steps == 0 and dash.history["loss"] == [] and "lr" not in dash.history
    now[0] = 6.0
    dash.step(loss=1.0, batch_size=4)
    assert dash.throughput() == pytest.approx(4 / 1.0)   # measured from the reset, not the start


def test_repr_is_deterministic_and_says_where_training_is():
    dash = TrainingDashboard(epochs=5, steps_per_epoch=100, mode="text", clock=frozen_clock, stream=_Sink())
    assert repr(dash) == "TrainingDashboard(epoch 1/5, step 0/100)"
    for _ in range(40):
        dash.step(loss=0.12344)
    assert repr(dash) == "TrainingDashboard(epoch 1/5, step 40/100, loss 0.1234)"
    dash.epoch_end(val_loss=0.2)
    assert repr(dash) == "TrainingDashboard(epoch 2/5, step 0/100, loss 0.1234, val_loss 0.2000)"
    free = TrainingDashboard(mode="text", clock=frozen_clock, stream=_Sink())
    free.step(loss=math.pi)
    assert repr(free) == "TrainingDashboard(epoch 1, step 1, loss 3.1416)"


class _Sink:
    """A stream that is not a terminal and keeps what was written."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return False
