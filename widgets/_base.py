"""What every learntorch widget shares: a state object with a lazily built view.

A widget here is two things:

* a **state object** (this class's subclasses): plain Python that holds the
  model -- the current step, the history, what to draw -- and that tests drive
  without a browser (``step()``, ``reset()``, ``history``, a deterministic
  ``__repr__``);
* a thin **ipywidgets view**, built the first time the object is displayed
  (``view()``), whose controls only call the state object's methods.

Displaying the object in Jupyter sends both the live view and a **static
picture** (SVG) of the current state in one output.  A live front end shows the
view; an exported notebook, GitHub or a notebook reopened without its kernel
shows the picture, so the output never becomes an empty "model not found".
"""
import io

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


class Widget:
    """Base class: subclasses implement ``_build_view()`` and ``static_svg()``."""

    _view = None  # the ipywidgets view, once built

    def view(self):
        """The ipywidgets view of this state object (built once, then reused)."""
        if self._view is None:
            self._view = self._build_view()
        return self._view

    def _build_view(self):
        raise NotImplementedError(f"{type(self).__name__} has no interactive view")

    def static_svg(self):
        """An SVG picture of the current state (text), or None when there is nothing to draw."""
        return None

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": repr(self)}
        svg = self.static_svg()
        if svg:
            bundle["image/svg+xml"] = svg
        try:
            view = self.view()
        except ImportError:  # ipywidgets missing: the picture and the text still show
            return bundle
        live = view._repr_mimebundle_() or {}
        if WIDGET_VIEW_MIME in live:
            bundle[WIDGET_VIEW_MIME] = live[WIDGET_VIEW_MIME]
        return bundle


def figure_to_svg(figure):
    """A matplotlib figure as SVG text, with a fixed hash salt so the output is deterministic."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "learntorch", "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
