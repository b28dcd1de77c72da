"""Widget responsiveness: the kernel's time for one redraw after a step, a slider move or a play frame.

A control in a widget's view (a slider, a Next or Step button, a Play frame)
calls the state object, which then replaces the picture the view shows.  Each
case drives the real control of a chapter-sized widget -- found in its view by
the description the learner reads, as the browser test does -- and times the
callback up to the moment the new picture is set: what the learner waits for
before the browser draws (the browser's own drawing is not included).  The goal
is ≤ 100 ms per redraw (Targets table).  numpy and PyTorch have no widgets:
their columns stay empty.

Graph pictures are cached per DOT text (showing a picture again is instant), so
the graph cases build a new graph for every measurement and time first visits:
the wait a learner has when a node is drawn for the first time.
"""
import itertools
import time

from .suite import ONLY_LIBRARY, Contenders, Metric, Target, case
from .timing import Sampled

FAST_ENOUGH = 0.1  # seconds: a redraw the learner perceives as immediate


def milliseconds_per_redraw():
    return Metric("ms/redraw", 1, per_second=False, scale=1e-3)


def redraw_target(what):
    """The goal, read in milliseconds: the median redraw is at most ``FAST_ENOUGH``."""
    def check(row):
        seconds = row["seconds"]["learntorch"]["median"]
        return f"{seconds * 1e3:.3g} ms", seconds <= FAST_ENOUGH
    return Target(f"{what} redraws in ≤ {FAST_ENOUGH * 1e3:.0f} ms", check)


def timed_by_learntorch_only(build):
    """The case's Contenders; ``build()`` (the widget) runs only where learntorch is timed.

    Each library is timed in its own worker process, which builds the case; the
    numpy and PyTorch workers have nothing to time here, so they skip the work.
    """
    learntorch = build() if ONLY_LIBRARY in (None, "learntorch") else None
    return Contenders(learntorch=learntorch, metric=milliseconds_per_redraw())


def control(view, kind, description):
    """The control of type ``kind`` labelled ``description`` in an ipywidgets view tree."""
    pending = [view]
    while pending:
        widget = pending.pop(0)
        if isinstance(widget, kind) and getattr(widget, "description", None) == description:
            return widget
        pending.extend(getattr(widget, "children", ()))
    raise LookupError(f"no {kind.__name__} labelled {description!r} in the view")


# how many widgets the cases have made in this process (see per_action_on_fresh_widgets)
_WIDGETS_MADE = itertools.count()


def per_action_on_fresh_widgets(make, act):
    """A ``Sampled`` contender: each sample makes a new widget (untimed), then times ``act``.

    ``make(k)`` builds the k-th widget (k = 0, 1, ...: each one different, so that
    no picture of an earlier sample is in a cache) and returns its control;
    ``act(control)`` does every action it can and returns how many it did.
    The sample is the mean time per action.  ``k`` counts on across every call in the
    process: the runner builds the case again for each round of measurements, and a
    count that started again at 0 would make the widgets of round one again -- pictures
    the cache already holds, timed as if they were first visits.
    """
    def sample():
        target = make(next(_WIDGETS_MADE))
        start = time.perf_counter()
        actions = act(target)
        return (time.perf_counter() - start) / actions
    return Sampled(sample)


def visit_every_node(slider):
    """Move a graph picture's node slider to every node in turn; how many it visited."""
    nodes = [value for _, value in slider.options][1:]  # the first is "none"
    for value in nodes:
        slider.value = value
    return len(nodes)


def small_mlp_loss(hidden, batch):
    """The loss of a chapter-sized MLP (2 -> hidden -> hidden -> 1, tanh) on a random batch."""
    import learntorch as torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, hidden), torch.nn.Tanh(),
                                torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                                torch.nn.Linear(hidden, 1))
    x, y = torch.randn(batch, 2), torch.randn(batch, 1)
    return model, torch.nn.functional.mse_loss(model(x), y)


