"""What a trained CNN's convolution layers look at: filters, feature maps, receptive fields.

Pick a convolution layer and one of its output channels: the view shows that
channel's filter (one small kernel per input channel), the feature map it makes
from one digit, and -- for one pixel of that feature map -- its **receptive
field**: the patch of the input image that pixel depends on.  Each convolution
or pooling layer on the way widens the patch by ``dilation·(kernel - 1)`` steps of
its input, and each stride makes every later step that many input pixels wide.

Everything is read from the engine: the filters are the layer's ``weight``, the
feature maps come from a forward pass of the model itself with a forward hook on
the layer (in eval mode, without a graph), and the receptive field from the
``kernel_size``/``stride``/``padding``/``dilation`` of the modules the model runs
before it.

    >>> import learntorch as torch
    >>> _ = torch.manual_seed(0)
    >>> net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
    ...                           torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 8, 3, padding=1))
    >>> maps = FeatureMapExplorer(net, torch.rand(3, 1, 8, 8), layer="3", channel=5, pixel=(1, 2))
    >>> maps
    FeatureMapExplorer(layer '3' Conv2d(4, 8), channel 5 of 8, digit 0 of 3, feature map 4x4, pixel (1, 2): receptive field rows 0..6, cols 1..7)
    >>> maps.filters().shape
    (4, 3, 3)
"""
import numpy as np

from ._base import Widget
from . import _svg_grid as svg
from ._heatmap import heatmap

PIXEL = 22   # screen pixels per image pixel of the digit and the feature map
TAP = 12     # screen pixels per filter tap
CHAR = 7.5   # about the width of one character of a label, in screen pixels


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def window_layers(model):
    """(name, module) of every module of ``model`` that slides a window, in registration
    order (convolutions and poolings: what widens a receptive field)."""
    return [(name, m) for name, m in model.named_modules()
            if name and hasattr(m, "kernel_size") and hasattr(m, "stride")]


def receptive_field(layers, pixel, image_size):
    """The input rows and columns ((r0, r1), (c0, c1), inclusive, clipped to the image) that
    output ``pixel`` of the last of ``layers`` (modules that slide windows) depends on.

    Walking from the input: a pixel of layer ``l`` covers ``size`` input pixels and two
    neighbours are ``jump`` input pixels apart; its first input pixel is ``start + i·jump``.

    >>> import learntorch as torch
    >>> conv = torch.nn.Conv2d(1, 1, 3, padding=1)
    >>> receptive_field([conv, torch.nn.MaxPool2d(2), conv], (0, 0), (8, 8))
    ((0, 4), (0, 4))
    """
    ranges = []
    for axis in range(2):
        size, jump, start = 1, 1, 0
        for layer in layers:
            k, s = _pair(layer.kernel_size)[axis], _pair(layer.stride or layer.kernel_size)[axis]
            d = _pair(getattr(layer, "dilation", 1))[axis]
            p = _pair(layer.padding)[axis] if not isinstance(layer.padding, str) else d * (k - 1) // 2
            start -= p * jump
            size += d * (k - 1) * jump
            jump *= s
        first = start + pixel[axis] * jump
        ranges.append((max(first, 0), min(first + size - 1, image_size[axis] - 1)))
    return tuple(ranges)


