"""The ipywidgets view of show_compiled only calls the state object: the mode buttons
and the kernel dropdown change the picture and the source shown beside it."""
import learntorch
import learntorch.nn.functional as F
from widgets import show_compiled


def compiled_layer():
    f = learntorch.compile(lambda x, W, b: F.gelu(x @ W + b) * 0.5)
    f(learntorch.randn(4, 3), learntorch.randn(3, 5), learntorch.randn(5))
    return f


def test_the_mode_buttons_redraw_the_picture():
    view = show_compiled(compiled_layer())
    view.view()
    before = view._picture.value
    view._controls["mode"].value = "before"
    assert view.mode == "before" and view._picture.value != before
    assert "kernel_0" not in view._picture.value


def test_the_kernel_dropdown_shows_that_kernels_source():
    view = show_compiled(compiled_layer())
    view.view()
    assert "def kernel_0" in view._source.value
    view._controls["kernel"].value = -1
    assert view.selected is None and "Choose a kernel" in view._source.value


def test_the_view_states_the_memory_traffic():
    view = show_compiled(compiled_layer())
    view.view()
    assert "Memory traffic:" in view._info.value and "after fusion" in view._info.value


def test_displaying_sends_the_static_picture_and_the_live_view():
    bundle = show_compiled(compiled_layer())._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
    assert "application/vnd.jupyter.widget-view+json" in bundle
