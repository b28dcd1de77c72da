"""RingAllReduce's live view: Previous / Step / Reset, a Play button, a step slider, the picture
of the ranks and the step in words.

The controls only call the state object (``RingAllReduce``) and redraw; the
slider is the one source of truth for the step shown (the buttons and Play move
it, its observer does the work), as in the BackpropStepper's view.
"""
from html import escape

import ipywidgets


class RingView:
    """The widgets of one ring; ``box`` is what Jupyter displays.

    >>> from widgets import RingAllReduce
    >>> view = RingView(RingAllReduce(world_size=2, numel=4))
    >>> view.step_button.click()
    >>> view.slider.value, view.ring.position
    (1, 1)
    """

    def __init__(self, ring):
        self.ring = ring
        self.previous_button = ipywidgets.Button(description="Previous", icon="step-backward",
                                                 tooltip="Show the step before")
        self.step_button = ipywidgets.Button(
            description="Step", icon="step-forward", button_style="primary",
            tooltip="Every rank sends one chunk to its right neighbour")
        self.reset_button = ipywidgets.Button(description="Reset", icon="undo",
                                              tooltip="Back to before the first step")
        self.slider = ipywidgets.IntSlider(
            value=ring.position, min=0, max=ring.n_steps, description="step",
            tooltip="How many steps of the ring have run (0 = none)",
            layout=ipywidgets.Layout(width="320px"))
        self.play = ipywidgets.Play(value=ring.position, min=0, max=ring.n_steps, interval=1200,
                                    description="play", tooltip="Run the ring step by step")
        # a kernel-side link (works headless too, unlike jslink)
        self._play_link = ipywidgets.link((self.play, "value"), (self.slider, "value"))
        self.picture = ipywidgets.HTML(layout=ipywidgets.Layout(width="100%"))
        self.panel = ipywidgets.HTML(layout=ipywidgets.Layout(width="100%"))

        self.previous_button.on_click(lambda _: self._move(ring.position - 1))
        self.step_button.on_click(lambda _: self._move(ring.position + 1))
        self.reset_button.on_click(lambda _: self._reset())
        self.slider.observe(self._slider_moved, names="value")
        controls = ipywidgets.HBox([self.previous_button, self.step_button, self.reset_button,
                                    self.play, self.slider])
        self.box = ipywidgets.VBox([controls, self.picture, self.panel])
        self.redraw()

    def _move(self, position):
        # the slider clamps to its range; its observer moves the ring and redraws
        self.slider.value = max(0, min(position, self.ring.n_steps))

    def _reset(self):
        self.play.playing = False  # a running Play would start stepping again at once
        self._move(0)

    def _slider_moved(self, change):
        self.ring.go_to(change["new"])
        self.redraw()

    def redraw(self):
        """The picture and the words for the step the ring shows."""
        ring = self.ring
        if self.slider.value != ring.position:  # moved in code (ring.step()): follow it
            self.slider.value = ring.position
            return
        self.picture.value = ring.static_svg()
        self.panel.value = ("<pre style='white-space:pre-wrap;margin:0'>"
                            f"{escape(ring.describe())}</pre>")
        self.previous_button.disabled = ring.position == 0
        self.step_button.disabled = ring.position == ring.n_steps
