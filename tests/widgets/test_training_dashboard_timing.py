"""TrainingDashboard's clock: the text progress line, ETA, throughput and throttled redraws.

The dashboard reads time only from its ``clock``; here that clock is a list
cell the test moves by hand, so every duration is an exact number (binary
fractions: 0.125 s steps add up without rounding).
"""
import io

import pytest

from widgets.training_dashboard import PLOT_BUDGET, TrainingDashboard, duration, smoothed


class Terminal(io.StringIO):
    """A stream that says it is a terminal: the line is rewritten in place with \\r."""

    def isatty(self):
        return True


def _run_epochs(dash, now, epochs, steps, seconds_per_step, batch_size=10):
    for e in range(epochs):
        for k in range(steps):
            now[0] += seconds_per_step
            dash.step(loss=0.5 / (e + 1), accuracy=0.75, batch_size=batch_size)
        dash.epoch_end(val_loss=0.6 / (e + 1), val_accuracy=0.7)


def test_log_file_gets_one_line_per_epoch_with_eta_and_throughput():
    now, out = [0.0], io.StringIO()
    dash = TrainingDashboard(epochs=2, steps_per_epoch=4, mode="text", stream=out, clock=lambda: now[0])
    _run_epochs(dash, now, epochs=2, steps=4, seconds_per_step=0.5)
    dash.close()
    # epoch 1: 4 steps of 10 samples in 2 s -> 20 samples/s; 4 steps left at 0.5 s each -> ETA 0:02
    assert out.getvalue().splitlines() == [
        "epoch 1/2  [####################] 4/4  loss 0.5000  acc 0.750  val_loss 0.6000  val_acc 0.700  "
        "20.0 samples/s  ETA 0:02",
        "epoch 2/2  [####################] 4/4  loss 0.2500  acc 0.750  val_loss 0.3000  val_acc 0.700  "
        "20.0 samples/s  ETA 0:00",
    ]


def test_eta_and_throughput_follow_the_clock():
    now = [0.0]
    dash = TrainingDashboard(epochs=10, steps_per_epoch=100, mode="text", stream=io.StringIO(),
                             clock=lambda: now[0])
    assert dash.eta() is None and dash.throughput() is None      # nothing measured yet
    for _ in range(50):
        now[0] += 0.25
        dash.step(loss=1.0, batch_size=64)
    assert dash.throughput() == pytest.approx(64 * 50 / 12.5)
    assert dash.eta() == pytest.approx(950 * 0.25)                # 950 steps left, 0.25 s each
    assert "256.0 samples/s  ETA 3:58" in dash.progress_line()   # 237.5 s
    assert "[##########..........] 50/100" in dash.progress_line()
    unknown = TrainingDashboard(mode="text", stream=io.StringIO(), clock=lambda: now[0])
    now[0] += 1
    unknown.step(loss=1.0)                                        # no batch size, no total
    assert unknown.eta() is None and unknown.progress_line().endswith("step 1  loss 1.0000  1.0 steps/s")


def test_terminal_line_is_rewritten_in_place_and_kept_at_each_epoch_end():
    now, out = [0.0], Terminal()
    dash = TrainingDashboard(epochs=1, steps_per_epoch=4, mode="text", stream=out, clock=lambda: now[0],
                             redraw_every=0.25)
    _run_epochs(dash, now, epochs=1, steps=4, seconds_per_step=0.125)
    dash.close()
    text = out.getvalue()
    # steps at 0.25 s and 0.5 s redraw; the epoch end redraws and ends the line; close adds nothing
    assert text.count("\r") == 3 and text.count("\n") == 1 and text.endswith("ETA 0:00\x1b[K\n")
    assert "\r" + "epoch 1/1  [##########..........] 2/4" in text


def test_close_prints_the_unfinished_epoch_once():
    now, out = [0.0], io.StringIO()
    dash = TrainingDashboard(epochs=3, steps_per_epoch=4, mode="text", stream=out, clock=lambda: now[0])
    for _ in range(2):
        now[0] += 1.0
        dash.step(loss=0.5)
    assert out.getvalue() == ""                   # a log file gets no half lines while training
    with dash:                                    # leaving the with block closes it
        pass
    dash.close()
    assert out.getvalue().splitlines() == ["epoch 1/3  [##########..........] 2/4  loss 0.5000  "
                                           "1.0 steps/s  ETA 0:10"]


@pytest.mark.parametrize("seconds_per_step, redraw_every, steps, redraws", [
    (0.0625, 0.25, 20, 5),    # a redraw every 4th step
    (0.5, 0.25, 6, 6),        # slow steps: every step
    (0.0, 0.25, 1000, 0),     # a frozen clock: never (until an epoch ends)
])
def test_redraws_are_throttled_by_wall_time(seconds_per_step, redraw_every, steps, redraws):
    now = [0.0]
    dash = TrainingDashboard(mode="text", stream=Terminal(), clock=lambda: now[0], redraw_every=redraw_every)
    for _ in range(steps):
        now[0] += seconds_per_step
        dash.step(loss=1.0)
    assert dash.redraws == redraws
    dash.epoch_end()
    assert dash.redraws == redraws + 1           # an epoch end always redraws the progress


def test_curves_take_at_most_their_share_of_the_time():
    now = [0.0]
    dash = TrainingDashboard(model=None, mode="widget", display=False, clock=lambda: now[0], redraw_every=0.125)
    dash.view()
    render_seconds = 0.0625

    def slow_render():                            # a render that costs 62.5 ms of (fake) wall time
        now[0] += render_seconds
        return "<svg/>"

    dash._render_svg = slow_render
    for _ in range(400):
        now[0] += 0.125
        dash.step(loss=1.0)
    assert dash.redraws == 400                     # the progress bar: every step (cheap)
    spent = dash.plot_redraws * render_seconds
    assert spent <= PLOT_BUDGET * now[0] + render_seconds
    assert spent >= 0.8 * PLOT_BUDGET * now[0]   # and it uses most of its share (steps are discrete)


def test_helpers_for_time_and_smoothing():
    assert [duration(s) for s in (0, 59.6, 61, 3600)] == ["0:00", "1:00", "1:01", "1:00:00"]
    assert smoothed([2.0, 4.0], 0.0).tolist() == [2.0, 4.0]
    # bias-corrected EMA: (0.5*0.5*2 + 0.5*4) / (1 - 0.25) = 10/3
    assert smoothed([2.0, 4.0], 0.5).tolist() == pytest.approx([2.0, 10 / 3])