@case("show_graph: small MLP, node slider moved one node (first visit)", hidden=8, batch=16,
      tiny=dict(hidden=2, batch=2), target=redraw_target("show_graph's node slider"))
def graph_node_slider(hidden, batch):
    def build():
        import ipywidgets
        from widgets import show_graph

        def make(k):
            # a new batch size per sample: new shape labels, a DOT text not seen before
            model, loss = small_mlp_loss(hidden, batch + k)
            return control(show_graph(loss, model=model).view(), ipywidgets.SelectionSlider,
                           "node")

        return per_action_on_fresh_widgets(make, visit_every_node)
    return timed_by_learntorch_only(build)


def digits_cnn_program(channels):
    """The chapters' digits CNN (conv, conv, pool, linear) with ``channels`` in its first
    convolution, exported to ONNX with a dynamic batch: what chapter 09 draws."""
    import learntorch as torch
    from learntorch import nn

    torch.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(),
                        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(32 * 4 * 4, 10))
    return torch.onnx.export(cnn, (torch.zeros(1, 1, 8, 8),), None, input_names=["images"],
                             output_names=["logits"],
                             dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})


@case("show_program: the digits CNN exported to ONNX, node slider moved one node (first visit)",
      channels=16, tiny=dict(channels=2), target=redraw_target("show_program's node slider"))
def program_node_slider(channels):
    def build():
        import ipywidgets
        from widgets import show_program

        def make(k):
            # more channels per sample: new initializer shapes, a DOT text not seen before
            program = digits_cnn_program(channels + k)
            return control(show_program(program).view(), ipywidgets.SelectionSlider, "node")

        return per_action_on_fresh_widgets(make, visit_every_node)
    return timed_by_learntorch_only(build)


@case("BackpropStepper: small MLP, Next (one node of backward)", hidden=8, batch=16,
      tiny=dict(hidden=2, batch=2), target=redraw_target("BackpropStepper's Next"))
def stepper_next(hidden, batch):
    def build():
        import ipywidgets
        from widgets import BackpropStepper

        def make(k):
            # Next runs the engine's next node, which cannot be repeated on one stepper:
            # every sample steps a new stepper from the first node to the last
            model, loss = small_mlp_loss(hidden, batch + k)
            stepper = BackpropStepper(loss, params=dict(model.named_parameters()))
            return control(stepper.view(), ipywidgets.Button, "Next")

        def click_to_the_end(next_button):
            clicks = 0
            while not next_button.disabled:
                next_button.click()
                clicks += 1
            return clicks
        return per_action_on_fresh_widgets(make, click_to_the_end)
    return timed_by_learntorch_only(build)


@case("OptimizerExplorer: Rosenbrock, 4 optimizers, one Play frame", optimizers=4,
      tiny=dict(optimizers=1), target=redraw_target("OptimizerExplorer's Play frame"))
def optimizer_play_frame(optimizers):
    def build():
        import ipywidgets
        from widgets import OptimizerExplorer

        # max_steps: room for every frame the harness plays (Play stops there)
        explorer = OptimizerExplorer("rosenbrock", max_steps=1_000_000,
                                     optimizers=["SGD", "Momentum", "RMSprop", "Adam"][:optimizers])
        play = control(explorer.view(), ipywidgets.Play, "play")

        def next_frame():
            play.value += 1  # what the front end's Play sends on each tick
        return next_frame
    return timed_by_learntorch_only(build)


@case("TrainingDashboard: one step that redraws the curves (250 steps logged)", logged=250,
      tiny=dict(logged=3), target=redraw_target("TrainingDashboard's step"))