class FeatureMapExplorer(Widget):
    """A trained model's convolution layers, one layer, channel, digit and pixel at a time.

    * ``layer_names`` -- the model's ``Conv2d`` layers (names as in ``named_modules``);
    * ``layer`` / ``channel`` / ``digit`` / ``pixel`` -- what is shown; change with
      ``select(layer=..., channel=..., digit=..., pixel=...)``;
    * ``filters()`` -- (in_channels, kh, kw): the chosen channel's kernels (the weight);
    * ``feature_map()`` -- (Ho, Wo): that channel's output for the chosen digit;
    * ``field()`` -- the receptive field of ``pixel``: ((r0, r1), (c0, c1)).
    """

    def __init__(self, model, images, layer=None, channel=0, digit=0, pixel=None):
        import learntorch as torch

        self.model = model
        self.images = images if images.ndim == 4 else images.unsqueeze(1)   # (N, C, H, W)
        self.convs = {name: m for name, m in model.named_modules() if isinstance(m, torch.nn.Conv2d)}
        if not self.convs:
            raise ValueError("the model has no Conv2d layer: nothing to show")
        self.layer_names = list(self.convs)
        self._maps = {}   # (layer, digit) -> the layer's output for that digit, (C, Ho, Wo)
        self.layer, self.channel, self.digit, self.pixel = self.layer_names[0], 0, 0, (0, 0)
        self.select(layer=layer if layer is not None else self.layer_names[0], channel=channel,
                    digit=digit, pixel=pixel if pixel is not None else (0, 0))

    # ---- state --------------------------------------------------------------------

    def select(self, layer=None, channel=None, digit=None, pixel=None):
        """Show another layer, channel, digit or feature-map pixel (kept where it still fits)."""
        layer = self.layer if layer is None else str(layer)
        if layer not in self.convs:
            raise KeyError(f"no Conv2d layer named {layer!r}; the layers are {self.layer_names}")
        channels = self.convs[layer].out_channels
        digit = self.digit if digit is None else int(digit)
        if not 0 <= digit < len(self.images):
            raise IndexError(f"digit {digit} is out of range: there are {len(self.images)} images")
        if channel is None:                      # another layer: keep the channel where it fits
            channel = min(self.channel, channels - 1)
        elif not 0 <= int(channel) < channels:
            raise IndexError(f"channel {channel} is out of range: layer {layer!r} has {channels} "
                             f"output channels (0..{channels - 1})")
        self.layer, self.channel, self.digit = layer, int(channel), digit
        ho, wo = self.feature_map().shape
        pixel = self.pixel if pixel is None else tuple(int(i) for i in pixel)
        self.pixel = (min(max(pixel[0], 0), ho - 1), min(max(pixel[1], 0), wo - 1))
        self._refresh()

    def _layer_output(self):
        key = (self.layer, self.digit)
        if key not in self._maps:
            import learntorch as torch

            seen = []
            hook = self.convs[self.layer].register_forward_hook(lambda m, i, out: seen.append(out))
            was_training = self.model.training
            self.model.eval()
            try:
                with torch.no_grad():
                    self.model(self.images[self.digit:self.digit + 1])
            finally:
                hook.remove()
                self.model.train(was_training)
            self._maps[key] = seen[0][0].detach().numpy().copy()
        return self._maps[key]

    def feature_map(self):
        """(Ho, Wo): the chosen channel of the layer's output for the chosen digit."""
        return self._layer_output()[self.channel]

    def filters(self):
        """(in_channels, kh, kw): the kernels the chosen channel applies to each input channel."""
        return self.convs[self.layer].weight[self.channel].detach().numpy().copy()

    def field(self):
        """Receptive field of ``pixel``: input ((row0, row1), (col0, col1)), inclusive."""
        layers = []
        for name, module in window_layers(self.model):
            layers.append(module)
            if name == self.layer:
                break
        return receptive_field(layers, self.pixel, tuple(self.images.shape[-2:]))

    def __repr__(self):
        conv = self.convs[self.layer]
        (r0, r1), (c0, c1) = self.field()
        ho, wo = self.feature_map().shape
        return (f"FeatureMapExplorer(layer {self.layer!r} Conv2d({conv.in_channels}, {conv.out_channels}), "
                f"channel {self.channel} of {conv.out_channels}, digit {self.digit} of {len(self.images)}, "
                f"feature map {ho}x{wo}, pixel {self.pixel}: receptive field rows {r0}..{r1}, cols {c0}..{c1})")

    # ---- picture ------------------------------------------------------------------

    def static_svg(self):
        """The digit with the receptive field, the chosen filter(s), and the feature map."""
        image = self.images[self.digit].detach().numpy()
        (r0, r1), (c0, c1) = self.field()
        conv = self.convs[self.layer]
        ho, wo = self.feature_map().shape
        body = [svg.text(20, 22, f"layer {self.layer!r}: Conv2d({conv.in_channels}, {conv.out_channels}), "
                                 f"channel {self.channel} of {conv.out_channels}, digit {self.digit} of "
                                 f"{len(self.images)}", size=12, weight="bold"),
                svg.text(20, 40, f"feature map {ho}x{wo}, pixel {self.pixel}: receptive field rows {r0}..{r1}, "
                                 f"cols {c0}..{c1} of the input", size=12)]
        top, x = 78, 20
        label = f"digit {self.digit} (input channel 0)"
        body.append(svg.text(x, top - 10, label))
        body.append(heatmap(image[0], x, top, PIXEL, scale=float(image.max()) or 1.0, gray=True,
                            outline=(r0, c0, r1, c1),
                            title=f"receptive field of pixel {self.pixel}: rows {r0}..{r1}, cols {c0}..{c1}"))
        x += max(image.shape[-1] * PIXEL, len(label) * CHAR) + 30
        filters = self.filters()
        scale = float(np.abs(filters).max())
        per_row = 8
        kh, kw = filters.shape[1:]
        tap = PIXEL if len(filters) <= 2 else TAP      # a first layer's lone kernel: as large as the digit's pixels
        label = f"filter of channel {self.channel}: {len(filters)} kernel{'s' if len(filters) > 1 else ''}"
        body.append(svg.text(x, top - 10, label))
        for k, kernel in enumerate(filters):
            fx = x + (k % per_row) * (kw * tap + 6)
            fy = top + (k // per_row) * (kh * tap + 6)
            body.append(heatmap(kernel, fx, fy, tap, scale=scale, title=f"input channel {k}"))
        x += max(min(len(filters), per_row) * (kw * tap + 6), len(label) * CHAR) + 30
        fmap = self.feature_map()
        body.append(svg.text(x, top - 10, f"feature map ({ho}x{wo})"))
        body.append(heatmap(fmap, x, top, PIXEL, outline=self.pixel * 2,
                            title=f"channel {self.channel}, pixel {self.pixel} = {fmap[self.pixel]:.3g}"))
        rows_of_filters = -(-len(filters) // per_row) * (kh * tap + 6)
        height = top + max(image.shape[-2] * PIXEL, ho * PIXEL, rows_of_filters) + 30
        body.append(svg.text(20, height - 10, "red frame: the output pixel and the input patch it sees "
                                              "(its receptive field); blue < 0 < red", size=11, fill="#555"))
        return svg.document(max(x + max(wo * PIXEL, 150) + 20, 700), height, body)

    # ---- live view ----------------------------------------------------------------

    _picture = None
    _updating = False

    def _build_view(self):
        import ipywidgets as w

        ho, wo = self.feature_map().shape
        self._controls = {
            "layer": w.Dropdown(options=self.layer_names, value=self.layer, description="layer"),
            "channel": w.IntSlider(value=self.channel, min=0, max=self.convs[self.layer].out_channels - 1,
                                   description="channel"),
            "digit": w.IntSlider(value=self.digit, min=0, max=len(self.images) - 1, description="digit"),
            "row": w.IntSlider(value=self.pixel[0], min=0, max=ho - 1, description="row"),
            "col": w.IntSlider(value=self.pixel[1], min=0, max=wo - 1, description="col"),
        }
        self._picture = w.HTML()
        for control in self._controls.values():
            control.observe(self._on_control, names="value")
        self._refresh()
        c = self._controls
        return w.VBox([w.HBox([c["layer"], c["channel"], c["digit"]]), w.HBox([c["row"], c["col"]]),
                       self._picture])

    def _on_control(self, change):
        if self._updating:
            return
        c = self._controls
        self.select(layer=c["layer"].value, channel=c["channel"].value, digit=c["digit"].value,
                    pixel=(c["row"].value, c["col"].value))

    def _refresh(self):
        if self._picture is None:
            return
        self._updating = True
        try:
            c = self._controls
            ho, wo = self.feature_map().shape
            c["channel"].max = self.convs[self.layer].out_channels - 1
            c["row"].max, c["col"].max = ho - 1, wo - 1
            c["layer"].value, c["channel"].value, c["digit"].value = self.layer, self.channel, self.digit
            c["row"].value, c["col"].value = self.pixel
        finally:
            self._updating = False
        self._picture.value = self.static_svg()
