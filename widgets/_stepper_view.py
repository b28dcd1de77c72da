"""The BackpropStepper's live view: Previous / Next / Reset, a Play button, a step slider,
the graph picture and the step's numbers.

The controls only call the state object (``BackpropStepper``) and then redraw;
the slider is the one source of truth for the position shown, so the buttons and
Play move it and its observer does the work.  Everything is standard ipywidgets 8
(no custom JavaScript): it runs in JupyterLab, Notebook 7, VS Code and Binder.
"""
import ipywidgets

from . import _stepper_text as text
from ._svg_fit import fit_width

class StepperView:
    """The widgets of one stepper; ``box`` is what Jupyter displays.

    >>> import learntorch as torch
    >>> from widgets import BackpropStepper
    >>> w = torch.ones(2, requires_grad=True)
    >>> view = StepperView(BackpropStepper((w * 3).sum()))
    >>> view.next_button.click()
    >>> view.slider.value
    1
    """

    def __init__(self, stepper):
        self.stepper = stepper
        self.previous_button = ipywidgets.Button(
            description="Previous", icon="step-backward",
            tooltip="Show the step before (recorded: the engine cannot un-run a node)")
        self.next_button = ipywidgets.Button(
            description="Next", icon="step-forward", button_style="primary",
            tooltip="Run the engine's next node of backward")
        self.reset_button = ipywidgets.Button(
            description="Reset", icon="undo",
            tooltip="Back to step 0: every leaf's .grad as it was before backward (the steps stay recorded)")
        self.slider = ipywidgets.IntSlider(
            value=stepper.position, min=0, max=stepper.n_steps, description="step",
            tooltip="How many nodes of backward have run (0 = none)",
            layout=ipywidgets.Layout(width="320px"))
        self.play = ipywidgets.Play(
            value=stepper.position, min=0, max=stepper.n_steps, interval=900,
            description="play", tooltip="Run backward node by node")
        # a kernel-side link: Play moves the slider, the slider's observer moves the stepper
        # (it works headless too, unlike jslink)
        self._play_link = ipywidgets.link((self.play, "value"), (self.slider, "value"))
        self.picture = ipywidgets.HTML(layout=ipywidgets.Layout(width="100%"))
        self.panel = ipywidgets.HTML(layout=ipywidgets.Layout(width="100%"))
        self.error = None

        self.previous_button.on_click(lambda _: self._do(stepper.previous))
        self.next_button.on_click(lambda _: self._do(stepper.step))
        self.reset_button.on_click(lambda _: self._reset())
        self.slider.observe(self._slider_moved, names="value")

        controls = ipywidgets.HBox([self.previous_button, self.next_button, self.reset_button,
                                    self.play, self.slider])
        # the graph is drawn left to right and can be wide: the numbers go under it
        self.box = ipywidgets.VBox([controls, self.picture, self.panel])
        self.redraw()

    def _do(self, action):
        """Run a state method, then show its position (the slider's observer redraws)."""
        self.error = None
        try:
            action()
        except RuntimeError as error:  # e.g. the graph was freed by an earlier backward()
            self.error = f"{type(error).__name__}: {error}"
        self._show_position()

    def _reset(self):
        self.play.playing = False  # a running Play would start stepping again at once
        self._do(self.stepper.reset)

    def _slider_moved(self, change):
        self.error = None
        try:
            self.stepper.go_to(change["new"])
        except RuntimeError as error:
            self.error = f"{type(error).__name__}: {error}"
        self._show_position()

    def _show_position(self):
        stepper = self.stepper
        # the engine may finish earlier than walk() predicted (a node that got no gradient)
        for control in (self.slider, self.play):
            control.max = stepper.n_steps
        if self.slider.value != stepper.position:
            self.slider.value = stepper.position  # its observer comes back here and redraws
            return
        self.redraw()

    def redraw(self):
        """Draw the picture and the numbers for the position the stepper shows."""
        stepper = self.stepper
        # shrunk to the output's width, so the node running now is never off-screen
        self.picture.value = fit_width(stepper.static_svg())
        self.panel.value = text.panel_html(stepper.headline(), stepper.step_lines(),
                                           stepper.leaf_lines(), note=self.error)
        self.previous_button.disabled = stepper.position == 0
        self.next_button.disabled = stepper.finished

