"""A notebook exported to HTML keeps a picture of every widget.

An exported notebook has no kernel: a widget's live view cannot show there, so
each widget also sends a static SVG picture of its state in the same output
(``widgets._base``).  ``jupyter nbconvert --execute`` runs a small gallery,
which is then exported to HTML, the page a learner would share; every widget
must leave a picture that shows its state (not an empty frame) in that HTML.

nbconvert shows the live view instead of the picture only when the notebook
holds the widgets' state (JupyterLab does not save it by default); then every
view must find its model in that state, or the page would say "Error displaying
widget: model not found".  Both exports are checked.
"""
import base64
import json
import re
import subprocess
import sys
import textwrap

import nbformat
import pytest

# one cell per widget; the text each picture must contain proves it shows the state
CELLS = {
    "show_graph": ("""
        import learntorch as torch
        from widgets import show_graph, BackpropStepper, OptimizerExplorer
        from widgets import TrainingDashboard, TensorExplorer, momentum_phase_diagram
        torch.manual_seed(0)
        mlp = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        loss = torch.nn.functional.mse_loss(mlp(torch.randn(8, 3)), torch.randn(8, 1))
        show_graph(loss, model=mlp)
        """, ["MseLoss", "0.weight"]),
    "BackpropStepper": ("""
        stepper = BackpropStepper(loss, params=dict(mlp.named_parameters()))
        stepper.go_to(3)
        stepper
        """, ["gold, red border: the node running now"]),
    "OptimizerExplorer": ("""
        explorer = OptimizerExplorer("rosenbrock", optimizers=["SGD", "Adam"])
        explorer.step(20)
        explorer
        """, ["rosenbrock", "SGD", "Adam", "loss per step"]),
    # no close(): the end of the training cell must refresh the static picture
    "TrainingDashboard": ("""
        dashboard = TrainingDashboard(epochs=1, steps_per_epoch=8, model=mlp, grad_norms=True)
        for k in range(8):
            mlp.zero_grad()
            torch.nn.functional.mse_loss(mlp(torch.randn(8, 3)), torch.randn(8, 1)).backward()
            dashboard.step(loss=1.0 / (k + 1), accuracy=k / 8)
        """, ["gradient norm per layer (step 8)", "train (smoothed)"]),
    "TensorExplorer": ("""
        TensorExplorer(torch.arange(20.).reshape(4, 5))
        """, ["shape (4, 5), stride (5, 1)"]),
    "momentum_phase_diagram": ("""
        momentum_phase_diagram(condition_number=10, steps=50)
        """, ["momentum"]),
    "ConvExplorer": ("""
        from widgets import ConvExplorer
        explorer = ConvExplorer(padding=1, stride=2)
        explorer.select(5)
        explorer
        """, ["stride 2, dilation 1 -&gt; output 4x4", "im2col matrix: 16 rows"]),
    "ConvExplorer_on_model": ("""
        torch.manual_seed(0)
        cnn = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU())
        ConvExplorer.on_model(cnn, torch.rand(2, 1, 8, 8), channel=2, pixel=(3, 4))
        """, ["feature map (8x8)", "receptive field of pixel (3, 4): rows 2..4, cols 3..5"]),
}


def gallery():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"# export: {name}\n" + textwrap.dedent(code).strip())
                      for name, (code, _) in CELLS.items()]
    return notebook


def execute(tmp_path):
    """The gallery run by ``jupyter nbconvert --execute``: the notebook with its outputs and
    the widgets' state, as a notebook that saves it has."""
    path = tmp_path / "gallery.ipynb"
    nbformat.write(gallery(), path)
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=120", "--output", "executed.ipynb", str(path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return nbformat.read(tmp_path / "executed.ipynb", as_version=4)


def to_html(notebook):
    from nbconvert import HTMLExporter

    return HTMLExporter().from_notebook_node(notebook)[0]


def cells_of(html):
    """The HTML of each gallery cell (input and outputs), by the name in its first line."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"# export: (\w+)", html)]
    return {name: html[start:end] for (start, name), (end, _) in
            zip(starts, starts[1:] + [(len(html), None)])}


def svg_pictures(html):
    """The SVG pictures in some HTML: nbconvert writes them as data URIs (or inline)."""
    encoded = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    inline = re.findall(r'<div class="jp-RenderedSVG[^"]*"[^>]*>\s*(<svg.*?</svg>)', html, re.S)
    return [base64.b64decode(e).decode("utf-8") for e in encoded] + inline


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The executed gallery exported to HTML two ways: with the widgets' state, and
    without it (what a notebook saved by JupyterLab with its default settings holds)."""
    notebook = execute(tmp_path_factory.mktemp("export"))
    with_state = to_html(notebook)
    notebook.metadata.pop("widgets", None)
    return {True: with_state, False: to_html(notebook)}


def test_every_widget_leaves_its_static_picture_in_the_html(exported):
    html = exported[False]
    assert "Error displaying widget" not in html and "Traceback" not in html
    cells = cells_of(html)
    assert set(cells) == set(CELLS)
    for name, (_, texts) in CELLS.items():
        pictures = svg_pictures(cells[name])
        assert len(pictures) == 1, f"{name}: {len(pictures)} SVG pictures in the exported HTML"
        picture = pictures[0]
        assert "<svg" in picture
        for text in texts:
            assert text in picture, f"{name}: its picture lacks {text!r}"
    # the widgets' live views are not in the HTML: nothing left to fail to load
    assert "application/vnd.jupyter.widget-view+json" not in html


def test_with_widget_state_saved_every_view_finds_its_model(exported):
    html = exported[True]
    state = re.search(r'<script type="application/vnd.jupyter.widget-state\+json">\s*(.*?)\s*</script>',
                      html, re.S)
    assert state is not None, "nbconvert saved no widget state"
    models = json.loads(state.group(1))["state"]
    views = [json.loads(v) for v in re.findall(
        r'<script type="application/vnd.jupyter.widget-view\+json">\s*(.*?)\s*</script>', html, re.S)]
    # one live view per widget that has one (momentum_phase_diagram is a picture only)
    assert len(views) == len(CELLS) - 1
    assert all(view["model_id"] in models for view in views)
