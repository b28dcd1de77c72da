"""ConvExplorer: a convolution as a sliding window, and as one row of the im2col matrix.

A 2-D convolution slides a kernel over a (padded) image; at every stop it
multiplies the kernel with the pixels under it and adds the products up: that
sum is one pixel of the output.  ``padding`` puts a border of zeros around the
image, ``stride`` is how far the window jumps between stops, ``dilation``
spreads the kernel's taps apart.  The output has

    Ho = (H + 2·padding - dilation·(kh - 1) - 1) // stride + 1

rows (and the same for the columns).  The engine computes all stops at once:
``im2col`` copies every window into one row of a matrix (one row per output
pixel, one column per kernel tap), and the convolution is that matrix times the
kernel flattened into a column.

    >>> import learntorch as torch
    >>> from widgets import ConvExplorer
    >>> image = torch.arange(16.).reshape(4, 4)
    >>> explorer = ConvExplorer(image, torch.ones(2, 2), padding=0, stride=2)
    >>> explorer
    ConvExplorer(input 4x4, kernel 2x2, padding 0, stride 2, dilation 1 -> output 2x2, position 0 = (0, 0): 10)
    >>> explorer.select(3)
    >>> explorer.multiply_add()
    '10·1 + 11·1 + 14·1 + 15·1 = 50'
    >>> explorer.im2col_matrix()[3].tolist()
    [10.0, 11.0, 14.0, 15.0]

The output and the im2col matrix come from the active backend's own ``conv2d``
and ``im2col`` methods (``learntorch.backends.current``), the ones ``F.conv2d``
calls, never from a copy written here.  ``ConvExplorer.on_model(model, images)``
opens the trained-model view (``widgets/_feature_maps.py``): a layer's filters,
its feature maps for one digit and the receptive field of one output pixel.
"""
from html import escape

import numpy as np

from ._base import Widget
from . import _svg_grid as svg
from ._feature_maps import FeatureMapExplorer

CELL = 30        # pixels per cell of the input, kernel and output grids
MATRIX_ROWS = 9  # rows of the im2col matrix shown around the highlighted one


def _engine():
    # the engine's own pieces: the active backend and the geometry its conv methods take
    from learntorch import backends
    from learntorch.backends.geometry import Geometry, output_size
    return backends.current, Geometry, output_size


def default_image():
    """A handwritten 0 of the shipped 8x8 digits, as an (8, 8) tensor in [0, 1]."""
    from learntorch.datasets import Digits
    digits = Digits(train=False)
    first_zero = int(np.flatnonzero(digits.targets.numpy() == 0)[0])
    return digits[first_zero][0][0]


def default_kernel():
    """A 3x3 vertical-edge detector: left column -1, right column +1."""
    import learntorch as torch
    return torch.tensor([[-1., 0., 1.], [-1., 0., 1.], [-1., 0., 1.]])


def short(value):
    """A value in at most four characters, for a grid cell (the tooltip has it in full).

    >>> [short(v) for v in (3.0, -1.0, 0.9375, -0.75, 1.875, 12.4, -0.0625)]
    ['3', '-1', '.94', '-.75', '1.9', '12', '-.06']
    """
    value = float(value)
    if value.is_integer() and abs(value) < 1000:
        return str(int(value))
    if abs(value) >= 10:
        return str(round(value))
    for digits in (2, 1):
        text = f"{value:.{digits}g}"
        text = text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) else text
        if len(text) <= 4:
            break
    return text


def _as_2d(t, what):
    array = np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=np.float32)
    while array.ndim > 2 and array.shape[0] == 1:
        array = array[0]
    if array.ndim != 2:
        raise ValueError(f"ConvExplorer shows one channel: the {what} must be 2-D (or have leading "
                         f"sizes of 1), got shape {tuple(array.shape)}")
    return np.ascontiguousarray(array)