def dashboard_step(logged):
    def build():
        import learntorch as torch
        from widgets import TrainingDashboard

        model, loss = small_mlp_loss(8, 16)
        loss.backward()  # the gradient norms per layer need .grad
        # the dashboard throttles its curve redraws by the clock it is given; this clock
        # jumps a minute before every timed step, so each one is a step that redraws
        now = [0.0]
        dashboard = TrainingDashboard(epochs=10, steps_per_epoch=50, model=model, grad_norms=True,
                                      mode="widget", display=False, clock=lambda: now[0])
        dashboard.view()
        losses = torch.rand(logged).tolist()
        for k, value in enumerate(losses):
            dashboard.step(loss=value, accuracy=1 - value, batch_size=16)
            if (k + 1) % 50 == 0:
                dashboard.epoch_end(val_loss=value, val_accuracy=1 - value)

        def step_that_redraws():
            now[0] += 60.0
            dashboard.step(loss=0.5, accuracy=0.5, batch_size=16)
        return step_that_redraws
    return timed_by_learntorch_only(build)


@case("TensorExplorer: 4×5 tensor, index slider moved one step", rows=4, cols=5,
      tiny=dict(rows=2, cols=2), target=redraw_target("TensorExplorer's index slider"))
def tensor_explorer_slider(rows, cols):
    def build():
        import ipywidgets
        import learntorch as torch
        from widgets import TensorExplorer

        explorer = TensorExplorer(torch.arange(float(rows * cols)).reshape(rows, cols))
        slider = control(explorer.view(), ipywidgets.IntSlider, "index dim 1")

        def move():
            slider.value = (slider.value + 1) % cols
        return move
    return timed_by_learntorch_only(build)


@case("ConvExplorer: 8×8 digit, 3×3 kernel, padding 1, position slider moved one step", padding=1,
      tiny=dict(padding=0), target=redraw_target("ConvExplorer's position slider"))
def conv_explorer_slider(padding):
    def build():
        import ipywidgets
        from widgets import ConvExplorer

        explorer = ConvExplorer(padding=padding)
        slider = control(explorer.view(), ipywidgets.IntSlider, "position")

        def move():
            slider.value = (slider.value + 1) % (slider.max + 1)
        return move
    return timed_by_learntorch_only(build)


@case("ConvExplorer.on_model: small CNN, feature-map channel slider moved one step", channels=16,
      tiny=dict(channels=2), target=redraw_target("ConvExplorer.on_model's channel slider"))
def feature_map_channel_slider(channels):
    def build():
        import ipywidgets
        import learntorch as torch
        from widgets import ConvExplorer

        torch.manual_seed(0)
        nn = torch.nn
        model = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU())
        maps = ConvExplorer.on_model(model, torch.rand(4, 1, 8, 8), layer="3")
        slider = control(maps.view(), ipywidgets.IntSlider, "channel")

        def move():
            slider.value = (slider.value + 1) % (slider.max + 1)
        return move
    return timed_by_learntorch_only(build)


@case("RingAllReduce: 4 ranks × 8 elements, Step clicked", world_size=4, numel=8,
      tiny=dict(world_size=2, numel=4), target=redraw_target("RingAllReduce's Step button"))
def ring_allreduce_step(world_size, numel):
    def build():
        import ipywidgets
        from widgets import RingAllReduce

        def make(k):
            view = RingAllReduce(world_size=world_size, numel=numel).view()
            return control(view, ipywidgets.Button, "Step")

        # every click draws a step not drawn before (the pictures are cached per step)
        def click_to_the_end(step_button):
            steps = 2 * (world_size - 1)
            for _ in range(steps):
                step_button.click()
            return steps
        return per_action_on_fresh_widgets(make, click_to_the_end)
    return timed_by_learntorch_only(build)


@case("show_compiled: gelu(x @ W + b) * 0.5, mode switched to before/after fusion", rows=16,
      tiny=dict(rows=2), target=redraw_target("show_compiled's mode buttons"))
def compile_view_mode(rows):
    def build():
        import ipywidgets
        import learntorch as torch
        from widgets import show_compiled

        layer = torch.compile(lambda x, W, b: torch.nn.functional.gelu(x @ W + b) * 0.5)
        layer(torch.randn(rows, 8), torch.randn(8, 32), torch.randn(32))
        view = show_compiled(layer)
        buttons = control(view.view(), ipywidgets.ToggleButtons, "graph")

        def switch():
            buttons.value = "before" if buttons.value == "after" else "after"
        return switch
    return timed_by_learntorch_only(build)