class ConvExplorer(Widget):
    """One channel convolved with one kernel, one output position at a time.

    * ``image`` / ``kernel`` -- 2-D float32 arrays (tensors are read once);
    * ``padding``, ``stride``, ``dilation`` -- the settings; ``set(...)`` changes them;
    * ``position`` -- the output pixel shown, counted row by row (``select``,
      ``step``, ``reset``); ``out_index`` is it as (row, column);
    * ``output()`` -- the whole output (the backend's ``conv2d``);
    * ``im2col_matrix()`` -- (Ho·Wo, kh·kw): row p is the window of output pixel p
      (the backend's ``im2col``);
    * ``taps()`` -- (kernel tap, padded-input pixel, value) of the current window;
    * ``multiply_add()`` -- that window's sum of products, as text.

    >>> explorer = ConvExplorer(padding=1)
    >>> explorer.output_shape, explorer.im2col_matrix().shape
    ((8, 8), (64, 9))
    """

    def __init__(self, image=None, kernel=None, padding=0, stride=1, dilation=1, position=0):
        self.image = _as_2d(default_image() if image is None else image, "image")
        self.kernel = _as_2d(default_kernel() if kernel is None else kernel, "kernel")
        self.padding, self.stride, self.dilation = 0, 1, 1
        self.position = 0
        self.set(padding=padding, stride=stride, dilation=dilation)
        self.select(position)

    @classmethod
    def on_model(cls, model, images, layer=None, channel=0, digit=0, pixel=None):
        """The trained-model view: filters, feature maps and receptive fields of ``model``'s
        convolution layers for ``images[digit]`` (see ``FeatureMapExplorer``).

        >>> import learntorch as torch
        >>> _ = torch.manual_seed(0)
        >>> net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU())
        >>> ConvExplorer.on_model(net, torch.rand(2, 1, 8, 8)).layer_names
        ['0']
        """
        return FeatureMapExplorer(model, images, layer=layer, channel=channel, digit=digit,
                                  pixel=pixel)

    # ---- state --------------------------------------------------------------------

    def set(self, padding=None, stride=None, dilation=None):
        """Change the settings (the output position is kept where it still fits).

        A setting whose window no longer fits in the padded image is refused with a
        ValueError that says what does fit; nothing changes then.
        """
        padding = self.padding if padding is None else int(padding)
        stride = self.stride if stride is None else int(stride)
        dilation = self.dilation if dilation is None else int(dilation)
        if padding < 0 or stride < 1 or dilation < 1:
            raise ValueError(f"padding must be >= 0, stride and dilation >= 1 (got padding={padding}, "
                             f"stride={stride}, dilation={dilation})")
        backend, Geometry, output_size = _engine()
        out = tuple(output_size(n, k, stride, dilation, padding, padding)
                    for n, k in zip(self.image.shape, self.kernel.shape))
        if min(out) < 1:
            reach = tuple(dilation * (k - 1) + 1 for k in self.kernel.shape)
            raise ValueError(f"a {self.kernel.shape[0]}x{self.kernel.shape[1]} kernel with dilation "
                             f"{dilation} spans {reach[0]}x{reach[1]} pixels: more than the padded image "
                             f"({self.image.shape[0] + 2 * padding}x{self.image.shape[1] + 2 * padding}); "
                             "use more padding or less dilation")
        self.padding, self.stride, self.dilation = padding, stride, dilation
        self.geometry = Geometry(self.image.shape, self.kernel.shape, (stride, stride),
                                 (dilation, dilation), (padding, padding), out)
        x = self.image[None, None]
        self._output = backend.conv2d(x, self.kernel[None, None], None, self.geometry, 1)[0, 0]
        cols = backend.im2col(x, self.geometry)[0, 0]                  # (kh, kw, Ho, Wo)
        self._matrix = np.asarray(cols).reshape(self.kernel.size, -1).T  # (Ho*Wo, kh*kw)
        self.position = min(self.position, self.positions - 1)
        self._refresh()

    @property
    def output_shape(self):
        return tuple(self.geometry.out)

    @property
    def positions(self):
        """How many output pixels (stops of the window) there are."""
        return self.output_shape[0] * self.output_shape[1]

    @property
    def out_index(self):
        """The current output pixel as (row, column)."""
        return divmod(self.position, self.output_shape[1])

    def select(self, position):
        """Show output pixel number ``position`` (0 .. positions - 1, row by row)."""
        position = int(position)
        if not 0 <= position < self.positions:
            raise IndexError(f"position {position} is out of range: the output is "
                             f"{self.output_shape[0]}x{self.output_shape[1]}, positions 0..{self.positions - 1}")
        self.position = position
        self._refresh()

    def step(self):
        """Slide to the next output pixel (after the last one: back to the first)."""
        self.select((self.position + 1) % self.positions)

    def reset(self):
        self.select(0)

    def output(self):
        """The whole (Ho, Wo) output of the convolution (the backend's ``conv2d``)."""
        return self._output.copy()

    def im2col_matrix(self):
        """(Ho·Wo, kh·kw): row p holds the pixels under the window of output pixel p."""
        return self._matrix.copy()

    def taps(self):
        """For each kernel tap (i, j): ((i, j), (row, col) in the padded image, pixel value)."""
        oh, ow = self.out_index
        row = self._matrix[self.position]
        kh, kw = self.kernel.shape
        return [((i, j), (oh * self.stride + i * self.dilation, ow * self.stride + j * self.dilation),
                 float(row[i * kw + j])) for i in range(kh) for j in range(kw)]

    def value(self):
        """The output pixel at the current position."""
        return float(self._output[self.out_index])

    def multiply_add(self):
        """``pixel·weight + ... = output`` for the current window."""
        def factor(value):      # a negative factor in brackets: 0.5·(-1)
            text = svg.number(value)
            return f"({text})" if value < 0 else text
        terms = " + ".join(f"{factor(v)}·{factor(float(self.kernel[i, j]))}" for (i, j), _, v in self.taps())
        return f"{terms} = {svg.number(self.value())}"

    def formula(self):
        """The output-size formula with this explorer's numbers."""
        (h, w), (kh, kw) = self.image.shape, self.kernel.shape
        p, s, d = self.padding, self.stride, self.dilation
        ho, wo = self.output_shape
        return (f"Ho = ({h} + 2·{p} - {d}·({kh} - 1) - 1) // {s} + 1 = {ho}, "
                f"Wo = ({w} + 2·{p} - {d}·({kw} - 1) - 1) // {s} + 1 = {wo}")

    def __repr__(self):
        (h, w), (kh, kw), (ho, wo) = self.image.shape, self.kernel.shape, self.output_shape
        return (f"ConvExplorer(input {h}x{w}, kernel {kh}x{kw}, padding {self.padding}, "
                f"stride {self.stride}, dilation {self.dilation} -> output {ho}x{wo}, "
                f"position {self.position} = {self.out_index}: {svg.number(self.value())})")

    # ---- picture ------------------------------------------------------------------

    def static_svg(self):
        """Padded input with the window, kernel, output with the pixel, and the im2col matrix."""
        p = self.padding
        h, w = self.image.shape
        kh, kw = self.kernel.shape
        ho, wo = self.output_shape
        window = {pixel: tap for tap, pixel, _ in self.taps()}
        body = [svg.text(20, 22, f"input {h}x{w} (padding {p}), kernel {kh}x{kw}, stride {self.stride}, "
                                 f"dilation {self.dilation} -> output {ho}x{wo}", size=13, weight="bold")]
        top = 58
        # the padded input: border cells grey, the taps of the window outlined in red
        x0 = 20
        body.append(svg.text(x0, top - 8, "input (padded)" if p else "input"))
        for r in range(h + 2 * p):
            for c in range(w + 2 * p):
                inside = p <= r < p + h and p <= c < p + w
                value = self.image[r - p, c - p] if inside else 0.0
                tap = window.get((r, c))
                body.append(svg.cell(x0 + c * CELL, top + r * CELL, short(value), size=CELL,
                                     fill=("#ffe0b2" if tap else "white") if inside else "#e6e6e6",
                                     stroke=svg.SELECTED if tap else "#999",
                                     stroke_width=2.5 if tap else 1,
                                     title=f"pixel ({r - p}, {c - p}) = {svg.number(float(value))}" if inside
                                     else "padding: 0"))
        # the kernel
        kx = x0 + (w + 2 * p) * CELL + 36
        body.append(svg.text(kx, top - 8, "kernel"))
        for i in range(kh):
            for j in range(kw):
                body.append(svg.cell(kx + j * CELL, top + i * CELL, short(self.kernel[i, j]),
                                     size=CELL, fill="#dbe9f6", title=f"weight ({i}, {j})"))
        # the output, the current pixel outlined
        ox = kx + kw * CELL + 36
        body.append(svg.text(ox, top - 8, "output"))
        for r in range(ho):
            for c in range(wo):
                current = (r, c) == self.out_index
                body.append(svg.cell(ox + c * CELL, top + r * CELL, short(self._output[r, c]),
                                     size=CELL, fill="#ffe0b2" if current else "white",
                                     stroke=svg.SELECTED if current else "#999",
                                     stroke_width=2.5 if current else 1,
                                     title=f"output ({r}, {c}) = {svg.number(float(self._output[r, c]))}"))
        grid_bottom = top + max(h + 2 * p, kh, ho) * CELL
        sum_line = f"output {self.out_index} = " + self.multiply_add()
        body.append(svg.text(x0, grid_bottom + 22, sum_line, size=11))
        # the im2col matrix: a window of rows around the highlighted one
        my = grid_bottom + 62
        rows = svg.window(self.positions, self.position, MATRIX_ROWS)
        matrix_line = (f"im2col matrix: {self.positions} rows (one per output pixel) x {kh * kw} columns "
                       f"(one per kernel tap); rows {rows.start}..{rows.stop - 1} shown")
        body.append(svg.text(x0, my - 10, matrix_line))
        mx = x0 + 90
        for k, row in enumerate(rows):
            y = my + k * CELL
            current = row == self.position
            body.append(svg.text(mx - 8, y + CELL / 2 + 4, f"{row} {divmod(row, wo)}", size=10, anchor="end",
                                 fill=svg.SELECTED if current else "#555"))
            for col in range(kh * kw):
                body.append(svg.cell(mx + col * CELL, y, short(self._matrix[row, col]), size=CELL,
                                     fill="#ffe0b2" if current else "white",
                                     stroke=svg.SELECTED if current else "#bbb",
                                     stroke_width=2 if current else 1,
                                     title=f"row {row}, tap {divmod(col, kw)}"))
        kcx = mx + kh * kw * CELL + 40                   # the kernel as a column: matrix @ column
        body.append(svg.text(kcx - 22, my + len(rows) * CELL / 2 + 4, "@", size=16))
        for col in range(min(kh * kw, len(rows))):
            body.append(svg.cell(kcx, my + col * CELL, short(self.kernel.flat[col]), size=CELL,
                                 fill="#dbe9f6"))
        # the text lines are as wide as their characters (monospace: about 0.62 em each)
        width = max(ox + wo * CELL, kcx + CELL, x0 + 6.9 * len(sum_line), x0 + 7.5 * len(matrix_line)) + 20
        height = my + max(len(rows), min(kh * kw, len(rows))) * CELL + 16
        return svg.document(width, height, body)

    # ---- live view ----------------------------------------------------------------

    def _build_view(self):
        import ipywidgets as w

        self._play = w.Play(value=self.position, min=0, max=self.positions - 1, interval=400,
                            description="play", tooltip="slide the window over every output position")
        self._slider = w.IntSlider(value=self.position, min=0, max=self.positions - 1,
                                   description="position", tooltip="which output pixel (row by row)")
        w.jslink((self._play, "value"), (self._slider, "value"))
        self._settings = {
            name: w.IntSlider(value=getattr(self, name), min=low, max=high, description=name,
                              continuous_update=False, tooltip=tip)
            for name, low, high, tip in [
                ("padding", 0, 3, "zeros around the image"),
                ("stride", 1, 3, "how far the window jumps"),
                ("dilation", 1, 3, "space between the kernel's taps")]}
        self._picture, self._text = w.HTML(), w.HTML()
        self._slider.observe(self._on_position, names="value")
        for name, control in self._settings.items():
            control.observe(self._on_setting(name), names="value")
        self._refresh()
        return w.VBox([w.HBox([self._play, self._slider]), w.HBox(list(self._settings.values())),
                       self._picture, self._text])

    _picture = None
    _updating = False

    def _on_position(self, change):
        if not self._updating:
            self.select(change["new"])

    def _on_setting(self, name):
        def handle(change):
            if self._updating:
                return
            try:
                self.set(**{name: change["new"]})
            except ValueError as error:     # refused: the control goes back, the reason shows
                self._refresh()
                self._text.value += f"<p style='color: #b00020'>{escape(str(error))}</p>"
        return handle

    def _refresh(self):
        """Bring the live view (if built) in line with the state: controls, picture, text."""
        if self._picture is None:
            return
        self._updating = True
        try:
            for control in (self._play, self._slider):
                control.max = self.positions - 1
                control.value = self.position
            for name, control in self._settings.items():
                control.value = getattr(self, name)
        finally:
            self._updating = False
        self._picture.value = self.static_svg()
        self._text.value = "<pre>" + escape(self.formula() + "\n" + f"output {self.out_index} = "
                                            + self.multiply_add()) + "</pre>"