@case("QuantizationExplorer: a 128×64 weight, scale slider moved one step", rows=128, cols=64,
      tiny=dict(rows=4, cols=4), target=redraw_target("QuantizationExplorer's scale slider"))
def quantization_scale_slider(rows, cols):
    def build():
        import ipywidgets
        import learntorch as torch
        from widgets import QuantizationExplorer

        torch.manual_seed(0)
        explorer = QuantizationExplorer(torch.nn.Linear(cols, rows).weight)
        slider = control(explorer.view(), ipywidgets.FloatLogSlider, "scale")
        scales = itertools.cycle([explorer.scale * f for f in (0.5, 0.7, 1.0, 1.4, 2.0)])

        def move():
            slider.value = next(scales)  # a new grid: requantize, new error, new picture
        return move
    return timed_by_learntorch_only(build)


@case("KernelGrid: a 4×24 tensor's tree reduction, Step clicked", rows=4, cols=24,
      tiny=dict(rows=2, cols=4), target=redraw_target("KernelGrid's Step button"))
def kernel_grid_step(rows, cols):
    def build():
        import ipywidgets
        import numpy as np
        from widgets import KernelGrid

        x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) % 7

        def make(k):
            # the launch (in the simulator where there is no GPU) is made here, untimed
            view = KernelGrid(x + k, kernel="reduce").view()
            return control(view, ipywidgets.Button, "Step")

        def click_to_the_end(step_button):
            clicks = 0
            while not step_button.disabled:   # every round drawn for the first time
                step_button.click()
                clicks += 1
            return max(clicks, 1)
        return per_action_on_fresh_widgets(make, click_to_the_end)
    return timed_by_learntorch_only(build)


@case("ProfilerView: an MLP step's profile, rows slider moved", hidden=64,
      tiny=dict(hidden=8), target=redraw_target("ProfilerView's rows slider"))
def profiler_view_rows(hidden):
    def build():
        import ipywidgets
        import learntorch as torch
        from learntorch.profiler import profile
        from widgets import ProfilerView

        torch.manual_seed(0)
        mlp = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                  torch.nn.Linear(hidden, 10))
        with profile() as prof:
            torch.nn.functional.cross_entropy(mlp(torch.randn(64, 64)),
                                              torch.randint(0, 10, (64,))).backward()

        def make(k):
            return control(ProfilerView(prof, rows=1).view(), ipywidgets.IntSlider, "rows")

        def move_through_every_value(slider):
            for value in range(2, slider.max + 1):   # each a picture not drawn before
                slider.value = value
            return max(slider.max - 1, 1)
        return per_action_on_fresh_widgets(make, move_through_every_value)
    return timed_by_learntorch_only(build)


@case("PrecisionExplorer: a 64-128-10 MLP's gradients, loss-scale slider moved one step",
      hidden=128, tiny=dict(hidden=8), target=redraw_target("PrecisionExplorer's loss-scale slider"))
def precision_loss_scale_slider(hidden):
    def build():
        import ipywidgets
        import learntorch as torch
        from widgets import PrecisionExplorer

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                    torch.nn.Linear(hidden, 10))
        loss = torch.nn.functional.cross_entropy(model(torch.randn(64, 64)),
                                                 torch.randint(0, 10, (64,)))
        (loss * 1e-4).backward()
        explorer = PrecisionExplorer(model, dtype="float16")
        slider = control(explorer.view(), ipywidgets.FloatLogSlider, "loss scale")
        scales = itertools.cycle([2.0 ** k for k in (0, 4, 8, 12, 16, 20)])

        def move():
            slider.value = next(scales)  # cast again, count again, a new picture
        return move
    return timed_by_learntorch_only(build)
